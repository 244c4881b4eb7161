// trnsim collective: runs one collective operation on a multi-chip platform and reports its time, algorithm and bus
// bandwidth (nccl-tests conventions, docs/collectives.md) and the link utilisation.
#pragma once
#include <string>
#include <vector>

#include "apps/args.h"
#include "platforms/config/platform_config.h"

namespace trnsim::app {

// A size: bytes, or with a suffix K/KiB, M/MiB, G/GiB (powers of 1024); a usage error naming `option` otherwise.
uint64_t parse_size(const std::string& option, const std::string& text);
// The server / cluster platform of --platform NAME or --config FILE (default trn2-ultraserver-64) with `sets`
// applied; usage_error for a bad one or a single chip ("'trn2' is a single chip; <who> a server or cluster ...").
platform::platform_config load_multichip(const args& a, const std::vector<std::string>& sets, const std::string& who);

// The reverse, for the commands that simulate one chip (run, sweep points): usage_error "<where>: a platform of N
// chips; <who> simulates one chip: use trnsim collective <platform_option> (a collective) or trnsim train ..." for a
// server or cluster (they used to simulate its first chip quietly).
void require_single_chip(const platform::platform_config& cfg, const std::string& where, const std::string& who,
                         const std::string& platform_option);

extern const char* COLLECTIVE_USAGE;
extern const option_set COLLECTIVE_OPTIONS;
// Throws usage_error for bad input (the caller exits 2).
int cmd_collective(const args& a);

}  // namespace trnsim::app

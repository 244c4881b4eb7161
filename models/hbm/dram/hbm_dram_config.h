// Validated configuration of the whole HBM of a chip (every stack, channel and pseudo-channel), shared by the
// SystemC wrapper (models/hbm/hbm_dram.h), the plain-C++ dram_system and the trace front end.
// JSON (all keys optional except memspec):
//   { "memspec": { ...see configs/memspecs/hbm3.json... }, "stacks": 4, "mapping": "sid-ro-ba-co:2-st-ch-pc-co:3-bg",
//     "scheduler": "fr_fcfs" | "fcfs", "page_policy": "closed_adaptive" | "open" | "closed",
//     "refresh": "per_bank" | "all_bank" | "none", "read_queue_depth": 32, "write_queue_depth": 32,
//     "write_high_watermark": 24, "write_low_watermark": 8 }
// Plain C++ (no SystemC).
#pragma once
#include <cstdint>
#include <string>

#include "models/hbm/dram/controller/controller_config.h"
#include "models/hbm/dram/memspec.h"
#include "tlm/config/config_node.h"

namespace trnsim::hbm {

struct hbm_dram_config {
    static constexpr uint32_t DEFAULT_STACKS = 1;

    memspec spec;
    uint32_t stacks = DEFAULT_STACKS;
    std::string mapping;  // empty: default_mapping(spec)
    controller_config ctrl;
};

// The default mapping: stack ID and row on top, then the bank, the upper column bits, then stack / channel /
// pseudo-channel interleaving at 1 KiB (for 32-byte bursts), the lower three column bits and the bank group at the
// bottom, so that a sequential stream alternates bank groups (tCCD_S instead of tCCD_L) and stays in one row.
std::string default_mapping(const memspec& m);

// Parses and validates; errors name the full key path (e.g. "chip.hbm.write_low_watermark: ...").
hbm_dram_config parse_hbm_dram_config(const config::node& n);

// Checks a filled config (mapping, queue depths, watermarks, refresh support); throws config::config_error naming
// `where` (the path of the config object).
void validate_hbm_dram_config(const hbm_dram_config& c, const std::string& where);

} // namespace trnsim::hbm

// Running a program file (program_file.h) on a single-chip platform: host initialisation, the cores' streams, the
// result checks.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "platforms/config/platform_config.h"
#include "testbench/workloads/program/program_file.h"
#include "testbench/sim_run.h"

namespace trnsim::tb {

struct program_result {
    double sim_ns = 0, wall_s = 0;
    uint64_t te_instructions = 0, dma_instructions = 0;
    double dma_bytes = 0;
    bool checked = false, pass = false;
    uint64_t checks = 0, failed = 0;
    std::string first_failure;
    std::vector<std::string> digests;  // FNV-1a of each checked region, in check order (determinism)
    std::map<std::string, double> stats;
};

// `check` false (--no-check): the program's "check" entries are not compared (the result says so).
program_result run_program(const platform::platform_config& cfg, const program_file& p, const sim_options& opt,
                           bool check = true);

} // namespace trnsim::tb

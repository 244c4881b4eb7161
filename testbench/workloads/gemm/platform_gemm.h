// A GEMM on every chosen chip of a multi-chip platform whose members are full chips (chips.model: "full"): SPMD,
// the same shape on every chip, each chip with operands of its own seed, all chips simulated together in one
// platform (their HBM, DMA, NoC and links are the platform's), every chip's C checked bit for bit against the golden
// GEMM of its own operands. Chip c's operands come from the seed g.seed + c * 0x9e3779b97f4a7c15 (mod 2^64), so
// chip 0's GEMM is the single-chip run of the same seed.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "platforms/config/platform_config.h"
#include "testbench/workloads/gemm/gemm_run.h"

namespace trnsim::tb {

struct platform_gemm_result {
    std::vector<uint32_t> chips;          // the chips that ran the GEMM, ascending
    std::vector<gemm_result> per_chip;    // one per entry of `chips`: its time, figures, energy and check
    double sim_ns = 0;                    // first instruction to the last completion on any chip
    double wall_s = 0, setup_wall_s = 0, operands_wall_s = 0, check_wall_s = 0;
    bool functional = true;
    bool checked = false, pass = false;   // every chip checked / every chip bit-exact
    uint64_t mismatches = 0;              // over all chips
    double flops = 0, achieved_tflops = 0, peak_tflops = 0;  // the chosen chips together
    double energy_j = 0;                  // the chosen chips' energy
};

// The seed of chip c's operands (chip 0: g.seed).
uint64_t chip_seed(uint64_t seed, uint32_t chip);

// Throws std::invalid_argument naming the chip if a chosen chip is not a full chip or does not exist.
platform_gemm_result run_platform_gemm(const platform::platform_config& cfg, const gemm_spec& g,
                                       const std::vector<uint32_t>& chips, const gemm_options& opt);

} // namespace trnsim::tb

// A GEMM on every chosen chip of a multi-chip platform whose members are full chips (chips.model: "full"): SPMD,
// the same shape on every chip, each chip with operands of its own seed, all chips simulated together in one
// platform (their HBM, DMA, NoC and links are the platform's), every chip's C checked bit for bit against the golden
// GEMM of its own operands. Chip c's operands come from the seed g.seed + c * 0x9e3779b97f4a7c15 (mod 2^64), so
// chip 0's GEMM is the single-chip run of the same seed.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/collective/schedule.h"
#include "platforms/cluster/cluster.h"
#include "platforms/config/platform_config.h"
#include "testbench/observe/overlap_meter.h"
#include "testbench/workloads/gemm/gemm_run.h"

namespace trnsim::tb {

// A collective run at the same time on the same chips (every chip of the platform): lowered as trnsim collective
// lowers it (collective/lowering.h), its buffers in HBM after the GEMM's C, its staging slots in SBUF above the
// GEMM's buffers, its semaphores after the GEMM's, its DMA queues after the GEMM's on every core.
struct concurrent_collective {
    collective::params p;   // op, algorithm, dtype, bytes
    bool check = true;      // functional runs: every chip's output against the reference executor
    uint64_t seed = 1;      // inputs (collective fill_input)
    // What runs: both, or one of them alone with the same layout, SBUF split and queues (the interference
    // measurement compares the three).
    enum class part : uint8_t { both, gemm_alone, collective_alone } run = part::both;
};

struct collective_outcome {
    double sim_ns = 0;      // time 0 to the completion of the collective's last instruction on any chip
    double algbw_gbps = 0, busbw_gbps = 0;
    uint64_t steps = 0, dma_instructions = 0, vector_instructions = 0, remote_signals = 0;
    bool checked = false, pass = false;
    uint64_t mismatches = 0;
    std::string first_mismatch;
};

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
    // Every link direction's and network port's utilisation over the run (to the last completion).
    std::vector<platform::multichip_platform::utilisation> util;
    // The DMA queues of every chip that ran (all of them with a concurrent collective), over the run: the mean
    // number of descriptors in an engine (submitted, not yet landed) and the mean time a descriptor waited, once
    // eligible, for its first burst (behind older descriptors of the engine's FIFO, or for a free slot).
    double dma_queue_depth = 0, dma_wait_ns = 0;
    bool concurrent = false;              // a collective ran at the same time (then per_chip[i].sim_ns is the
    collective_outcome collective;        // GEMM's own completion on that chip, and `collective` the collective's)
    // Both together: the chips' and links' figures over the overlap, from time 0 until the first of the two is done.
    std::optional<overlap_meter::figures> overlap;
};

// The seed of chip c's operands (chip 0: g.seed).
uint64_t chip_seed(uint64_t seed, uint32_t chip);

// Throws std::invalid_argument naming the chip if a chosen chip is not a full chip or does not exist.
// `conc` (optional): a collective at the same time, which needs every chip of the platform to be a full chip.
// `on_platform` (optional): called once the platform is built, before time 0 (observers attach here: a timeline gives
// each full chip a track group of its own, with its links).
platform_gemm_result run_platform_gemm(const platform::platform_config& cfg, const gemm_spec& g,
                                       const std::vector<uint32_t>& chips, const gemm_options& opt,
                                       const concurrent_collective* conc = nullptr,
                                       const std::function<void(platform::multichip_platform&)>& on_platform = {});

} // namespace trnsim::tb

// Runs a GEMM on a single-chip platform end to end: host loads A^T and B into HBM, the cores run the compiled
// programs, the host reads C back and the scoreboard checks every element against the golden GEMM.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "models/energy/energy_model.h"
#include "models/core/instruction.h"
#include "platforms/config/platform_config.h"
#include "testbench/workloads/gemm/gemm.h"
#include "testbench/sim_run.h"
#include "tlm/stats.h"

namespace trnsim::platform {
class chip;
}

namespace trnsim::tb {

// The DMA engines' queue statistics summed over engines (queued_ns, wait_ns, descriptors of each), and the means
// the reports give.
struct dma_queue_totals {
    double queued_ns = 0, wait_ns = 0, descriptors = 0, engines = 0;
    void add(double engine_queued_ns, double engine_wait_ns, double engine_descriptors) {
        queued_ns += engine_queued_ns;
        wait_ns += engine_wait_ns;
        descriptors += engine_descriptors;
        ++engines;
    }
    // Mean descriptors in an engine over `window_ns`.
    double depth(double window_ns) const { return engines > 0 && window_ns > 0 ? queued_ns / (engines * window_ns) : 0; }
    double mean_wait_ns() const { return descriptors > 0 ? wait_ns / descriptors : 0; }
};

struct gemm_result {
    gemm_spec spec;
    gemm_tiling tiling;
    double sim_ns = 0;                 // first instruction to last completion
    double wall_s = 0;                 // simulation only (not data generation or checking)
    double setup_wall_s = 0;           // compiling the GEMM, building and elaborating the chip
    double operands_wall_s = 0;        // generating A and B and loading them into HBM (functional runs)
    double check_wall_s = 0;           // reading C back, the golden GEMM and the comparison
    double flops = 0;
    double achieved_tflops = 0, peak_tflops = 0;
    double te_utilisation = 0;         // useful MACs / (array MACs per cycle * cycles * cores)
    double te_stream_utilisation = 0;  // useful MACs / capacity of the cycles the array streamed
    double hbm_bytes = 0, hbm_gbps = 0, hbm_peak_gbps = 0;
    double dma_bytes = 0, dma_gbps = 0, dma_peak_gbps = 0;
    // The DMA queues over the run: mean descriptors in an engine (submitted, not yet landed) and the mean time a
    // descriptor waited, once eligible, for its first burst (from the sums in dma_queues).
    double dma_queue_depth = 0, dma_wait_ns = 0;
    dma_queue_totals dma_queues;
    double min_time_compute_ns = 0, min_time_hbm_ns = 0;  // roofline bounds
    bool functional = true;            // false: timing-only run (no data)
    bool checked = false, pass = false;
    uint64_t mismatches = 0;           // elements whose bits differ from the golden GEMM
    std::string first_mismatch;
    double max_abs_err = 0, max_rel_err = 0;  // vs FP64 on sampled elements (the FP32 accumulation's own error)
    uint64_t error_samples = 0;
    energy::breakdown energy;          // chip.energy applied to the run's activity
    double tflops_per_w = 0;           // achieved TFLOP/s per average watt
    double arithmetic_intensity = 0;   // FLOPs per byte of actual HBM traffic
    std::string c_digest;              // FNV-1a of C's bytes (functional runs): the result's fingerprint
    std::map<std::string, double> stats;
    std::map<std::string, stats::group::meta> stat_meta;  // unit and description of every stat
};

struct gemm_options {
    bool check = true;
    sim_options sim;
    // Observers (timeline, waveforms): called once the chip is built (before time 0; attach callbacks, sc_trace
    // signals here) and once the run has finished (the chip still exists; write and close files here).
    std::function<void(platform::chip&)> on_built, on_finished;
};

gemm_result run_gemm(const platform::platform_config& cfg, const gemm_spec& g, const gemm_options& opt);

// The pieces of a GEMM run on one chip, shared by run_gemm and the platform runs (platform_gemm.h).
// Host operands: A^T and B, random in [-1, 1) quantised to the input type (g.seed), as floats and as raw bytes.
struct gemm_operands {
    std::vector<uint8_t> a_raw, b_raw;
    std::vector<float> at, b;
    std::vector<uint8_t> c0_raw;  // c_accumulate: C's value before the GEMM (seeded, dense M x N in c_type)
    std::vector<float> c0;
};
gemm_operands make_operands(const gemm_spec& g);
// Loads the operands (ops null: timing only, nothing stored) into the chip's HBM and the compiled programs into its
// cores, with end-to-end DMA checksums on the operand loads when chip.core.dma.checksum is on.
void load_gemm(platform::chip& chip, const gemm_layout& layout, std::vector<core::core_program> programs,
               const gemm_operands* ops);
// The roofline bounds of a GEMM on a chip: its FLOPs at the chip's dense peak, its operands' and result's bytes at
// the HBM's bandwidth (ns). Memory-bound when the second is at least the first.
struct gemm_bounds {
    double compute_ns = 0, hbm_ns = 0;
    bool memory_bound() const { return hbm_ns >= compute_ns; }
};
gemm_bounds bounds_of(const gemm_spec& g, const gemm_layout& layout, const platform::chip_config& cc);
// Fills r's figures (utilisation, bandwidths, bounds, energy) from r.stats (the stats of chip `chip`, e.g. "chip0")
// and r.sim_ns.
void gemm_figures(gemm_result& r, const platform::chip_config& cc, const gemm_layout& layout, const std::string& chip);
// Reads C back (functional runs: ops non-null), its digest, and with `check` compares every element with the golden
// GEMM and samples the error against FP64.
void check_gemm(gemm_result& r, platform::chip& chip, const gemm_layout& layout, const gemm_operands* ops, bool check,
                double progress_after_s);

} // namespace trnsim::tb

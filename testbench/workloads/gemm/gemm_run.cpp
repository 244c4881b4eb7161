#include "testbench/chip_probe.h"
#include "testbench/workloads/gemm/gemm_run.h"

#include <chrono>
#include <cmath>
#include <cstring>

#include "models/dma/dma_checksum.h"
#include "platforms/single_chip/chip.h"
#include "testbench/verification/golden/golden_gemm.h"
#include "testbench/observe/energy_activity.h"
#include "testbench/workloads/program/program.h"
#include "testbench/stimulus.h"

namespace trnsim::tb {

namespace {
using wall_clock = std::chrono::steady_clock;
double since(wall_clock::time_point t) { return std::chrono::duration<double>(wall_clock::now() - t).count(); }
} // namespace

namespace {
// The rows x cols row-major elements of `raw` (es bytes each) stored cols x rows.
std::vector<uint8_t> transposed(const std::vector<uint8_t>& raw, uint64_t rows, uint64_t cols, uint64_t es) {
    std::vector<uint8_t> out(raw.size());
    for (uint64_t r = 0; r < rows; ++r)
        for (uint64_t c = 0; c < cols; ++c) std::memcpy(&out[(c * rows + r) * es], &raw[(r * cols + c) * es], es);
    return out;
}
} // namespace

gemm_operands make_operands(const gemm_spec& g) {
    gemm_operands o;
    o.at = random_tensor(g.dtype, g.k * g.m, g.seed, o.a_raw);
    o.b = random_tensor(g.dtype, g.k * g.n, g.seed * 7919 + 1, o.b_raw);
    // The same values in the layouts the spec stores (A as M x K, B as N x K).
    const uint64_t es = numerics::size_of(g.dtype);
    if (g.a_rows) o.a_raw = transposed(o.a_raw, g.k, g.m, es);
    if (g.b_cols) o.b_raw = transposed(o.b_raw, g.k, g.n, es);
    if (g.c_accumulate) o.c0 = random_tensor(g.c_type, g.m * g.n, g.seed * 104729 + 3, o.c0_raw);
    return o;
}

void load_gemm(platform::chip& chip, const gemm_layout& layout, std::vector<core::core_program> programs,
               const gemm_operands* ops) {
    const auto& cc = chip.config();
    if (ops) {
        chip.host_write(layout.a_addr, ops->a_raw.data(), ops->a_raw.size());
        chip.host_write(layout.b_addr, ops->b_raw.data(), ops->b_raw.size());
        if (!ops->c0_raw.empty()) chip.host_write(layout.c_addr, ops->c0_raw.data(), ops->c0_raw.size());
    }
    // End-to-end checksums: every load from A^T or B carries the checksum of what the host put there, so data
    // corrupted in HBM or on the way is caught by the engines (and stores are checked source against destination).
    if (cc.core.dma.checksum) {
        auto host_read = [&](uint64_t a, uint8_t* buf, uint64_t n) { chip.host_read(a, buf, n); };
        for (auto& p : programs)
            for (auto& q : p.dma)
                for (auto& in : q)
                    if (in.dma.src >= layout.a_addr && in.dma.src < layout.c_addr) in.dma.checksum = dma::checksum_of(in.dma, host_read);
    }
    for (uint32_t c = 0; c < cc.cores; ++c) chip.cores[c]->load(std::move(programs[c]));
}

double chip_peak_tflops(const platform::chip_config& cc, numerics::dtype t) {
    const auto& te = cc.core.te;
    const bool dr = te.fp8_double_row && (t == numerics::dtype::fp8_e4m3 || t == numerics::dtype::fp8_e5m2);
    const double macs_per_cycle = double(te.rows) * te.cols * (dr ? 2 : 1) / (t == numerics::dtype::fp32 ? te.fp32_passes : 1);
    return 2.0 * macs_per_cycle * te.clock_ghz * 1e9 * cc.cores / 1e12;
}

gemm_bounds bounds_of(const gemm_spec& g, const gemm_layout& layout, const platform::chip_config& cc) {
    const double flops = 2.0 * double(g.m) * double(g.k) * double(g.n);
    const uint64_t c_moved = layout.c_bytes * (g.c_accumulate ? 2 : 1);  // an accumulated C is read too
    return {flops / (chip_peak_tflops(cc, g.dtype) * 1e3),
            double(layout.a_bytes + layout.b_bytes + c_moved) / cc.hbm.bandwidth_gbps};
}

void gemm_figures(gemm_result& r, const platform::chip_config& cc, const gemm_layout& layout, const std::string& chip) {
    const gemm_spec& g = r.spec;
    r.flops = 2.0 * double(g.m) * double(g.k) * double(g.n);
    r.peak_tflops = chip_peak_tflops(cc, g.dtype);
    r.achieved_tflops = r.sim_ns > 0 ? r.flops / (r.sim_ns * 1e-9) / 1e12 : 0;
    r.te_utilisation = r.achieved_tflops / r.peak_tflops;
    double macs = 0, cap = 0;
    for (uint32_t c = 0; c < cc.cores; ++c) {
        const std::string core = chip + ".core" + std::to_string(c);
        macs += r.stats[core + ".te.macs"];
        cap += r.stats[core + ".te.capacity_macs"];
        r.tiling.matmuls += uint64_t(r.stats[core + ".te.instructions"]);
        r.tiling.dmas += uint64_t(r.stats[core + ".dma_instructions"]);
        for (uint32_t e = 0; e < cc.core.dma.engines; ++e) {
            const std::string eng = core + ".dma" + std::to_string(e);
            r.dma_bytes += r.stats[eng + ".bytes"];
            r.dma_queues.add(r.stats[eng + ".queued_ns"], r.stats[eng + ".wait_ns"], r.stats[eng + ".descriptors"]);
        }
    }
    r.dma_wait_ns = r.dma_queues.mean_wait_ns();
    r.dma_queue_depth = r.dma_queues.depth(r.sim_ns);
    r.te_stream_utilisation = cap > 0 ? macs / cap : 0;
    r.hbm_bytes = r.stats[chip + ".hbm.bytes_read"] + r.stats[chip + ".hbm.bytes_written"];
    r.hbm_gbps = r.sim_ns > 0 ? r.hbm_bytes / r.sim_ns : 0;
    r.hbm_peak_gbps = cc.hbm.bandwidth_gbps;
    r.dma_gbps = r.sim_ns > 0 ? r.dma_bytes / r.sim_ns : 0;
    r.dma_peak_gbps = cc.core.dma.engine_gbps * cc.core.dma.engines * cc.cores;
    const gemm_bounds b = bounds_of(g, layout, cc);
    r.min_time_compute_ns = b.compute_ns;
    r.min_time_hbm_ns = b.hbm_ns;
    r.arithmetic_intensity = r.hbm_bytes > 0 ? r.flops / r.hbm_bytes : 0;
    r.energy = energy::estimate(cc.energy, chip_activity(r.stats, chip, cc, r.sim_ns * 1e-9));
    r.tflops_per_w = r.energy.avg_power_w() > 0 ? r.achieved_tflops / r.energy.avg_power_w() : 0;
}

void check_gemm(gemm_result& r, platform::chip& chip, const gemm_layout& layout, const gemm_operands* ops, bool check,
                double progress_after_s) {
    const gemm_spec& g = r.spec;
    if (!ops) return;  // timing only: no data
    std::vector<float> c(g.m * g.n);
    std::vector<uint8_t> c_raw(layout.c_bytes);
    chip.host_read(layout.c_addr, c_raw.data(), c_raw.size());
    numerics::decode(g.c_type, c_raw.data(), c.data(), c.size());
    r.c_digest = digest_hex(c_raw.data(), c_raw.size());
    if (!check) return;
    r.checked = true;
    std::vector<float> gold = golden_gemm(ops->at, ops->b, g.m, g.k, g.n, r.tiling.kt, 2, progress_after_s);
    if (g.c_type != numerics::dtype::fp32)  // the Scalar Engine's cast out of PSUM: round to nearest even
        for (float& v : gold) v = numerics::quantize(g.c_type, v);
    if (g.c_accumulate)  // the accumulating store: C's old value plus the GEMM's, an FP32 sum rounded once to c_type
        for (uint64_t i = 0; i < gold.size(); ++i) gold[i] = numerics::quantize(g.c_type, ops->c0[i] + gold[i]);
    for (uint64_t i = 0; i < c.size(); ++i) {
        if (std::memcmp(&c[i], &gold[i], 4) != 0) {
            if (r.mismatches == 0) {
                char buf[160];
                uint32_t cb, gb;
                std::memcpy(&cb, &c[i], 4);
                std::memcpy(&gb, &gold[i], 4);
                std::snprintf(buf, sizeof buf, "C[%llu][%llu] = %.9g (0x%08x), golden %.9g (0x%08x)",
                              (unsigned long long)(i / g.n), (unsigned long long)(i % g.n), c[i], cb, gold[i], gb);
                r.first_mismatch = buf;
            }
            ++r.mismatches;
        }
    }
    // Error of the FP32 result against FP64 on up to 4096 sampled elements (all of them for small GEMMs).
    uint64_t total = g.m * g.n, samples = std::min<uint64_t>(total, 4096);
    std::vector<uint64_t> idx(samples);
    for (uint64_t s = 0; s < samples; ++s) idx[s] = samples == total ? s : (s * 2654435761ull + 12345) % total;
    const std::vector<double> refs = fp64_reference(ops->at, ops->b, g.m, g.k, g.n, idx);
    for (uint64_t s = 0; s < samples; ++s) {
        const double ref = refs[s] + (g.c_accumulate ? double(ops->c0[idx[s]]) : 0.0);
        double err = std::fabs(double(c[idx[s]]) - ref);
        r.max_abs_err = std::max(r.max_abs_err, err);
        if (std::fabs(ref) > 1e-3) r.max_rel_err = std::max(r.max_rel_err, err / std::fabs(ref));
    }
    r.error_samples = samples;
    r.pass = r.mismatches == 0;
}

gemm_result run_gemm(const platform::platform_config& cfg, const gemm_spec& g, const gemm_options& opt) {
    auto t_setup = wall_clock::now();
    const auto& cc = cfg.chip;
    gemm_result r;
    r.spec = g;
    r.functional = cfg.functional;
    gemm_layout layout = plan_layout(g, cc);
    r.tiling = plan_tiling(g, cc);
    auto programs = compile_gemm(g, layout, cc);

    platform::chip chip("chip0", cc);
    if (opt.on_built) opt.on_built(chip);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // finish elaboration: bindings are final, time is 0
    r.setup_wall_s = since(t_setup);
    auto t_operands = wall_clock::now();
    // Host: random operands in [-1, 1), quantised to the input type, loaded into HBM.
    gemm_operands ops;
    if (cfg.functional) ops = make_operands(g);
    load_gemm(chip, layout, std::move(programs), cfg.functional ? &ops : nullptr);
    r.operands_wall_s = since(t_operands);

    sim_probe probe = make_chip_probe(chip);
    probe.progress_text = [&] {
        uint64_t n = 0;
        for (auto& c : chip.cores) n += uint64_t(c->te().stats().value("instructions"));
        return "MATMULs done: " + std::to_string(n);
    };
    r.wall_s = run_to_completion(probe, opt.sim);

    sc_core::sc_time end = last_completion(chip);
    r.sim_ns = end.to_seconds() * 1e9;

    if (opt.on_finished) opt.on_finished(chip);

    r.stats = chip.stats().flatten();
    r.stat_meta = chip.stats().describe();
    gemm_figures(r, cc, layout, "chip0");

    auto t_check = wall_clock::now();
    check_gemm(r, chip, layout, cfg.functional ? &ops : nullptr, opt.check, opt.sim.progress_after_s);
    r.check_wall_s = since(t_check);
    return r;
}

} // namespace trnsim::tb

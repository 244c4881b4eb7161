#include "testbench/workloads/gemm/platform_gemm.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "platforms/cluster/cluster.h"
#include "platforms/single_chip/chip.h"
#include "testbench/chip_probe.h"

namespace trnsim::tb {

uint64_t chip_seed(uint64_t seed, uint32_t chip) { return seed + uint64_t(chip) * 0x9e3779b97f4a7c15ull; }

platform_gemm_result run_platform_gemm(const platform::platform_config& cfg, const gemm_spec& g,
                                       const std::vector<uint32_t>& chips, const gemm_options& opt) {
    using clock = std::chrono::steady_clock;
    auto since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };
    auto t_setup = clock::now();
    const auto& cc = cfg.chip;
    const auto& mc = cfg.multichip;
    if (chips.empty()) throw std::invalid_argument("run --platform: no chip chosen");
    for (uint32_t c : chips) {
        if (c >= mc.chips())
            throw std::invalid_argument("chip " + std::to_string(c) + " does not exist (the platform has " +
                                        std::to_string(mc.chips()) + " chips, 0 .. " + std::to_string(mc.chips() - 1) + ")");
        if (!mc.full_chip[c])
            throw std::invalid_argument("chip " + std::to_string(c) + " is a light chip, which runs no programs: a GEMM "
                                        "needs full chips (--set chips.model=full, or chips.full)");
    }
    platform_gemm_result r;
    r.chips = chips;
    r.functional = cfg.functional;
    const gemm_layout layout = plan_layout(g, cc);
    const gemm_tiling tiling = plan_tiling(g, cc);
    const std::vector<core::core_program> programs = compile_gemm(g, layout, cc);

    platform::multichip_platform plat("platform", cfg);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // finish elaboration: bindings are final, time is 0
    r.setup_wall_s = since(t_setup);

    // Operands chip by chip: each chip's host buffers are kept for its check (functional runs).
    auto t_operands = clock::now();
    std::vector<gemm_operands> ops(chips.size());
    std::vector<core::neuron_core*> all;
    for (size_t i = 0; i < chips.size(); ++i) {
        platform::chip& chip = *plat.full_chip(chips[i]);
        gemm_spec gi = g;
        gi.seed = chip_seed(g.seed, chips[i]);
        if (cfg.functional) ops[i] = make_operands(gi);
        load_gemm(chip, layout, programs, cfg.functional ? &ops[i] : nullptr);
        for (auto& k : chip.cores) all.push_back(k.get());
    }
    r.operands_wall_s = since(t_operands);

    sim_probe probe = make_cores_probe(all);
    probe.progress_text = [&] {
        uint64_t n = 0;
        for (auto* k : all) n += uint64_t(k->te().stats().value("instructions"));
        return "MATMULs done: " + std::to_string(n) + " on " + std::to_string(chips.size()) + " chips";
    };
    r.wall_s = run_to_completion(probe, opt.sim);

    auto t_check = clock::now();
    r.checked = cfg.functional && opt.check;
    r.pass = true;
    for (size_t i = 0; i < chips.size(); ++i) {
        platform::chip& chip = *plat.full_chip(chips[i]);
        std::vector<core::neuron_core*> cores;
        for (auto& k : chip.cores) cores.push_back(k.get());
        gemm_result c;
        c.spec = g;
        c.spec.seed = chip_seed(g.seed, chips[i]);
        c.functional = cfg.functional;
        c.tiling = tiling;
        c.sim_ns = last_completion(cores).to_seconds() * 1e9;
        c.stats = chip.stats().flatten();
        gemm_figures(c, cc, layout, "chip" + std::to_string(chips[i]));
        check_gemm(c, chip, layout, cfg.functional ? &ops[i] : nullptr, opt.check, opt.sim.progress_after_s);
        ops[i] = gemm_operands();  // this chip's host buffers are no longer needed
        r.sim_ns = std::max(r.sim_ns, c.sim_ns);
        r.flops += c.flops;
        r.peak_tflops += c.peak_tflops;
        r.energy_j += c.energy.total_j;
        r.mismatches += c.mismatches;
        r.pass = r.pass && (!c.checked || c.pass);
        r.per_chip.push_back(std::move(c));
    }
    r.pass = r.pass && r.checked;
    r.achieved_tflops = r.sim_ns > 0 ? r.flops / (r.sim_ns * 1e-9) / 1e12 : 0;
    r.check_wall_s = since(t_check);
    return r;
}

} // namespace trnsim::tb

#include "testbench/workloads/gemm/platform_gemm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "platforms/cluster/cluster.h"
#include "platforms/single_chip/chip.h"
#include "testbench/chip_probe.h"
#include "testbench/observe/energy_activity.h"
#include "testbench/observe/overlap_meter.h"
#include "testbench/workloads/collective/collective_run.h"
#include "testbench/workloads/collective/lowering.h"

namespace trnsim::tb {

uint64_t chip_seed(uint64_t seed, uint32_t chip) { return seed + uint64_t(chip) * 0x9e3779b97f4a7c15ull; }

namespace {

// A program with `p`'s queues and semaphores and no instruction (the GEMM left out, its queue numbering kept).
core::core_program empty_like(const core::core_program& p) {
    core::core_program e;
    e.semaphores = p.semaphores;
    e.dma.resize(p.dma.size());
    return e;
}

// Appends `b`'s queues to `a`'s (DMA queues after a's, vector and scalar instructions after a's): the two programs
// use disjoint semaphores (b's from a's count on), so neither waits on the other.
void merge_into(core::core_program& a, core::core_program&& b) {
    a.semaphores = std::max(a.semaphores, b.semaphores);
    for (auto& q : b.dma) a.dma.push_back(std::move(q));
    for (auto& in : b.vector) a.vector.push_back(std::move(in));
    for (auto& in : b.scalar) a.scalar.push_back(std::move(in));
    for (auto& in : b.te) a.te.push_back(std::move(in));
}

} // namespace

platform_gemm_result run_platform_gemm(const platform::platform_config& cfg, const gemm_spec& g,
                                       const std::vector<uint32_t>& chips, const gemm_options& opt,
                                       const concurrent_collective* conc,
                                       const std::function<void(platform::multichip_platform&)>& on_platform) {
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
    // With a concurrent collective, the GEMM's buffers (from each SBUF partition's start) leave the top quarter of
    // every partition to the collective's staging.
    const uint64_t staging = conc ? cc.core.sbuf.partition_bytes / 4 : 0;
    const uint64_t gemm_sbuf = cc.core.sbuf.partition_bytes - staging;
    const std::vector<core::core_program> programs = compile_gemm(g, layout, cc, gemm_sbuf);

    // The collective, lowered for every chip, beside the GEMM.
    collective::schedule sched;
    lowered_collective low;
    lowering_layout L;
    if (conc) {
        if (!mc.all_full())
            throw std::invalid_argument("--concurrent: a collective runs on every chip of the platform, and every one "
                                        "must be a full chip (--set chips.model=full)");
        sched = collective::build(mc.topo, conc->p);
        uint32_t sems = 0;
        for (const auto& p : programs) sems = std::max(sems, p.semaphores);
        L = full_chip_layout(cfg, sched, layout.c_addr + layout.c_bytes, gemm_sbuf, sems);
        low = lower(sched, L);
        r.concurrent = true;
        r.collective.steps = sched.steps.size();
        r.collective.dma_instructions = low.dma_instructions;
        r.collective.vector_instructions = low.vector_instructions;
        r.collective.remote_signals = low.remote_signals;
    }

    platform::multichip_platform plat("platform", cfg);
    if (on_platform) on_platform(plat);
    using part = concurrent_collective::part;
    const bool gemm_alone = conc && conc->run == part::gemm_alone, collective_alone = conc && conc->run == part::collective_alone;
    // Both at once: what the chips and links do while the two overlap (until the first of them is done).
    const bool both = conc && !gemm_alone && !collective_alone;
    overlap_meter meter;
    if (both) meter.attach(plat);
    const std::vector<uint32_t> everyone = [&] {
        std::vector<uint32_t> v;
        for (uint32_t c = 0; c < mc.chips(); ++c) v.push_back(c);
        return v;
    }();
    // The queue threads the programs loaded below spawn (an upper bound: vector and scalar queues counted).
    size_t to_spawn = 0;
    for (uint32_t c : conc ? everyone : chips)
        for (uint32_t k = 0; k < cc.cores; ++k)
            to_spawn += 3 + programs.front().dma.size() + (conc && !gemm_alone ? low.programs[c][k].dma.size() : 0);
    check_thread_stacks("platform '" + cfg.preset + "'", to_spawn);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // finish elaboration: bindings are final, time is 0
    r.setup_wall_s = since(t_setup);

    // Operands chip by chip: each chip's host buffers are kept for its check (functional runs).
    auto t_operands = clock::now();
    std::vector<gemm_operands> ops(chips.size());
    std::vector<core::neuron_core*> all;
    // Which queues of a core are the GEMM's (TE and its DMA queues: the first queues): their completions give the
    // GEMM's own time on a chip; the others' the collective's.
    const size_t gemm_queues = 1 + programs.front().dma.size();
    std::vector<sc_core::sc_time> gemm_done(mc.chips()), coll_done(mc.chips());
    for (uint32_t c : conc ? everyone : chips) {
        platform::chip& chip = *plat.full_chip(c);
        const auto at = std::find(chips.begin(), chips.end(), c);
        const size_t i = size_t(at - chips.begin());
        std::vector<core::core_program> progs;
        if (at != chips.end()) {
            gemm_spec gi = g;
            gi.seed = chip_seed(g.seed, c);
            if (cfg.functional && !collective_alone) ops[i] = make_operands(gi);
            progs = programs;
        } else {
            progs.assign(cc.cores, core::core_program{});
            for (auto& p : progs) p.dma.resize(programs.front().dma.size());  // the same queue numbering
        }
        if (collective_alone)
            for (auto& p : progs) p = empty_like(p);
        if (conc && !gemm_alone)
            for (uint32_t k = 0; k < cc.cores; ++k) merge_into(progs[k], std::move(low.programs[c][k]));
        load_gemm(chip, layout, std::move(progs),
                  at != chips.end() && cfg.functional && !collective_alone ? &ops[i] : nullptr);
        for (auto& k : chip.cores) {
            all.push_back(k.get());
            if (conc)
                k->observe([&, c](const core::queue_event& e) {
                    auto& t = e.queue < gemm_queues ? gemm_done[c] : coll_done[c];
                    t = std::max(t, e.completed);
                });
        }
    }
    std::vector<std::vector<uint8_t>> want;
    if (conc && !gemm_alone && cfg.functional) {
        if (conc->check) want = reference_outputs(sched, mc.chips(), conc->seed);
        std::vector<uint8_t> in(sched.input_bytes);
        for (uint32_t c = 0; c < mc.chips(); ++c) {
            fill_input(in, conc->p.dt, conc->seed, c);
            plat.full_chip(c)->host_write(L.input, in.data(), sched.input_bytes);
        }
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
    r.checked = cfg.functional && opt.check && !collective_alone;
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
        c.sim_ns = (conc ? gemm_done[chips[i]] : last_completion(cores)).to_seconds() * 1e9;
        c.stats = chip.stats().flatten();
        gemm_figures(c, cc, layout, "chip" + std::to_string(chips[i]));
        if (conc) {
            // The chip's traffic and energy are the GEMM's and the collective's: rates over the chip's whole run.
            const double window = last_completion(cores).to_seconds() * 1e9;
            c.hbm_gbps = window > 0 ? c.hbm_bytes / window : 0;
            c.dma_gbps = window > 0 ? c.dma_bytes / window : 0;
            c.dma_queue_depth = c.dma_queues.depth(window);
            c.energy = energy::estimate(cc.energy, chip_activity(c.stats, "chip" + std::to_string(chips[i]), cc, window * 1e-9));
        }
        check_gemm(c, chip, layout, cfg.functional && !collective_alone ? &ops[i] : nullptr, opt.check,
                   opt.sim.progress_after_s);
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
    r.util = plat.utilisation_summary(uint64_t(last_completion(all).value()));
    {
        dma_queue_totals q;
        for (auto* k : all)
            for (const auto& d : k->dma)
                q.add(d->stats().value("queued_ns"), d->stats().value("wait_ns"), d->stats().value("descriptors"));
        r.dma_queue_depth = q.depth(last_completion(all).to_seconds() * 1e9);
        r.dma_wait_ns = q.mean_wait_ns();
    }
    if (conc && !gemm_alone) {
        auto& o = r.collective;
        for (uint32_t c = 0; c < mc.chips(); ++c) o.sim_ns = std::max(o.sim_ns, coll_done[c].to_seconds() * 1e9);
        o.algbw_gbps = o.sim_ns > 0 ? double(conc->p.bytes) / o.sim_ns : 0;
        o.busbw_gbps = o.algbw_gbps * collective::bus_factor(conc->p.o, sched.group_chips ? sched.group_chips : mc.chips());
        if (!want.empty()) {
            o.checked = true;
            o.mismatches = compare_outputs(sched, want, [&](uint32_t c, uint8_t* out) {
                plat.full_chip(c)->host_read(L.output, out, sched.output_bytes);
            }, o.first_mismatch);
            o.pass = o.mismatches == 0;
        }
        r.pass = r.pass && (!o.checked || o.pass);
        if (both) r.overlap = meter.until(uint64_t(std::llround(std::min(r.sim_ns, o.sim_ns) * 1000.0)));
    }
    r.achieved_tflops = r.sim_ns > 0 ? r.flops / (r.sim_ns * 1e-9) / 1e12 : 0;
    r.check_wall_s = since(t_check);
    return r;
}

} // namespace trnsim::tb

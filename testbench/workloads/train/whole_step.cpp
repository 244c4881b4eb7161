#include "testbench/workloads/train/whole_step.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "models/collective/groups.h"
#include "models/core/neuron_core.h"
#include "platforms/single_chip/chip.h"
#include "testbench/chip_probe.h"
#include "testbench/workloads/collective/collective_run.h"
#include "testbench/workloads/collective/lowering.h"
#include "testbench/workloads/gemm/gemm.h"
#include "testbench/workloads/program/op_sequence.h"
#include "testbench/workloads/train/phase_kernel.h"

namespace trnsim::train {

namespace {

using op_id = tb::op_sequence::op_id;

// HBM regions for the operations' buffers: a ring over the chip's HBM above the first page (the barrier writes'
// signal word). Offsets from the HBM base.
class hbm_ring {
public:
    explicit hbm_ring(uint64_t capacity) : m_cap(capacity) {}
    uint64_t take(uint64_t bytes, const std::string& what) {
        bytes = (bytes + 4095) & ~uint64_t(4095);
        if (bytes > m_cap - PAGE)
            throw std::invalid_argument("operation " + what + ": its buffers (" + std::to_string(bytes >> 20) +
                                        " MiB) do not fit a chip's HBM (chip.hbm.capacity_gib)");
        if (m_next + bytes > m_cap) m_next = PAGE;
        const uint64_t at = m_next;
        m_next += bytes;
        return at;
    }
    static constexpr uint64_t PAGE = 4096;

private:
    uint64_t m_cap, m_next = PAGE;
};

// Appends program b to a on the same core: b's semaphores above a's, its instructions after a's in every queue.
void append_program(core::core_program& a, core::core_program&& b) {
    const uint32_t off = a.semaphores;
    auto move_all = [&](std::vector<core::instruction>& to, std::vector<core::instruction>& from) {
        for (auto& in : from) {
            for (auto& w : in.waits) w.sem += off;
            if (in.signal >= 0) in.signal += int32_t(off);
            to.push_back(std::move(in));
        }
    };
    move_all(a.te, b.te);
    move_all(a.vector, b.vector);
    move_all(a.scalar, b.scalar);
    if (a.dma.size() < b.dma.size()) a.dma.resize(b.dma.size());
    for (size_t q = 0; q < b.dma.size(); ++q) move_all(a.dma[q], b.dma[q]);
    a.semaphores += b.semaphores;
}

struct op_meta {
    std::string name, kind;
    uint32_t micro_batch = 0;
    bool backward = false;
};

}  // namespace

nlohmann::json whole_result::to_json() const {
    nlohmann::json sp = nlohmann::json::array();
    for (const auto& x : spans)
        sp.push_back({{"name", x.name}, {"kind", x.kind}, {"micro_batch", x.micro_batch}, {"begin_ns", x.begin_ns},
                      {"end_ns", x.end_ns}});
    return {{"step_ns", step_ns}, {"critical_chip", critical_chip}, {"tokens_per_s", tokens_per_s}, {"mfu", mfu},
            {"breakdown_ns", {{"gemm", gemm_ns}, {"phase", phase_ns}, {"tp_comm", tp_ns}, {"optimizer", optimizer_ns},
                              {"dp_comm_exposed", dp_exposed_ns}, {"sync", sync_ns}}},
            {"backward_end_ns", backward_end_ns}, {"dp_end_ns", dp_end_ns}, {"operations", operations},
            {"barrier_writes", barrier_writes}, {"instructions", instructions}, {"setup_wall_s", setup_wall_s},
            {"wall_s", wall_s}, {"spans", sp}};
}

void check_whole(const platform::platform_config& cfg, const parallel_plan& p) {
    const auto& mc = cfg.multichip;
    if (mc.kind == platform::platform_kind::single_chip)
        throw std::invalid_argument("--whole: '" + cfg.preset + "' is a single chip; a training step runs on a server "
                                    "or cluster platform");
    if (!mc.all_full())
        throw std::invalid_argument("--whole runs every chip's own instruction streams: the platform's chips must be "
                                    "full chips (--set chips.model=full)");
    if (p.pp > 1)
        throw std::invalid_argument("--whole --pp " + std::to_string(p.pp) + ": the pipeline sends between stages are "
                                    "not lowered yet; --whole runs --pp 1");
    if (p.dp > 1 && cfg.chip.collective_reduce != platform::chip_config::reduce_engine::dma)
        throw std::invalid_argument("--whole --dp " + std::to_string(p.dp) + ": the gradient all-reduces run beside the "
                                    "backward pass, so they must reduce on the DMA engines, not on the Vector Engine "
                                    "the backward's phases use (--set chip.collective_reduce=dma)");
}

whole_result run_whole_step(const platform::platform_config& cfg_in, const model_spec& m, const parallel_plan& p,
                            const whole_options& opt) {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const auto& mc = cfg_in.multichip;
    check_whole(cfg_in, p);
    validate(p, m, mc.chips());
    platform::platform_config cfg = cfg_in;  // timing-only, as the composed step's simulations
    platform::set_functional(cfg, false);
    const auto& cc = cfg.chip;
    const uint32_t n = mc.chips(), C = cc.cores;
    const layer_plan lp = plan_layer(m, p);
    const uint32_t L = m.layers;
    const uint64_t M = p.micro_batches(m);
    const std::vector<uint32_t> place = snake_placement(mc.topo);
    auto rank = [&](uint32_t t, uint32_t d) { return place[t + p.tp * d]; };
    std::vector<std::vector<uint32_t>> tp_groups, dp_groups;
    for (uint32_t d = 0; d < p.dp; ++d) {
        tp_groups.emplace_back();
        for (uint32_t t = 0; t < p.tp; ++t) tp_groups.back().push_back(rank(t, d));
    }
    for (uint32_t t = 0; t < p.tp; ++t) {
        dp_groups.emplace_back();
        for (uint32_t d = 0; d < p.dp; ++d) dp_groups.back().push_back(rank(t, d));
    }

    hbm_ring ring(cc.hbm.capacity_bytes);
    const uint64_t signal_word = cc.hbm_base;  // the first page: 8 readable bytes for the barrier writes
    tb::op_sequence seq(tb::chip_sequence_layout(cc, n, signal_word));
    std::vector<op_meta> meta;
    auto note = [&](const std::vector<op_id>& ids, const op_meta& mm) {
        for (op_id id : ids) {
            if (meta.size() <= id) meta.resize(id + 1);
            meta[id] = mm;
        }
    };
    // A local operation on every chip (the same programs: every chip of a stage runs the same shapes).
    auto add_local = [&](uint32_t stream, const std::vector<core::core_program>& progs,
                         const std::vector<std::vector<op_id>>& after, const op_meta& mm) {
        std::vector<op_id> ids;
        for (uint32_t c = 0; c < n; ++c) ids.push_back(seq.add(c, stream, progs, after.empty() ? std::vector<op_id>{} : after[c], mm.name));
        note(ids, mm);
        return ids;
    };
    auto gemm_programs = [&](const layer_op& o) {
        tb::gemm_spec g;
        g.m = o.m, g.k = o.kk, g.n = o.n, g.dtype = m.dtype;
        std::vector<core::core_program> out(C);
        for (uint32_t j = 0; j < o.count; ++j) {
            tb::gemm_layout l = tb::plan_layout(g, cc);
            const uint64_t at = ring.take(l.c_addr + l.c_bytes - cc.hbm_base, o.name);
            l.a_addr += at, l.b_addr += at, l.c_addr += at;
            // Heads side by side: each instance starts on the core after the previous one's first.
            auto progs = tb::compile_gemm(g, l, cc, 0, j % C);
            for (uint32_t k = 0; k < C; ++k) append_program(out[k], std::move(progs[k]));
        }
        return out;
    };
    auto phase_programs = [&](phase_kind kind, uint64_t rows, uint64_t cols, const std::string& name) {
        phase_spec ps;
        ps.kind = kind, ps.rows = rows, ps.cols = cols, ps.dtype = m.dtype;
        uint64_t bytes = 0;
        try {
            compile_phase(cc, ps, &bytes);
            ps.hbm_offset = ring.take(bytes, name);
            return compile_phase(cc, ps);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument("model " + m.name + ", operation " + name + ": " + e.what());
        }
    };
    auto allreduce = [&](uint32_t stream, const std::vector<std::vector<uint32_t>>& groups, collective::algo a,
                         uint64_t bytes, const std::vector<std::vector<op_id>>& after, const op_meta& mm) {
        collective::params cp;
        cp.o = collective::op::allreduce;
        cp.a = a;
        cp.dt = m.dtype;
        cp.bytes = bytes;
        const collective::schedule s = collective::build_groups(mc.topo, groups, cp);
        const uint64_t need = s.input_bytes + s.output_bytes + s.scratch_bytes + 4 * 4096;
        tb::lowering_layout lay = tb::full_chip_layout(cfg, s, cc.hbm_base + ring.take(need, mm.name));
        lay.sem_first = seq.sem_first();
        lay.notify_landing = true;
        tb::lowered_collective low = tb::lower(s, lay);
        const auto ids = seq.add_all(stream, std::move(low.programs),
                                     after.empty() ? std::vector<std::vector<op_id>>(n) : after, mm.name);
        note(ids, mm);
        return ids;
    };
    auto run_op = [&](const layer_op& o, const std::string& prefix, uint32_t mb, bool bwd) {
        op_meta mm{prefix + o.name, "", mb, bwd};
        if (o.k == layer_op::kind::gemm) {
            mm.kind = "gemm";
            return add_local(0, gemm_programs(o), {}, mm);
        }
        if (o.k == layer_op::kind::phase) {
            mm.kind = "phase";
            return add_local(0, phase_programs(o.phase, o.rows, o.cols, mm.name), {}, mm);
        }
        mm.kind = "tp_allreduce";
        return allreduce(0, tp_groups, opt.tp_algo, o.bytes, {}, mm);
    };

    // The step, micro-batch by micro-batch.
    const bool dp = p.dp > 1;
    std::vector<op_id> last_bucket;
    std::vector<std::vector<op_id>> bucket_after(n);
    const size_t elt = numerics::size_of(m.dtype);
    auto bucket = [&](uint64_t params, const std::vector<op_id>& ready, const std::string& name) {
        std::vector<std::vector<op_id>> after(n);
        for (uint32_t c = 0; c < n; ++c) after[c] = {ready[c]};
        last_bucket = allreduce(1, dp_groups, opt.dp_algo, params * elt, after, {name, "dp_allreduce", uint32_t(M - 1), true});
    };
    std::vector<op_id> last;
    for (uint64_t i = 0; i < M; ++i) {
        const uint32_t mb = uint32_t(i);
        for (const auto& o : lp.embed_fwd) last = run_op(o, "", mb, false);
        for (uint32_t l = 0; l < L; ++l)
            for (const auto& o : lp.fwd) last = run_op(o, "L" + std::to_string(l) + " ", mb, false);
        for (const auto& o : lp.head_fwd) last = run_op(o, "", mb, false);
        for (const auto& o : lp.head_bwd) last = run_op(o, "", mb, true);
        for (uint32_t l = L; l-- > 0;) {
            for (const auto& o : lp.bwd) last = run_op(o, "L" + std::to_string(l) + " ", mb, true);
            if (dp && i + 1 == M) bucket(lp.layer_params_per_chip, last, "bucket layer " + std::to_string(l));
        }
    }
    if (dp) bucket(lp.head_params_per_chip * 2, last, "bucket embedding/head");
    // Adam once every gradient is reduced (gradient clipping needs them all), after the backward on stream 0.
    std::vector<std::vector<op_id>> adam_after(n);
    for (uint32_t c = 0; c < n; ++c)
        if (dp) adam_after[c] = {last_bucket[c]};
    auto adam = [&](uint64_t params, const std::string& name) {
        const uint64_t cols = (params + 127) / 128;
        add_local(0, phase_programs(phase_kind::adam, 128, cols, name), adam_after, {name, "adam", uint32_t(M - 1), false});
        for (auto& a : adam_after) a.clear();  // the stream orders the rest
    };
    for (uint32_t l = L; l-- > 0;) adam(lp.layer_params_per_chip, "adam layer " + std::to_string(l));
    adam(lp.head_params_per_chip * 2, "adam embedding/head");

    whole_result r;
    r.operations = seq.operations();
    r.barrier_writes = seq.barrier_writes();
    tb::op_sequence::owner_map owners;
    auto programs = seq.finish(&owners);
    size_t to_spawn = 0;
    for (const auto& chip : programs)
        for (const auto& pr : chip) {
            to_spawn += core::neuron_core::threads_for(pr);
            r.instructions += pr.te.size() + pr.vector.size() + pr.scalar.size();
            for (const auto& q : pr.dma) r.instructions += q.size();
        }
    platform::multichip_platform plat("platform", cfg);
    tb::check_thread_stacks("platform '" + cfg.preset + "' (" + std::to_string(n) + " full chips)", to_spawn);
    if (opt.on_platform) opt.on_platform(plat);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);

    // Every operation's span: its first instruction issued to its last completed, on its chip.
    std::vector<double> begin(meta.size(), 1e300), end(meta.size(), 0);
    std::vector<core::neuron_core*> all;
    for (uint32_t c = 0; c < n; ++c) {
        auto& chip = *plat.full_chip(c);
        for (uint32_t k = 0; k < C; ++k) {
            auto* core = chip.cores[k].get();
            all.push_back(core);
            core->load(std::move(programs[c][k]));
            const auto* own = &owners[c][k];
            core->observe([&, own](const core::queue_event& e) {
                if (e.queue >= own->size()) return;
                const op_id o = tb::op_sequence::owner_of((*own)[e.queue], e.index);
                if (o == tb::op_sequence::NONE) return;
                begin[o] = std::min(begin[o], e.issued.to_seconds() * 1e9);
                end[o] = std::max(end[o], e.completed.to_seconds() * 1e9);
            });
        }
    }
    r.setup_wall_s = std::chrono::duration<double>(clock::now() - t0).count();
    tb::sim_probe probe = tb::make_cores_probe(all);
    probe.progress_text = [&] {
        size_t done = 0;
        for (auto* k : all) done += k->finished();
        return std::to_string(done) + "/" + std::to_string(all.size()) + " cores finished the step";
    };
    r.wall_s = tb::run_to_completion(probe, opt.sim);

    // The chip that finished last, and its breakdown.
    double chip_end = -1;
    for (uint32_t c = 0; c < n; ++c) {
        std::vector<core::neuron_core*> cores;
        for (auto& k : plat.full_chip(c)->cores) cores.push_back(k.get());
        const double e = tb::last_completion(cores).to_seconds() * 1e9;
        if (e > chip_end) chip_end = e, r.critical_chip = c;
    }
    r.step_ns = chip_end;
    for (op_id o = 0; o < meta.size(); ++o) {
        if (seq.chip_of(o) != r.critical_chip || end[o] == 0) continue;
        const auto& mm = meta[o];
        const double t = end[o] - begin[o];
        if (mm.kind == "gemm") r.gemm_ns += t;
        else if (mm.kind == "phase") r.phase_ns += t;
        else if (mm.kind == "tp_allreduce") r.tp_ns += t;
        else if (mm.kind == "adam") r.optimizer_ns += t;
        else if (mm.kind == "dp_allreduce") r.dp_end_ns = std::max(r.dp_end_ns, end[o]);
        if (mm.backward && mm.kind != "dp_allreduce") r.backward_end_ns = std::max(r.backward_end_ns, end[o]);
        if (mm.micro_batch == 0 || mm.kind == "dp_allreduce" || mm.kind == "adam")
            r.spans.push_back({mm.name, mm.kind, mm.micro_batch, begin[o], end[o]});
    }
    r.dp_exposed_ns = std::max(0.0, r.dp_end_ns - r.backward_end_ns);
    r.sync_ns = r.step_ns - (r.gemm_ns + r.phase_ns + r.tp_ns + r.optimizer_ns + r.dp_exposed_ns);
    r.tokens_per_s = double(m.global_batch) * m.seq / (r.step_ns * 1e-9);
    const double peak = tb::chip_peak_tflops(cc, m.dtype);
    r.mfu = peak > 0 ? step_model_flops(m, p, lp) / (r.step_ns * 1e-9) / (peak * 1e12 * n) : 0;
    return r;
}

}  // namespace trnsim::train

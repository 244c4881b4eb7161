#include "testbench/workloads/train/whole_step.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <tuple>

#include "models/collective/groups.h"
#include "models/core/neuron_core.h"
#include "platforms/single_chip/chip.h"
#include "testbench/chip_probe.h"
#include "testbench/workloads/collective/collective_run.h"
#include "testbench/workloads/collective/lowering.h"
#include "testbench/workloads/gemm/gemm.h"
#include "testbench/workloads/program/op_sequence.h"
#include "testbench/workloads/train/phase_kernel.h"
#include "testbench/workloads/train/pipeline.h"
#include "testbench/workloads/train/step_tensors.h"

namespace trnsim::train {

namespace {

using op_id = tb::op_sequence::op_id;

constexpr uint64_t PAGE = 4096;

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
    bool after_recv = false;  // the first operation of a pass that waits for a send into its stage
};

}  // namespace

std::vector<core::core_program> instances_side_by_side(const platform::chip_config& cc, const tb::gemm_spec& g,
                                                       uint32_t count,
                                                       const std::function<tb::gemm_layout(uint32_t)>& layout_of) {
    std::vector<core::core_program> out(cc.cores);
    for (uint32_t j = 0; j < count; ++j) {
        auto progs = tb::compile_gemm(g, layout_of(j), cc, 0, j % cc.cores);
        for (uint32_t k = 0; k < cc.cores; ++k) append_program(out[k], std::move(progs[k]));
    }
    return out;
}

std::vector<core::core_program> heads_side_by_side(const platform::chip_config& cc, const tb::gemm_spec& g,
                                                   uint32_t count, const std::function<uint64_t(uint64_t)>& take) {
    return instances_side_by_side(cc, g, count, [&](uint32_t) {
        tb::gemm_layout l = tb::plan_layout(g, cc);
        const uint64_t at = take(l.c_addr + l.c_bytes - cc.hbm_base);
        l.a_addr += at, l.b_addr += at, l.c_addr += at;
        return l;
    });
}

chip_run simulate_on_chip(const platform::platform_config& cfg, std::vector<core::core_program> programs,
                          const tb::sim_options& opt) {
    platform::chip chip("chip0", cfg.chip);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    for (uint32_t k = 0; k < cfg.chip.cores; ++k) chip.cores[k]->load(std::move(programs[k]));
    tb::run_to_completion(tb::make_chip_probe(chip), opt);
    auto stats = chip.stats().flatten();
    return {tb::last_completion(chip).to_seconds() * 1e9, stats["chip0.hbm.bytes_read"] + stats["chip0.hbm.bytes_written"]};
}

double barrier_ns(const platform::platform_config& cfg, const tb::sim_options& opt) {
    constexpr uint32_t N = 32;
    tb::op_sequence seq(tb::chip_sequence_layout(cfg.chip, 1, cfg.chip.hbm_base));
    for (uint32_t i = 0; i < N; ++i) seq.add(0, 0, std::vector<core::core_program>(cfg.chip.cores), {}, "empty");
    auto progs = seq.finish();
    return simulate_on_chip(cfg, std::move(progs[0]), opt).ns / N;
}

nlohmann::json whole_breakdown::to_json() const {
    return {{"chip", chip}, {"stage", stage}, {"end_ns", end_ns},
            {"breakdown_ns", {{"gemm", gemm_ns}, {"phase", phase_ns}, {"tp_comm", tp_ns}, {"optimizer", optimizer_ns},
                              {"dp_comm_exposed", dp_exposed_ns}, {"bubble", bubble_ns}, {"sync", sync_ns}}},
            {"backward_end_ns", backward_end_ns}, {"dp_end_ns", dp_end_ns}};
}

nlohmann::json whole_result::to_json() const {
    nlohmann::json pc = nlohmann::json::array();
    for (const auto& b : per_chip) pc.push_back(b.to_json());
    nlohmann::json sp = nlohmann::json::array();
    for (const auto& x : spans)
        sp.push_back({{"name", x.name}, {"kind", x.kind}, {"chip", x.chip}, {"micro_batch", x.micro_batch},
                      {"begin_ns", x.begin_ns}, {"end_ns", x.end_ns}});
    return {{"step_ns", step_ns}, {"critical_chip", critical_chip}, {"tokens_per_s", tokens_per_s}, {"mfu", mfu},
            {"breakdown_ns", {{"gemm", gemm_ns}, {"phase", phase_ns}, {"tp_comm", tp_ns}, {"optimizer", optimizer_ns},
                              {"dp_comm_exposed", dp_exposed_ns}, {"bubble", bubble_ns}, {"sync", sync_ns}}},
            {"per_chip", pc}, {"stage_critical_chip", stage_critical},
            {"backward_end_ns", backward_end_ns}, {"dp_end_ns", dp_end_ns}, {"operations", operations},
            {"barrier_writes", barrier_writes}, {"instructions", instructions}, {"setup_wall_s", setup_wall_s},
            {"wall_s", wall_s}, {"spans", sp}};
}

void check_whole(const platform::platform_config& cfg, const model_spec& m, const parallel_plan& p) {
    const auto& mc = cfg.multichip;
    if (mc.kind == platform::platform_kind::single_chip)
        throw std::invalid_argument("--whole: '" + cfg.preset + "' is a single chip; a training step runs on a server "
                                    "or cluster platform");
    if (!mc.all_full())
        throw std::invalid_argument("--whole runs every chip's own instruction streams: the platform's chips must be "
                                    "full chips (--set chips.model=full)");
    if (p.dp > 1 && cfg.chip.collective_reduce != platform::chip_config::reduce_engine::dma)
        throw std::invalid_argument("--whole --dp " + std::to_string(p.dp) + ": the gradient all-reduces run beside the "
                                    "backward pass, so they must reduce on the DMA engines, not on the Vector Engine "
                                    "the backward's phases use (--set chip.collective_reduce=dma)");
    // The step a chip runs whole must fit its HBM (the composed step only warns: it never holds the buffers).
    validate(p, m, mc.chips());
    const auto mem = stage_memory_of(m, p, plan_layer(m, p));
    const double cap = double(cfg.chip.hbm.capacity_bytes);
    for (size_t s = 0; s < mem.size(); ++s)
        if (mem[s].state_bytes + mem[s].activation_bytes > cap) {
            char buf[512];
            std::snprintf(buf, sizeof buf,
                          "--whole: a chip of stage %zu needs %.4g GiB (%.4g GiB of weights, gradients and Adam state "
                          "for %llu parameters, %.4g GiB of activations of the micro-batches in flight, %llu), more than "
                          "its HBM holds (chip.hbm.capacity_gib = %.4g GiB): raise --tp or --pp, or lower --micro-batch",
                          s, (mem[s].state_bytes + mem[s].activation_bytes) / 1073741824.0,
                          mem[s].state_bytes / 1073741824.0, (unsigned long long)mem[s].params,
                          mem[s].activation_bytes / 1073741824.0, (unsigned long long)mem[s].in_flight,
                          cap / 1073741824.0);
            throw std::invalid_argument(buf);
        }
}

namespace {

using per_chip = std::vector<op_id>;               // an operation's id on every chip (NONE off its stage)
using after_ids = std::vector<std::vector<op_id>>;  // per chip: what an operation waits for

// Builds the step (whole_step.h) operation by operation into an op_sequence, then runs it and measures it.
class whole_builder {
public:
    whole_builder(const platform::platform_config& cfg_in, const model_spec& m, const parallel_plan& p,
                  const whole_options& opt)
        : cfg(timing_only(cfg_in)), cc(cfg.chip), mc(cfg.multichip), m(m), p(p), opt(opt), n(mc.chips()),
          lp(plan_layer(m, p)), L(m.layers), M(p.micro_batches(m)), S(p.pp), LS(L / S),
          groups(groups_of(snake_placement(mc.topo), p)),
          seq(sequence_layout(cc, n, cc.hbm_base + cc.hbm.capacity_bytes - PAGE)) {
        const uint64_t first = place_regions();
        for (uint32_t st = 0; st < S; ++st)
            mem.emplace_back(lp, m.dtype, st, S, LS, M, first, cc.hbm.capacity_bytes - PAGE);
    }

    void add_passes();
    void add_buckets_and_adam();
    whole_result run(std::chrono::steady_clock::time_point t0);

private:
    static platform::platform_config timing_only(const platform::platform_config& c) {
        platform::platform_config t = c;  // timing-only, as the composed step's simulations
        platform::set_functional(t, false);
        return t;
    }
    static tb::sequence_layout sequence_layout(const platform::chip_config& cc, uint32_t n, uint64_t signal_word) {
        tb::sequence_layout sl = tb::chip_sequence_layout(cc, n, signal_word);
        sl.streams = 4;
        return sl;
    }
    collective::schedule schedule_of(const std::vector<std::vector<uint32_t>>& g, collective::algo a,
                                     uint64_t bytes) const {
        collective::params cp;
        cp.o = collective::op::allreduce;
        cp.a = a;
        cp.dt = m.dtype;
        cp.bytes = bytes;
        return collective::build_groups(mc.topo, g, cp);
    }
    collective::schedule sends_of(uint32_t st, bool forward) const {  // stage st -> st + 1 (forward) or back
        std::vector<std::pair<uint32_t, uint32_t>> v = groups.sends[st];
        if (!forward)
            for (auto& pr : v) std::swap(pr.first, pr.second);
        return collective::build_sends(mc.topo, v, lp.activation_bytes);
    }
    uint64_t place_regions();
    void note(const per_chip& ids, const op_meta& mm);
    per_chip add_local(uint32_t st, const std::vector<core::core_program>& progs, const after_ids& after,
                       const op_meta& mm);
    // Where operation o of (stage, part, layer, micro-batch) finds the operand of `role` for instance i.
    struct op_at {
        uint32_t st = 0;
        step_part part = step_part::layer;
        uint32_t layer = 0, mb = 0;
    };
    placed_tensor operand_of(const op_at& at, const layer_op& o, const std::string& role, uint32_t i);
    std::vector<core::core_program> gemm_programs(const layer_op& o, const op_at& at);
    std::vector<core::core_program> phase_programs(const layer_op& o, const std::string& name,
                                                   const std::map<std::string, placed_tensor>& bound);
    per_chip collective_op(uint32_t stream, const collective::schedule& s, const std::vector<uint32_t>& members,
                           const after_ids& after, const op_meta& mm, uint64_t input, uint64_t output);
    per_chip run_op(const op_at& at, const layer_op& o, const std::string& prefix, bool bwd, after_ids& first_after);
    per_chip send(uint32_t from, uint32_t to, const per_chip& last, uint32_t mb, bool forward);
    void bucket(uint32_t st, uint32_t l, const per_chip& ready, const std::string& name);
    void measure(whole_result& r, const std::vector<double>& begin, const std::vector<double>& end,
                 platform::multichip_platform& plat);

    const platform::platform_config cfg;
    const platform::chip_config& cc;
    const platform::multichip_config& mc;
    const model_spec& m;
    const parallel_plan& p;
    const whole_options& opt;
    const uint32_t n;
    const layer_plan lp;
    const uint32_t L;
    const uint64_t M;
    const uint32_t S, LS;  // stages, layers per stage
    const plan_groups groups;  // per stage: its chips, tp groups, dp groups; the pipeline pairs
    uint64_t coll_base[4] = {0, 0, 0, 0};  // each stream's collective region (offset from the HBM base)
    std::vector<step_tensors> mem;  // per stage: where its tensors lie
    tb::op_sequence seq;
    std::vector<op_meta> meta;
    std::vector<std::vector<per_chip>> recv_fwd, recv_bwd;  // the sends into each stage, per micro-batch
    std::vector<per_chip> last_bucket, stage_last;           // per stage: its last bucket, its last operation
};

// HBM: each stream's collective region (its scratch and signal word; the collectives reduce and send the step's
// tensors where they lie) from the bottom of HBM, then the step's tensors (step_tensors.h), the last page for the
// barrier writes' signal word. Returns where the tensors start.
uint64_t whole_builder::place_regions() {
    const size_t elt = numerics::size_of(m.dtype);
    // HBM a collective's buffers take where full_chip_layout puts them (input, output, scratch, the signal word).
    auto collective_bytes = [&](const collective::schedule& s) {
        const tb::lowering_layout lay = tb::full_chip_layout(cfg, s);
        return lay.signal_word + PAGE - lay.input;
    };
    // Streams: 0 the passes, 1 the gradient buckets, 2 the forward sends, 3 the backward sends.
    uint64_t region[4] = {0, 0, 0, 0};
    if (p.tp > 1) region[0] = collective_bytes(schedule_of(groups.tp[0], opt.tp_algo, lp.activation_bytes));
    if (p.dp > 1)
        region[1] = collective_bytes(schedule_of(groups.dp[0], opt.dp_algo,
                                                 std::max(lp.layer_params_per_chip, 2 * lp.head_params_per_chip) * elt));
    if (S > 1) region[2] = region[3] = collective_bytes(sends_of(0, true));
    // Each region starts at a multiple of a power of two at least as large as the largest: below that power every
    // address has the channel it would have at the HBM base, up to a fixed permutation (the hash folds the bits
    // above onto the channel bits), so each collective meets the channel conflicts of its composed simulation.
    uint64_t align = PAGE, top = 0;
    for (uint64_t r : region)
        while (align < r) align *= 2;
    for (int k = 0; k < 4; ++k) {
        coll_base[k] = top;
        if (region[k]) top += align;
    }
    if (top + PAGE > cc.hbm.capacity_bytes)
        throw std::invalid_argument("the step's collectives need " + std::to_string(top >> 20) +
                                    " MiB of a chip's HBM (chip.hbm.capacity_gib)");
    return top;
}

void whole_builder::note(const per_chip& ids, const op_meta& mm) {
    for (op_id id : ids) {
        if (id == tb::op_sequence::NONE) continue;
        if (meta.size() <= id) meta.resize(id + 1);
        meta[id] = mm;
    }
}

// A local operation on every chip of stage st (the same programs: a stage's chips run the same shapes).
per_chip whole_builder::add_local(uint32_t st, const std::vector<core::core_program>& progs, const after_ids& after,
                                  const op_meta& mm) {
    per_chip ids(n, tb::op_sequence::NONE);
    for (uint32_t c : groups.chips[st])
        ids[c] = seq.add(c, 0, progs, after.empty() ? std::vector<op_id>{} : after[c], mm.name);
    note(ids, mm);
    return ids;
}

placed_tensor whole_builder::operand_of(const op_at& at, const layer_op& o, const std::string& role, uint32_t i) {
    for (const auto& [r, od] : o.io) {
        if (r != role) continue;
        placed_tensor t = mem[at.st].at(at.part, at.layer, at.mb, od.tensor);
        const uint64_t b = i / o.heads, j = i % o.heads;
        const uint64_t row = od.row + b * od.b_rows + i * od.i_rows, col = od.col + j / od.group * od.j_cols;
        t.addr += (row * t.cols + col) * (t.fp32 ? 4 : numerics::size_of(m.dtype));
        return t;
    }
    throw std::logic_error("operation " + o.name + " has no operand " + role);
}

// A GEMM's instances side by side, each on its operands where the step's tensors hold them.
std::vector<core::core_program> whole_builder::gemm_programs(const layer_op& o, const op_at& at) {
    return instances_side_by_side(cc, gemm_of(o, m.dtype), o.count, [&](uint32_t i) {
        tb::gemm_layout l;
        const placed_tensor a = operand_of(at, o, "a", i), b = operand_of(at, o, "b", i), c = operand_of(at, o, "c", i);
        l.a_addr = cc.hbm_base + a.addr, l.b_addr = cc.hbm_base + b.addr, l.c_addr = cc.hbm_base + c.addr;
        l.a_ld = a.cols, l.b_ld = b.cols, l.c_ld = c.cols;
        return l;
    });
}

std::vector<core::core_program> whole_builder::phase_programs(const layer_op& o, const std::string& name,
                                                              const std::map<std::string, placed_tensor>& bound) {
    phase_spec ps = phase_of(o, m.dtype);
    for (const auto& [role, t] : bound) ps.at[role] = {cc.hbm_base + t.addr, 0};
    for (const auto& info : phase_tensors(ps, cc.core.sbuf.partitions))  // rows x cols tensors: their tensor's pitch
        if (info.rows == ps.rows && info.cols == ps.cols && ps.at.count(info.name))
            ps.at[info.name].pitch = bound.at(info.name).cols;
    try {
        return compile_phase(cc, ps);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("model " + m.name + ", operation " + name + ": " + e.what());
    }
}

// A collective (schedule s) on the chips `members`, on `stream`, from `input` to `output` (offsets from the HBM
// base), its scratch in the stream's region.
per_chip whole_builder::collective_op(uint32_t stream, const collective::schedule& s,
                                      const std::vector<uint32_t>& members, const after_ids& after, const op_meta& mm,
                                      uint64_t input, uint64_t output) {
    tb::lowering_layout lay = tb::full_chip_layout(cfg, s, cc.hbm_base + coll_base[stream]);
    lay.sem_first = seq.sem_first();
    lay.notify_landing = true;
    lay.input = cc.hbm_base + input, lay.output = cc.hbm_base + output;  // on the step's tensors
    tb::collective_options co = step_collective(stream, cc.cores, p);
    co.in_place = input == output;
    tb::apply_options(lay, s, co);
    tb::lowered_collective low = tb::lower(s, lay);
    for (auto& chip : low.programs) chip.resize(cc.cores);  // the cores it leaves alone: empty programs
    per_chip ids = seq.add_all(stream, std::move(low.programs), after.empty() ? after_ids(n) : after, mm.name, members);
    note(ids, mm);
    return ids;
}

// One operation of a pass (at: its stage, part, layer and micro-batch); `first_after`: what the pass's first
// operation waits for (a receive).
per_chip whole_builder::run_op(const op_at& at, const layer_op& o, const std::string& prefix, bool bwd,
                               after_ids& first_after) {
    op_meta mm{prefix + o.name, "", at.mb, bwd};
    after_ids after;
    after.swap(first_after);
    mm.after_recv = !after.empty();
    if (o.k == layer_op::kind::gemm) {
        mm.kind = "gemm";
        return add_local(at.st, gemm_programs(o, at), after, mm);
    }
    if (o.k == layer_op::kind::phase) {
        mm.kind = "phase";
        std::map<std::string, placed_tensor> bound;
        for (const auto& io : o.io) bound[io.first] = operand_of(at, o, io.first, 0);
        return add_local(at.st, phase_programs(o, mm.name, bound), after, mm);
    }
    mm.kind = "tp_allreduce";
    const uint64_t x = operand_of(at, o, "x", 0).addr;
    return collective_op(STREAM_PASSES, schedule_of(groups.tp[at.st], opt.tp_algo, o.bytes), groups.chips[at.st], after,
                         mm, x, x);
}

// The activations (forward) or their gradients of micro-batch mb from stage `from` to its neighbour `to`, once
// `last` (from's last operation) is done: every (data, tensor) rank's pair at once.
per_chip whole_builder::send(uint32_t from, uint32_t to, const per_chip& last, uint32_t mb, bool forward) {
    after_ids after(n);
    for (uint32_t c : groups.chips[from]) after[c] = {last[c]};
    std::vector<uint32_t> members = groups.chips[std::min(from, to)];
    members.insert(members.end(), groups.chips[std::max(from, to)].begin(), groups.chips[std::max(from, to)].end());
    // Forward: the last layer's output into the next stage's received activations; backward: the gradients layer 0
    // sent back into the previous stage's received gradients.
    const uint64_t input = forward ? mem[from].at(step_part::layer, LS - 1, mb, "y").addr : mem[from].sent_grad(mb);
    const uint64_t output = forward ? mem[to].received(mb) : mem[to].received_grad(mb);
    return collective_op(forward ? STREAM_SENDS_FWD : STREAM_SENDS_BWD, sends_of(std::min(from, to), forward), members,
                         after,
                         {std::string("send ") + (forward ? "F" : "B") + std::to_string(mb) + " to stage " +
                              std::to_string(to),
                          "send", mb, !forward},
                         input, output);
}

// The gradients of layer l (l == LS: the stage's ends) all-reduced in place over the stage's dp groups.
void whole_builder::bucket(uint32_t st, uint32_t l, const per_chip& ready, const std::string& name) {
    after_ids after(n);
    for (uint32_t c : groups.chips[st]) after[c] = {ready[c]};
    const auto& f = mem[st].flat(l);
    last_bucket[st] = collective_op(STREAM_BUCKETS,
                                    schedule_of(groups.dp[st], opt.dp_algo, f.params * numerics::size_of(m.dtype)),
                                    groups.chips[st], after, {name, "dp_allreduce", uint32_t(M - 1), true}, f.g, f.g);
}

// The passes in an order every stage's 1F1B order keeps (stage s's F(i) after stage s - 1's, B(i) after stage
// s + 1's): the 1F1B schedule of unit passes, by start time.
void whole_builder::add_passes() {
    struct pass_event {
        double at;
        uint32_t stage;
        char kind;
        uint32_t mb;
    };
    std::vector<pass_event> order;
    const auto spans = schedule_1f1b(std::vector<std::vector<double>>(S, std::vector<double>(M, 1.0)),
                                     std::vector<std::vector<double>>(S, std::vector<double>(M, 1.0)), 0.0);
    for (uint32_t st = 0; st < S; ++st)
        for (const auto& sp : spans[st]) order.push_back({sp.begin_ns, st, sp.kind, sp.micro_batch});
    std::stable_sort(order.begin(), order.end(), [](const pass_event& a, const pass_event& b) {
        return a.at != b.at ? a.at < b.at : a.stage < b.stage;
    });
    recv_fwd.assign(S, std::vector<per_chip>(M));
    recv_bwd.assign(S, std::vector<per_chip>(M));
    last_bucket.assign(S, {});
    stage_last.assign(S, {});
    const bool dp = p.dp > 1;
    for (const auto& ev : order) {
        const uint32_t st = ev.stage, mb = ev.mb;
        per_chip last;
        after_ids first_after;
        auto waits_on = [&](const per_chip& recv) {
            first_after.assign(n, {});
            for (uint32_t c : groups.chips[st]) first_after[c] = {recv[c]};
        };
        auto layer_name = [&](uint32_t l) { return "L" + std::to_string(st * LS + l) + " "; };
        if (ev.kind == 'F') {
            if (st > 0) waits_on(recv_fwd[st][mb]);
            if (st == 0)
                for (const auto& o : lp.embed_fwd) last = run_op({st, step_part::embed, 0, mb}, o, "", false, first_after);
            for (uint32_t l = 0; l < LS; ++l)
                for (const auto& o : lp.fwd)
                    last = run_op({st, step_part::layer, l, mb}, o, layer_name(l), false, first_after);
            if (st == S - 1)
                for (const auto& o : lp.head_fwd) last = run_op({st, step_part::head, 0, mb}, o, "", false, first_after);
            if (st + 1 < S) recv_fwd[st + 1][mb] = send(st, st + 1, last, mb, true);
        } else {
            if (st + 1 < S) waits_on(recv_bwd[st][mb]);
            if (st == S - 1)
                for (const auto& o : lp.head_bwd) last = run_op({st, step_part::head, 0, mb}, o, "", true, first_after);
            for (uint32_t l = LS; l-- > 0;) {
                for (const auto& o : lp.bwd)
                    last = run_op({st, step_part::layer, l, mb}, o, layer_name(l), true, first_after);
                if (dp && mb + 1 == M) bucket(st, l, last, "bucket layer " + std::to_string(st * LS + l));
            }
            if (st > 0) recv_bwd[st - 1][mb] = send(st, st - 1, last, mb, false);
            mem[st].release(mb);  // the stage is done with the micro-batch's activations
        }
        stage_last[st] = last;
    }
}

// The embedding's and the head's gradients (stage 0 and the last stage) after the stage's backward; Adam once every
// gradient of the stage is reduced (gradient clipping needs them all), after the backward on stream 0.
void whole_builder::add_buckets_and_adam() {
    const bool dp = p.dp > 1;
    for (uint32_t st = 0; st < S; ++st) {
        const uint64_t ends = (st == 0 ? 1 : 0) + (st == S - 1 ? 1 : 0);
        if (dp && ends)
            bucket(st, LS, stage_last[st],
                   st == 0 && S > 1 ? "bucket embedding" : st == 0 ? "bucket embedding/head" : "bucket head");
        after_ids adam_after(n);
        if (dp)
            for (uint32_t c : groups.chips[st]) adam_after[c] = {last_bucket[st][c]};
        // Adam on layer l's flat buffers (l == LS: the ends'): the master weights and moments in place, the
        // gradients in, the model-dtype weights the next step reads out.
        auto adam = [&](uint32_t l, const std::string& name) {
            const auto& f = mem[st].flat(l);
            const uint64_t cols = (f.params + 127) / 128;
            const std::map<std::string, placed_tensor> bound = {{"param", {f.master, cols, true}}, {"m", {f.m, cols, true}},
                                                                {"v", {f.v, cols, true}}, {"grad", {f.g, cols, false}},
                                                                {"w", {f.w, cols, false}}};
            add_local(st, phase_programs(adam_op(f.params, name), name, bound), adam_after,
                      {name, "adam", uint32_t(M - 1), false});
            for (auto& a : adam_after) a.clear();  // the stream orders the rest
        };
        for (uint32_t l = LS; l-- > 0;) adam(l, "adam layer " + std::to_string(st * LS + l));
        if (ends) adam(LS, S == 1 ? "adam embedding/head" : st == 0 ? "adam embedding" : "adam head");
    }
}

whole_result whole_builder::run(std::chrono::steady_clock::time_point t0) {
    whole_result r;
    r.operations = seq.operations();
    r.barrier_writes = seq.barrier_writes();
    tb::op_sequence::owner_map owners;
    auto programs = seq.finish(&owners);
    size_t to_spawn = 0;
    for (const auto& chip : programs)
        for (const auto& pr : chip) {
            to_spawn += core::neuron_core::threads_for(pr);
            r.instructions += pr.instructions();
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
        for (uint32_t k = 0; k < cc.cores; ++k) {
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
    r.setup_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    tb::sim_probe probe = tb::make_cores_probe(all);
    probe.progress_text = [&] {
        size_t done = 0;
        for (auto* k : all) done += k->finished();
        return std::to_string(done) + "/" + std::to_string(all.size()) + " cores finished the step";
    };
    r.wall_s = tb::run_to_completion(probe, opt.sim);
    measure(r, begin, end, plat);
    return r;
}

// Every chip's breakdown (whole_breakdown), each stage's chip that finished last, the one that finished last.
void whole_builder::measure(whole_result& r, const std::vector<double>& begin, const std::vector<double>& end,
                            platform::multichip_platform& plat) {
    r.per_chip.resize(n);
    for (uint32_t st = 0; st < S; ++st)
        for (uint32_t c : groups.chips[st]) r.per_chip[c].stage = st;
    for (uint32_t c = 0; c < n; ++c) {
        std::vector<core::neuron_core*> cores;
        for (auto& k : plat.full_chip(c)->cores) cores.push_back(k.get());
        r.per_chip[c].chip = c;
        r.per_chip[c].end_ns = tb::last_completion(cores).to_seconds() * 1e9;
    }
    std::vector<std::vector<op_id>> on_chip(n);  // the operations of each chip that ran, in the order added
    for (op_id o = 0; o < meta.size(); ++o) {
        if (end[o] == 0) continue;
        r.spans.push_back({meta[o].name, meta[o].kind, seq.chip_of(o), meta[o].micro_batch, begin[o], end[o]});
        on_chip[seq.chip_of(o)].push_back(o);
    }
    for (uint32_t c = 0; c < n; ++c) {
        auto& b = r.per_chip[c];
        double pass_end = 0;  // the end of the chip's latest pass operation so far (stream 0 runs them in order)
        for (op_id o : on_chip[c]) {
            const auto& mm = meta[o];
            const double t = end[o] - begin[o];
            if (mm.kind == "gemm") b.gemm_ns += t;
            else if (mm.kind == "phase") b.phase_ns += t;
            else if (mm.kind == "tp_allreduce") b.tp_ns += t;
            else if (mm.kind == "adam") b.optimizer_ns += t;
            else if (mm.kind == "dp_allreduce") b.dp_end_ns = std::max(b.dp_end_ns, end[o]);
            if (mm.backward && mm.kind != "dp_allreduce" && mm.kind != "send")
                b.backward_end_ns = std::max(b.backward_end_ns, end[o]);
            if (mm.kind == "gemm" || mm.kind == "phase" || mm.kind == "tp_allreduce") {
                if (mm.after_recv) b.bubble_ns += std::max(0.0, begin[o] - pass_end);
                pass_end = std::max(pass_end, end[o]);
            }
        }
        b.dp_exposed_ns = std::max(0.0, b.dp_end_ns - b.backward_end_ns);
        b.sync_ns = b.end_ns - (b.gemm_ns + b.phase_ns + b.tp_ns + b.optimizer_ns + b.dp_exposed_ns + b.bubble_ns);
    }
    r.stage_critical.assign(S, 0);
    for (uint32_t st = 0; st < S; ++st) {
        double e = -1;
        for (uint32_t c : groups.chips[st])
            if (r.per_chip[c].end_ns > e) e = r.per_chip[c].end_ns, r.stage_critical[st] = c;
    }
    for (uint32_t c = 0; c < n; ++c)
        if (r.per_chip[c].end_ns > r.per_chip[r.critical_chip].end_ns) r.critical_chip = c;
    const whole_breakdown& k = r.per_chip[r.critical_chip];
    r.step_ns = k.end_ns;
    r.gemm_ns = k.gemm_ns, r.phase_ns = k.phase_ns, r.tp_ns = k.tp_ns, r.optimizer_ns = k.optimizer_ns;
    r.dp_exposed_ns = k.dp_exposed_ns, r.bubble_ns = k.bubble_ns, r.sync_ns = k.sync_ns;
    r.backward_end_ns = k.backward_end_ns, r.dp_end_ns = k.dp_end_ns;
    r.tokens_per_s = double(m.global_batch) * m.seq / (r.step_ns * 1e-9);
    const double peak = tb::chip_peak_tflops(cc, m.dtype);
    r.mfu = peak > 0 ? step_model_flops(m, p, lp) / (r.step_ns * 1e-9) / (peak * 1e12 * n) : 0;
}

}  // namespace

whole_result run_whole_step(const platform::platform_config& cfg, const model_spec& m, const parallel_plan& p,
                            const whole_options& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    check_whole(cfg, m, p);
    // The all-reduces run in place on the step's activations and gradient buckets.
    for (auto [what, a, used] : {std::tuple<const char*, collective::algo, bool>{"--tp-algo", opt.tp_algo, p.tp > 1},
                                 {"--dp-algo", opt.dp_algo, p.dp > 1}})
        if (used && a != collective::algo::ring && a != collective::algo::bidir_ring && a != collective::algo::torus)
            throw std::invalid_argument(std::string("--whole ") + what + " " + std::string(collective::name_of(a)) +
                                        ": the step all-reduces its activations and gradients in place, which a ring, "
                                        "bidir_ring or torus all-reduce does");
    whole_builder b(cfg, m, p, opt);
    b.add_passes();
    b.add_buckets_and_adam();
    return b.run(t0);
}

}  // namespace trnsim::train

#include "testbench/workloads/train/whole_step.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "models/collective/groups.h"
#include "models/core/neuron_core.h"
#include "platforms/single_chip/chip.h"
#include "testbench/chip_probe.h"
#include "testbench/verification/golden/golden_transformer.h"
#include "testbench/stimulus.h"
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

// Appends program b to a on the same core: b's semaphores above a's, its instructions after a's in every queue, and
// none of them started before the program appended last (its semaphores from `last_first`) has finished: they reuse
// its SBUF buffers and PSUM accumulators (earlier programs finished before that one started). `last_first` becomes
// b's first semaphore.
void append_program(core::core_program& a, core::core_program&& b, uint32_t& last_first) {
    const uint32_t off = a.semaphores;
    std::vector<core::sem_wait> join;  // the last program's semaphores at their final counts
    {
        std::vector<uint64_t> count(a.semaphores - last_first, 0);
        auto tally = [&](const std::vector<core::instruction>& q) {
            for (const auto& in : q)
                if (in.signal >= int32_t(last_first)) ++count[size_t(in.signal) - last_first];
        };
        tally(a.te), tally(a.vector), tally(a.scalar);
        for (const auto& q : a.dma) tally(q);
        for (size_t i = 0; i < count.size(); ++i)
            if (count[i]) join.push_back({uint32_t(last_first + i), count[i]});
    }
    auto move_all = [&](std::vector<core::instruction>& to, std::vector<core::instruction>& from) {
        bool first = true;
        for (auto& in : from) {
            for (auto& w : in.waits) w.sem += off;
            if (in.signal >= 0) in.signal += int32_t(off);
            if (first) in.waits.insert(in.waits.end(), join.begin(), join.end());
            first = false;
            to.push_back(std::move(in));
        }
    };
    move_all(a.te, b.te);
    move_all(a.vector, b.vector);
    move_all(a.scalar, b.scalar);
    if (a.dma.size() < b.dma.size()) a.dma.resize(b.dma.size());
    for (size_t q = 0; q < b.dma.size(); ++q) move_all(a.dma[q], b.dma[q]);
    a.semaphores += b.semaphores;
    last_first = off;
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
    std::vector<uint32_t> last_first(cc.cores, 0);
    for (uint32_t j = 0; j < count; ++j) {
        auto progs = tb::compile_gemm(g, layout_of(j), cc, 0, j % cc.cores);
        for (uint32_t k = 0; k < cc.cores; ++k) append_program(out[k], std::move(progs[k]), last_first[k]);
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
    nlohmann::json ck = nlohmann::json::array();
    for (const auto& c : checks)
        ck.push_back({{"name", c.name}, {"rel_err", c.rel_err}, {"tolerance", c.tolerance}, {"pass", c.pass}});
    nlohmann::json sp = nlohmann::json::array();
    for (const auto& x : spans)
        sp.push_back({{"name", x.name}, {"kind", x.kind}, {"chip", x.chip}, {"micro_batch", x.micro_batch},
                      {"begin_ns", x.begin_ns}, {"end_ns", x.end_ns}, {"last_core", x.last_core}, {"lag_ns", x.lag_ns}});
    return {{"step_ns", step_ns}, {"critical_chip", critical_chip}, {"tokens_per_s", tokens_per_s}, {"mfu", mfu},
            {"breakdown_ns", {{"gemm", gemm_ns}, {"phase", phase_ns}, {"tp_comm", tp_ns}, {"optimizer", optimizer_ns},
                              {"dp_comm_exposed", dp_exposed_ns}, {"bubble", bubble_ns}, {"sync", sync_ns}}},
            {"per_chip", pc}, {"stage_critical_chip", stage_critical},
            {"backward_end_ns", backward_end_ns}, {"dp_end_ns", dp_end_ns}, {"operations", operations},
            {"barrier_writes", barrier_writes}, {"instructions", instructions}, {"setup_wall_s", setup_wall_s},
            {"wall_s", wall_s}, {"spans", sp}, {"checked", checked}, {"pass", pass}, {"checks", ck}};
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

// --- the functional check of the decoder stack (whole_options::check) -------------------------------------------

namespace golden = tb::golden;

// x as dtype t stores it.
double stored(double x, numerics::dtype t) {
    float f = float(x);
    uint8_t b[4];
    numerics::encode(t, &f, b, 1);
    numerics::decode(t, b, &f, 1);
    return f;
}

// The data of a checked step (seeded) and its FP64 reference: the whole model's weights (every layer's full
// matrices, the embedding's and the head's; a chip holds its tensor-parallel shard), Adam's moments, RoPE's tables,
// and per replica either its tokens (the step's, step_tokens: the input activations are their embedding rows) and
// labels (the loss is the sum of the tokens' cross-entropies), or, for the stack alone, its input activations and
// the gradient of the stack's output; the reference's outputs, probabilities, input gradients, gradients summed over
// the replicas and micro-batches (the embedding's: every token's input gradient added into its row), and the Adam
// updates.
class stack_check {
public:
    // `tokens`: per replica, the step's tokens the chips' row moves follow (with the head and the embedding).
    stack_check(const model_spec& m, const parallel_plan& p, const layer_plan& lp, uint64_t seed, bool head,
                const std::vector<std::vector<uint32_t>>& tokens)
        : m(m), p(p), lp(lp), head(head), M(p.micro_batches(m)), T(uint64_t(p.micro_batch) * m.seq), H(m.hidden),
          d(m.head_dim()), h(m.heads / p.tp), F(m.ffn / p.tp), V(m.vocab / p.tp), tokens(tokens) {
        tb::rng g(seed * 0x9E3779B97F4A7C15ull + 42);
        auto rnd = [&](uint32_t rows, uint32_t cols, double lo, double hi, bool model_dtype) {
            golden::mat a(rows, cols);
            for (auto& v : a.v) v = lo + (hi - lo) * g.uniform(), v = model_dtype ? stored(v, m.dtype) : double(float(v));
            return a;
        };
        const double a = 1.0 / std::sqrt(double(H)), ao = 1.0 / std::sqrt(double(m.heads * d)), af = 1.0 / std::sqrt(double(m.ffn));
        const uint32_t qd = m.heads * d, kd = m.kv_heads * d;
        // RoPE: position i of a sequence, frequency base^(-2k/d) for column k of each half of a head.
        golden::mat cs(m.seq, d), sn(m.seq, d);
        for (uint32_t i = 0; i < m.seq; ++i)
            for (uint32_t o = 0; o < d; ++o) {
                const double ang = i * std::pow(10000.0, -2.0 * (o % (d / 2)) / d);
                cs(i, o) = stored(std::cos(ang), m.dtype), sn(i, o) = stored(std::sin(ang), m.dtype);
            }
        for (uint32_t l = 0; l < m.layers; ++l) {
            golden::decoder_weights w;
            w.wq = rnd(H, qd, -a, a, true), w.wk = rnd(H, kd, -a, a, true), w.wv = rnd(H, kd, -a, a, true);
            w.wo = rnd(qd, H, -ao, ao, true), w.w1 = rnd(H, m.ffn, -a, a, true), w.w3 = rnd(H, m.ffn, -a, a, true);
            w.w2 = rnd(m.ffn, H, -af, af, true), w.g1 = rnd(1, H, 0.8, 1.2, true), w.g2 = rnd(1, H, 0.8, 1.2, true);
            w.kv_heads = m.kv_heads, w.rope_cos = cs, w.rope_sin = sn;
            weights.push_back(w);
            golden::decoder_weights mo = w, ve = w;  // Adam's moments, FP32, in the weights' shapes
            for (auto f : {&golden::decoder_weights::wq, &golden::decoder_weights::wk, &golden::decoder_weights::wv,
                            &golden::decoder_weights::wo, &golden::decoder_weights::w1, &golden::decoder_weights::w3,
                            &golden::decoder_weights::w2, &golden::decoder_weights::g1, &golden::decoder_weights::g2}) {
                mo.*f = rnd((w.*f).rows, (w.*f).cols, -1e-3, 1e-3, false);
                ve.*f = rnd((w.*f).rows, (w.*f).cols, 0.0, 1e-6, false);
            }
            moment1.push_back(mo), moment2.push_back(ve);
        }
        // The head: the output projection (hidden x vocab) and the final norm's gain; their Adam moments. The
        // embedding (vocab x hidden) and its moments.
        wout = rnd(H, m.vocab, -a, a, true), gf = rnd(1, H, 0.8, 1.2, true);
        wout_m = rnd(H, m.vocab, -1e-3, 1e-3, false), wout_v = rnd(H, m.vocab, 0.0, 1e-6, false);
        gf_m = rnd(1, H, -1e-3, 1e-3, false), gf_v = rnd(1, H, 0.0, 1e-6, false);
        if (head)
            wemb = rnd(m.vocab, H, -1, 1, true), wemb_m = rnd(m.vocab, H, -1e-3, 1e-3, false),
            wemb_v = rnd(m.vocab, H, 0.0, 1e-6, false);
        // Per replica, its micro-batches' rows one after another (labels: a token each).
        for (uint32_t r = 0; r < p.dp; ++r) {
            if (head) {  // the tokens' embedding rows
                golden::mat xr(uint32_t(M * T), H);
                for (uint64_t i = 0; i < M * T; ++i)
                    for (uint32_t c = 0; c < H; ++c) xr(uint32_t(i), c) = wemb(tokens[r][i], c);
                x.push_back(xr), dy.emplace_back();
            } else {
                x.push_back(rnd(uint32_t(M * T), H, -1, 1, true)), dy.push_back(rnd(uint32_t(M * T), H, -1, 1, true));
            }
            std::vector<uint32_t> lab(M * T);
            for (auto& l : lab) l = uint32_t(g.uniform() * m.vocab) % m.vocab;
            labels.push_back(lab);
        }
        reference();
    }

    // Writes a chip's data: stage st (its layers from layer st * LS), replica r, tensor-parallel rank t.
    void stage(platform::chip& chip, uint64_t base, step_tensors& mem, uint32_t st, uint32_t LS, uint32_t r, uint32_t t,
               bool first, bool last) const {
        for (uint32_t l = 0; l < LS; ++l) {
            const auto& f = mem.flat(l);
            const auto& w = weights[st * LS + l];
            const std::vector<double> wf = flat_of(w, t);
            write(chip, base + f.w, wf, m.dtype);
            write(chip, base + f.master, wf, numerics::dtype::fp32);
            write(chip, base + f.m, flat_of(moment1[st * LS + l], t), numerics::dtype::fp32);
            write(chip, base + f.v, flat_of(moment2[st * LS + l], t), numerics::dtype::fp32);
        }
        // RoPE's tables over the chip's q|k columns (its heads, then its key heads), sin negated for the backward.
        const uint64_t qk = (h + m.kv_heads / p.tp) * d;
        std::vector<double> c(T * qk), sn(T * qk), ns(T * qk);
        const auto& w0 = weights[0];
        for (uint64_t i = 0; i < T; ++i)
            for (uint64_t k = 0; k < qk; ++k) {
                const uint32_t pos = uint32_t(i % m.seq), o = uint32_t(k % d);
                c[i * qk + k] = w0.rope_cos(pos, o), sn[i * qk + k] = w0.rope_sin(pos, o), ns[i * qk + k] = -sn[i * qk + k];
            }
        write(chip, base + mem.at(step_part::layer, 0, 0, "cos").addr, c, m.dtype);
        write(chip, base + mem.at(step_part::layer, 0, 0, "sin").addr, sn, m.dtype);
        write(chip, base + mem.at(step_part::layer, 0, 0, "nsin").addr, ns, m.dtype);
        if (first && head) write(chip, base + mem.at(step_part::embed, 0, 0, "zero").addr, std::vector<double>(H, 0.0), m.dtype);
        for (uint64_t mb = 0; mb < M; ++mb) {
            if (first && !head) write(chip, base + mem.received(mb), slice(x[r], mb), m.dtype);
            if (last && !head) write(chip, base + mem.received_grad(mb), slice(dy[r], mb), m.dtype);
            if (last && head) {  // -1 at each token's label in the chip's vocabulary shard
                std::vector<double> lv(T * V, 0.0);
                for (uint64_t i = 0; i < T; ++i) {
                    const uint32_t l = labels[r][mb * T + i];
                    if (l / V == t) lv[i * V + l % V] = -1.0;
                }
                write(chip, base + mem.labels(uint32_t(mb)), lv, m.dtype);
            }
        }
        if ((first || last) && head) {  // the ends: the embedding's shard (first stage), the head's (last)
            const auto& f = mem.flat(LS);
            const std::vector<double> wf = ends_flat(wemb, wout, gf, t, first, last);
            write(chip, base + f.w, wf, m.dtype);
            write(chip, base + f.master, wf, numerics::dtype::fp32);
            write(chip, base + f.m, ends_flat(wemb_m, wout_m, gf_m, t, first, last), numerics::dtype::fp32);
            write(chip, base + f.v, ends_flat(wemb_v, wout_v, gf_v, t, first, last), numerics::dtype::fp32);
        }
    }

    // Compares a chip's results with the reference: its output (last stage: the last micro-batch's, at y_addr), its
    // input gradient of every micro-batch (first stage), every layer's reduced gradients and Adam's update of its
    // master weights.
    void verify(platform::chip& chip, uint64_t base, step_tensors& mem, uint32_t chip_id, uint32_t st, uint32_t LS,
                uint32_t r, uint32_t t, bool first, bool last, uint64_t y_addr, uint64_t probs_addr,
                whole_result& res) const {
        const double u = numerics::dtype::fp32 == m.dtype ? 0x1.0p-24 : m.dtype == numerics::dtype::fp16 ? 0x1.0p-11 : 0x1.0p-8;
        const std::string c = "chip " + std::to_string(chip_id) + " ";
        // Tolerances (normwise): the single-core decoder's for FP32 engine math and activation approximations (2e-5
        // forward, 1e-4 backward), plus the model dtype's rounding of every stored intermediate (u: half an ulp), a few
        // u a layer as measured (BF16, 2 layers: output 1.9 u, gradients up to 2 u).
        // The weights' gradients are also summed over the micro-batches in the model dtype: one rounding (u) per
        // micro-batch after the first.
        // The head counts as a layer more.
        const double layers = double(m.layers) + (head ? 1.0 : 0.0);
        const double fwd = 3.0 * u * layers + 2e-5, bwd = 5.0 * u * layers + 1e-4, acc = u * double(M - 1);
        if (last) compare(res, c + "output", read(chip, base + y_addr, T * H, m.dtype), slice(y[r], M - 1), fwd);
        if (last && head) {  // the probabilities of the chip's vocabulary shard, the last micro-batch
            std::vector<double> want(T * V);
            for (uint64_t i = 0; i < T; ++i)
                for (uint64_t v = 0; v < V; ++v) want[i * V + v] = probs[r]((M - 1) * T + i, uint32_t(t * V + v));
            compare(res, c + "probabilities", read(chip, base + probs_addr, T * V, m.dtype), want, fwd);
        }
        if ((first || last) && head) {  // the ends' gradients (the embedding's, the head's) and their update
            const auto& f = mem.flat(LS);
            const std::vector<double> g = read(chip, base + f.g, f.params, m.dtype);
            const std::vector<double> want = ends_flat(dwemb, dwout, dgf, t, first, last);
            const size_t emb = first ? size_t(V) * H : 0;
            // The embedding's rows are summed in the model dtype, a rounding per token that adds to a row.
            if (first)
                compare(res, c + "embedding gradients", {g.begin(), g.begin() + int64_t(emb)},
                        {want.begin(), want.begin() + int64_t(emb)}, bwd + u * double(most_copies));
            if (last)
                compare(res, c + "head gradients", {g.begin() + int64_t(emb), g.end()},
                        {want.begin() + int64_t(emb), want.end()}, bwd + acc);
            const std::string ends = first && last ? "embedding/head " : first ? "embedding " : "head ";
            adam_check(res, chip, base, f, c + ends, ends_flat(wemb, wout, gf, t, first, last),
                       ends_flat(wemb_m, wout_m, gf_m, t, first, last), ends_flat(wemb_v, wout_v, gf_v, t, first, last), g);
        }
        for (uint64_t mb = 0; first && !head && mb < M; ++mb)
            compare(res, c + "input gradient" + (M > 1 ? " (micro-batch " + std::to_string(mb) + ")" : ""),
                    read(chip, base + mem.sent_grad(mb), T * H, m.dtype), slice(dx[r], mb), bwd);
        for (uint32_t l = 0; l < LS; ++l) {
            const uint32_t gl = st * LS + l;
            const auto& f = mem.flat(l);
            const std::string at = c + "layer " + std::to_string(gl) + " ";
            const std::vector<double> g = read(chip, base + f.g, f.params, m.dtype);
            compare(res, at + "gradients", g, flat_of(grads[gl], t), bwd + acc);
            adam_check(res, chip, base, f, at, flat_of(weights[gl], t), flat_of(moment1[gl], t),
                       flat_of(moment2[gl], t), g);
        }
    }

private:
    // Adam's update of the master weights p0 (moments m1, m2) from the gradients g the chip reduced (checked apart),
    // as the phases are checked on their inputs.
    static void adam_check(whole_result& res, platform::chip& chip, uint64_t base, const step_tensors::flat_buffers& f,
                           const std::string& at, std::vector<double> p0, std::vector<double> m1,
                           std::vector<double> m2, const std::vector<double>& g) {
        std::vector<double> pw = p0;
        adam_reference(pw, m1, m2, g);
        std::vector<double> got = read(chip, base + f.master, f.params, numerics::dtype::fp32);
        double pmax = 0;
        for (size_t i = 0; i < p0.size(); ++i) got[i] -= p0[i], pw[i] -= p0[i], pmax = std::max(pmax, std::fabs(p0[i]));
        // The update: lr-sized (it would vanish in the weights' own error); plus the FP32 rounding of p'.
        double umax = 0;
        for (double v : pw) umax = std::max(umax, std::fabs(v));
        compare(res, at + "Adam update", got, pw, 1e-4 + (umax > 0 ? 2.0 * pmax * 0x1.0p-24 / umax : 0.0));
    }
    // The ends' weights (or moments, gradients) as rank t of the first and / or last stage holds them: its rows of
    // the embedding, then the head's.
    std::vector<double> ends_flat(const golden::mat& emb, const golden::mat& w, const golden::mat& g, uint32_t t,
                                  bool first, bool last) const {
        std::vector<double> out;
        if (first) out.assign(emb.v.begin() + int64_t(uint64_t(t) * V * H), emb.v.begin() + int64_t(uint64_t(t + 1) * V * H));
        if (last) {
            const std::vector<double> h = head_flat(w, g, t);
            out.insert(out.end(), h.begin(), h.end());
        }
        return out;
    }
    // The head's weights as rank t holds them: its columns of the output projection, then the final norm's gain.
    std::vector<double> head_flat(const golden::mat& w, const golden::mat& g, uint32_t t) const {
        std::vector<double> out;
        for (const auto& dcl : lp.head_tensors) {
            if (dcl.scope != tensor_scope::weight) continue;
            for (uint32_t i = 0; i < dcl.rows; ++i)
                for (uint32_t c = 0; c < dcl.cols; ++c) {
                    if (dcl.name == "wout") out.push_back(w(i, uint32_t(t * V + c)));
                    else if (dcl.name == "gf") out.push_back(g(0, c));
                    else throw std::logic_error("stack check: head weight " + dcl.name);
                }
        }
        return out;
    }
    // The head on the stack's output y of one micro-batch: p = softmax(norm(y) gf Wout); the gradient of the summed
    // cross-entropies with respect to y (returned) and, summed in, to Wout and gf.
    golden::mat head_step(const golden::mat& y, const std::vector<uint32_t>& lab, uint64_t first, golden::mat& p) {
        golden::norm_state ns;
        const golden::mat hn = golden::norm_forward(y, gf, nullptr, 1e-5, ns);
        p = golden::matmul(hn, wout);
        for (uint32_t i = 0; i < p.rows; ++i) {
            double mx = -INFINITY, sum = 0;
            for (uint32_t v = 0; v < p.cols; ++v) mx = std::max(mx, p(i, v));
            for (uint32_t v = 0; v < p.cols; ++v) sum += (p(i, v) = std::exp(p(i, v) - mx));
            for (uint32_t v = 0; v < p.cols; ++v) p(i, v) /= sum;
        }
        golden::mat dl = p;
        for (uint32_t i = 0; i < dl.rows; ++i) dl(i, lab[first + i]) -= 1.0;
        acc(dwout, golden::matmul_tn(hn, dl));
        golden::mat dg, db;
        golden::mat dyv = golden::norm_backward(golden::matmul_nt(dl, wout), gf, false, ns, dg, db);
        acc(dgf, dg);
        return dyv;
    }

    void reference() {
        const uint32_t S = m.seq;
        grads.assign(m.layers, golden::decoder_weights{});
        for (uint32_t l = 0; l < m.layers; ++l) grads[l] = zero_like(weights[l]);
        dwout = golden::mat(H, m.vocab), dgf = golden::mat(1, H), dwemb = golden::mat(m.vocab, H);
        for (uint32_t r = 0; r < p.dp; ++r) {
            y.emplace_back(uint32_t(M * T), H), dx.emplace_back(uint32_t(M * T), H);
            probs.emplace_back(head ? uint32_t(M * T) : 0u, head ? m.vocab : 0u);
            for (uint64_t b = 0; b < M * p.micro_batch; ++b) {
                std::vector<golden::mat> xs{rows(x[r], uint32_t(b * S), S)};
                for (uint32_t l = 0; l < m.layers; ++l)
                    xs.push_back(golden::decoder(xs[l], weights[l], m.heads, true, 1e-5, nullptr, nullptr));
                put_rows(y[r], xs.back(), uint32_t(b * S));
                golden::mat g = rows(dy[r], uint32_t(b * S), S);
                if (head) {
                    golden::mat pb;
                    g = head_step(xs.back(), labels[r], b * S, pb);
                    put_rows(probs[r], pb, uint32_t(b * S));
                }
                for (uint32_t l = m.layers; l-- > 0;) {
                    golden::decoder_grads gr;
                    golden::decoder(xs[l], weights[l], m.heads, true, 1e-5, &g, &gr);
                    auto& s = grads[l];
                    acc(s.wq, gr.dwq), acc(s.wk, gr.dwk), acc(s.wv, gr.dwv), acc(s.wo, gr.dwo), acc(s.w1, gr.dw1);
                    acc(s.w3, gr.dw3), acc(s.w2, gr.dw2), acc(s.g1, gr.dg1), acc(s.g2, gr.dg2);
                    g = gr.dx;
                }
                put_rows(dx[r], g, uint32_t(b * S));
                for (uint32_t i = 0; head && i < S; ++i)  // each token's input gradient into its embedding row
                    for (uint32_t c = 0; c < H; ++c) dwemb(tokens[r][b * S + i], c) += g(i, c);
            }
        }
        // The most tokens that add to one embedding row, over all replicas (a gradient tolerance).
        std::map<uint32_t, uint64_t> copies;
        for (const auto& tr : tokens)
            for (uint32_t tok : tr) most_copies = std::max(most_copies, ++copies[tok]);
    }
    static golden::decoder_weights zero_like(const golden::decoder_weights& w) {
        golden::decoder_weights z;
        z.wq = golden::mat(w.wq.rows, w.wq.cols), z.wk = golden::mat(w.wk.rows, w.wk.cols);
        z.wv = golden::mat(w.wv.rows, w.wv.cols), z.wo = golden::mat(w.wo.rows, w.wo.cols);
        z.w1 = golden::mat(w.w1.rows, w.w1.cols), z.w3 = golden::mat(w.w3.rows, w.w3.cols);
        z.w2 = golden::mat(w.w2.rows, w.w2.cols), z.g1 = golden::mat(1, w.g1.cols), z.g2 = golden::mat(1, w.g2.cols);
        return z;
    }
    static void acc(golden::mat& a, const golden::mat& b) {
        for (size_t i = 0; i < a.v.size(); ++i) a.v[i] += b.v[i];
    }
    static golden::mat rows(const golden::mat& a, uint32_t r0, uint32_t n) {
        golden::mat o(n, a.cols);
        std::copy(a.v.begin() + uint64_t(r0) * a.cols, a.v.begin() + uint64_t(r0 + n) * a.cols, o.v.begin());
        return o;
    }
    // Micro-batch mb's T rows of a replica's tensor.
    std::vector<double> slice(const golden::mat& a, uint64_t mb) const {
        return {a.v.begin() + int64_t(mb * T * a.cols), a.v.begin() + int64_t((mb + 1) * T * a.cols)};
    }
    static void put_rows(golden::mat& a, const golden::mat& b, uint32_t r0) {
        std::copy(b.v.begin(), b.v.end(), a.v.begin() + uint64_t(r0) * a.cols);
    }
    // A layer's tensors (weights, gradients or moments) as tensor-parallel rank t holds them: its shard of every
    // weight (layer_plan.h: qkv its query heads' columns then its key and value heads'; gate|up its columns of each;
    // the output and down projections' rows), in the order the plan declares the weights.
    std::vector<double> flat_of(const golden::decoder_weights& w, uint32_t t) const {
        const uint64_t hd = h * d, kvd = uint64_t(m.kv_heads / p.tp) * d;
        std::vector<double> out;
        for (const auto& dcl : lp.layer_tensors) {
            if (dcl.scope != tensor_scope::weight) continue;
            for (uint32_t i = 0; i < dcl.rows; ++i)
                for (uint32_t c = 0; c < dcl.cols; ++c) {
                    const std::string& n = dcl.name;
                    double v = 0;
                    if (n == "wqkv") v = c < hd ? w.wq(i, uint32_t(t * hd + c)) : c < hd + kvd ? w.wk(i, uint32_t(t * kvd + c - hd))
                                                                                     : w.wv(i, uint32_t(t * kvd + c - hd - kvd));
                    else if (n == "wo") v = w.wo(uint32_t(t * hd + i), c);
                    else if (n == "wgu") v = c < F ? w.w1(i, uint32_t(t * F + c)) : w.w3(i, uint32_t(t * F + c - F));
                    else if (n == "wd") v = w.w2(uint32_t(t * F + i), c);
                    else if (n == "g1") v = w.g1(0, c);
                    else if (n == "g2") v = w.g2(0, c);
                    else throw std::logic_error("stack check: weight " + n);
                    out.push_back(v);
                }
        }
        return out;
    }
    static void write(platform::chip& chip, uint64_t addr, const std::vector<double>& v, numerics::dtype t) {
        std::vector<float> f(v.begin(), v.end());
        std::vector<uint8_t> raw(f.size() * numerics::size_of(t));
        numerics::encode(t, f.data(), raw.data(), f.size());
        chip.host_write(addr, raw.data(), raw.size());
    }
    static std::vector<double> read(platform::chip& chip, uint64_t addr, uint64_t n, numerics::dtype t) {
        std::vector<uint8_t> raw(n * numerics::size_of(t));
        chip.host_read(addr, raw.data(), raw.size());
        std::vector<float> f(n);
        numerics::decode(t, raw.data(), f.data(), n);
        return {f.begin(), f.end()};
    }
    static void compare(whole_result& res, const std::string& name, const std::vector<double>& got,
                        const std::vector<double>& want, double tolerance) {
        double err = 0, mx = 0;
        for (size_t i = 0; i < want.size(); ++i) {
            err = std::max(err, std::isfinite(got[i]) ? std::fabs(got[i] - want[i]) : INFINITY);
            mx = std::max(mx, std::fabs(want[i]));
        }
        whole_check c{name, mx > 0 ? err / mx : err, tolerance, false};
        c.pass = c.rel_err <= c.tolerance;
        res.pass = res.pass && c.pass;
        res.checks.push_back(c);
    }

    const model_spec& m;
    const parallel_plan& p;
    const layer_plan& lp;
    const bool head;      // the last stage runs the head (the labels given), else the output gradient is given
    const uint64_t M, T;  // micro-batches per replica, tokens of one
    const uint32_t H, d, h, F, V;  // hidden, head dim, heads, ffn and vocabulary a chip
    std::vector<golden::decoder_weights> weights, moment1, moment2, grads;
    std::vector<golden::mat> x, dy, y, dx;  // per replica: input, output gradient; the reference's output, input gradient
    std::vector<std::vector<uint32_t>> labels;  // per replica: every token's label
    std::vector<golden::mat> probs;             // per replica: the reference's probabilities (with the head)
    golden::mat wout, gf, wout_m, wout_v, gf_m, gf_v, dwout, dgf;  // the head's weights, moments and gradients
    golden::mat wemb, wemb_m, wemb_v, dwemb;    // the embedding's
    const std::vector<std::vector<uint32_t>> tokens;  // per replica: the step's tokens (with the head and embedding)
    uint64_t most_copies = 0;                   // the most tokens of the step that share one embedding row
};

using per_chip = std::vector<op_id>;               // an operation's id on every chip (NONE off its stage)
using after_ids = std::vector<std::vector<op_id>>;  // per chip: what an operation waits for

// Builds the step (whole_step.h) operation by operation into an op_sequence, then runs it and measures it.
class whole_builder {
public:
    whole_builder(const platform::platform_config& cfg_in, const model_spec& m, const parallel_plan& p,
                  const whole_options& opt)
        : cfg(with_data(cfg_in, opt.check)), cc(cfg.chip), mc(cfg.multichip), m(m), p(p), opt(opt), n(mc.chips()),
          lp(plan_layer(m, p)), bwd_acc(accumulating(lp.bwd)), head_bwd_acc(accumulating(lp.head_bwd)),
          embed_bwd_acc(accumulating(lp.embed_bwd)), L(m.layers), M(p.micro_batches(m)), S(p.pp), LS(L / S),
          groups(groups_of(snake_placement(mc.topo), p)), embedding(!opt.stack), head(!opt.stack),
          seq(sequence_layout(cc, n, cc.hbm_base + cc.hbm.capacity_bytes - PAGE)) {
        replica_of.assign(n, 0), rank_of.assign(n, 0);
        for (uint32_t d = 0; d < p.dp; ++d) {
            if (embedding) tokens.push_back(step_tokens(m, p, opt.seed, d));
            for (uint32_t t = 0; t < p.tp; ++t) replica_of[groups.tp[0][d][t]] = d, rank_of[groups.tp[0][d][t]] = t;
        }
        const uint64_t first = place_regions();
        for (uint32_t st = 0; st < S; ++st)
            mem.emplace_back(lp, m.dtype, st, S, LS, M, first, cc.hbm.capacity_bytes - PAGE, embedding, head);
        if (opt.check) check.emplace(m, p, lp, opt.seed, head, tokens);
    }

    void add_passes();
    void add_buckets_and_adam();
    void add_layer_pass();  // whole_options::pass
    whole_result run(std::chrono::steady_clock::time_point t0);
    // Placement only: add_passes then takes the step's tensors in the same order, builds no program and records
    // where each tensor-parallel all-reduce runs.
    void places_only(std::vector<tp_place>* out) { places = out; }

private:
    // Timing-only, as the composed step's simulations; functional for a checked step.
    static platform::platform_config with_data(const platform::platform_config& c, bool functional) {
        platform::platform_config t = c;
        platform::set_functional(t, functional);
        return t;
    }
    static tb::sequence_layout sequence_layout(const platform::chip_config& cc, uint32_t n, uint64_t signal_word) {
        tb::sequence_layout sl = tb::chip_sequence_layout(cc, n, signal_word);
        sl.streams = 4;
        return sl;
    }
    // An all-reduce of the model dtype, or an all-gather of FP32 row statistics (`bytes`: the gathered output).
    collective::schedule schedule_of(const std::vector<std::vector<uint32_t>>& g, collective::algo a, uint64_t bytes,
                                     collective::op op = collective::op::allreduce) const {
        return collective::build_groups(mc.topo, g, step_collective_params(op, a, m.dtype, bytes));
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
                       const op_meta& mm) {
        return add_local(st, [&](uint32_t) { return progs; }, after, mm);
    }
    // Each chip's own programs (the embedding's row moves follow its replica's tokens and its vocabulary shard).
    per_chip add_local(uint32_t st, const std::function<std::vector<core::core_program>(uint32_t chip)>& progs_of,
                       const after_ids& after, const op_meta& mm);
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
    // begin: each operation's first instruction issued; core_end: its last completion on each core (operation o,
    // core k at o x cores + k; 0 where the core ran none of it).
    void measure(whole_result& r, const std::vector<double>& begin, const std::vector<double>& core_end,
                 platform::multichip_platform& plat);

    const platform::platform_config cfg;
    const platform::chip_config& cc;
    const platform::multichip_config& mc;
    const model_spec& m;
    const parallel_plan& p;
    const whole_options& opt;
    const uint32_t n;
    const layer_plan lp;
    const std::vector<layer_op> bwd_acc, head_bwd_acc, embed_bwd_acc;  // the backward of a micro-batch after the first
    const uint32_t L;
    const uint64_t M;
    const uint32_t S, LS;  // stages, layers per stage
    const plan_groups groups;  // per stage: its chips, tp groups, dp groups; the pipeline pairs
    uint64_t coll_base[4] = {0, 0, 0, 0};  // each stream's collective region (offset from the HBM base)
    std::vector<step_tensors> mem;  // per stage: where its tensors lie
    // The first stage runs the embedding, the last the head (not with stack: the input activations and the output
    // gradients are given).
    const bool embedding, head;
    std::vector<std::vector<uint32_t>> tokens;     // per replica: the step's tokens (step_tokens)
    std::vector<uint32_t> replica_of, rank_of;     // per chip of the first stage: its replica and tensor-parallel rank
    std::optional<stack_check> check;  // whole_options::check: the data and the reference
    // Per stage: where the last micro-batch's output and (last stage, with the head) probabilities lie (the check
    // reads them; the earlier micro-batches' blocks were reused).
    std::vector<uint64_t> output_at, probs_at;
    std::vector<tp_place>* places = nullptr;  // places_only
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
    for (const auto& o : lp.head_fwd)  // the head's all-gather of the softmax statistics
        if (o.k == layer_op::kind::tp_allgather)
            region[0] = std::max(region[0], collective_bytes(schedule_of(groups.tp[0], opt.tp_algo, o.bytes * o.parts,
                                                                         collective::op::allgather)));
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
per_chip whole_builder::add_local(uint32_t st,
                                  const std::function<std::vector<core::core_program>(uint32_t chip)>& progs_of,
                                  const after_ids& after, const op_meta& mm) {
    per_chip ids(n, tb::op_sequence::NONE);
    for (uint32_t c : groups.chips[st])
        ids[c] = seq.add(c, 0, progs_of(c), after.empty() ? std::vector<op_id>{} : after[c], mm.name);
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
    if (places) return per_chip(n, tb::op_sequence::NONE);
    tb::lowering_layout lay = tb::full_chip_layout(cfg, s, cc.hbm_base + coll_base[stream]);
    lay.sem_first = seq.sem_first();
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
    if (places) {  // the operands in the order the programs name them (an activation block is taken when first named)
        for (const auto& [role, od] : o.io) {
            const placed_tensor t = operand_of(at, o, role, 0);
            if (o.k == layer_op::kind::tp_allreduce && role == "x")
                places->push_back({at.st, at.mb, at.layer, at.part, o.name, t.addr, coll_base[STREAM_PASSES]});
        }
        return per_chip(n, tb::op_sequence::NONE);
    }
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
        if (row_moves(o.phase))  // the chip's tokens in its shard
            return add_local(at.st, [&](uint32_t c) {
                layer_op oc = o;
                oc.index = shard_rows(tokens[replica_of[c]], m, p, at.mb, rank_of[c]);
                return phase_programs(oc, mm.name, bound);
            }, after, mm);
        return add_local(at.st, phase_programs(o, mm.name, bound), after, mm);
    }
    const uint64_t x = operand_of(at, o, "x", 0).addr;
    if (o.k == layer_op::kind::tp_allgather) {
        mm.kind = "tp_allgather";
        return collective_op(STREAM_PASSES,
                             schedule_of(groups.tp[at.st], opt.tp_algo, o.bytes * o.parts, collective::op::allgather),
                             groups.chips[at.st], after, mm, x, operand_of(at, o, "y", 0).addr);
    }
    mm.kind = "tp_allreduce";
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
    if (places) return;  // placement only: a bucket reduces the flat gradients, which are placed up front
    after_ids after(n);
    if (!ready.empty())  // else issued at once
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
    output_at.assign(S, 0);
    probs_at.assign(S, 0);
    if (opt.pass) return add_layer_pass();
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
            if (st == 0 && embedding)
                for (const auto& o : lp.embed_fwd) last = run_op({st, step_part::embed, 0, mb}, o, "", false, first_after);
            for (uint32_t l = 0; l < LS; ++l)
                for (const auto& o : lp.fwd)
                    last = run_op({st, step_part::layer, l, mb}, o, layer_name(l), false, first_after);
            if (st == S - 1 && head)
                for (const auto& o : lp.head_fwd) last = run_op({st, step_part::head, 0, mb}, o, "", false, first_after);
            if (st + 1 < S) recv_fwd[st + 1][mb] = send(st, st + 1, last, mb, true);
        } else {
            if (st + 1 < S) waits_on(recv_bwd[st][mb]);
            // The first micro-batch's backward stores the weights' gradients, the later ones add to them.
            if (st == S - 1 && head)
                for (const auto& o : mb == 0 ? lp.head_bwd : head_bwd_acc)
                    last = run_op({st, step_part::head, 0, mb}, o, "", true, first_after);
            for (uint32_t l = LS; l-- > 0;) {
                for (const auto& o : mb == 0 ? lp.bwd : bwd_acc)
                    last = run_op({st, step_part::layer, l, mb}, o, layer_name(l), true, first_after);
                if (dp && mb + 1 == M) bucket(st, l, last, "bucket layer " + std::to_string(st * LS + l));
            }
            if (st == 0 && embedding)
                for (const auto& o : mb == 0 ? lp.embed_bwd : embed_bwd_acc)
                    last = run_op({st, step_part::embed, 0, mb}, o, "", true, first_after);
            if (st > 0) recv_bwd[st - 1][mb] = send(st, st - 1, last, mb, false);
            if (mb + 1 == M) output_at[st] = mem[st].at(step_part::layer, LS - 1, mb, "y").addr;
            if (mb + 1 == M && st == S - 1 && head) probs_at[st] = mem[st].at(step_part::head, 0, mb, "probs").addr;
            mem[st].release(mb);  // the stage is done with the micro-batch's activations
        }
        stage_last[st] = last;
    }
}

// whole_options::pass: layer 0's forward or backward of micro-batch 0 on every stage's chips, the bucket beside.
void whole_builder::add_layer_pass() {
    const auto& lpass = *opt.pass;
    for (uint32_t st = 0; st < S; ++st) {
        if (lpass.backward && lpass.bucket_beside) bucket(st, LS > 1 ? 1 : 0, {}, "bucket beside");
        after_ids first_after;
        const auto& ops = !lpass.backward ? lp.fwd : lpass.accumulate ? bwd_acc : lp.bwd;
        for (const auto& o : ops)
            run_op({st, step_part::layer, 0, 0}, o, "L" + std::to_string(st * LS) + " ", lpass.backward, first_after);
    }
}

// The embedding's and the head's gradients (stage 0 and the last stage) after the stage's backward; Adam once every
// gradient of the stage is reduced (gradient clipping needs them all), after the backward on stream 0.
void whole_builder::add_buckets_and_adam() {
    const bool dp = p.dp > 1;
    for (uint32_t st = 0; st < S; ++st) {
        const bool own_embedding = st == 0 && embedding, own_head = st == S - 1 && head;
        const bool ends = own_embedding || own_head;
        const std::string ends_name = own_embedding && own_head ? "embedding/head" : own_embedding ? "embedding" : "head";
        if (dp && ends) bucket(st, LS, stage_last[st], "bucket " + ends_name);
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
        if (ends) adam(LS, "adam " + ends_name);
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

    // Every operation's span: its first instruction issued to its last completed on each core of its chip.
    std::vector<double> begin(meta.size(), 1e300), core_end(meta.size() * cc.cores, 0);
    std::vector<core::neuron_core*> all;
    for (uint32_t c = 0; c < n; ++c) {
        auto& chip = *plat.full_chip(c);
        for (uint32_t k = 0; k < cc.cores; ++k) {
            auto* core = chip.cores[k].get();
            all.push_back(core);
            core->load(std::move(programs[c][k]));
            const auto* own = &owners[c][k];
            core->observe([&, own, k](const core::queue_event& e) {
                if (e.queue >= own->size()) return;
                const op_id o = tb::op_sequence::owner_of((*own)[e.queue], e.index);
                if (o == tb::op_sequence::NONE) return;
                begin[o] = std::min(begin[o], e.issued.to_seconds() * 1e9);
                double& done = core_end[o * cc.cores + k];
                done = std::max(done, e.completed.to_seconds() * 1e9);
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
    if (check)
        for (uint32_t st = 0; st < S; ++st)
            for (uint32_t d = 0; d < p.dp; ++d)
                for (uint32_t t = 0; t < p.tp; ++t)
                    check->stage(*plat.full_chip(groups.tp[st][d][t]), cc.hbm_base, mem[st], st, LS, d, t, st == 0,
                                 st == S - 1);
    r.wall_s = tb::run_to_completion(probe, opt.sim);
    measure(r, begin, core_end, plat);
    if (check) {
        r.checked = r.pass = true;
        for (uint32_t st = 0; st < S; ++st)
            for (uint32_t d = 0; d < p.dp; ++d)
                for (uint32_t t = 0; t < p.tp; ++t) {
                    const uint32_t c = groups.tp[st][d][t];
                    check->verify(*plat.full_chip(c), cc.hbm_base, mem[st], c, st, LS, d, t, st == 0, st == S - 1,
                                  output_at[st], probs_at[st], r);
                }
    }
    return r;
}

// Every chip's breakdown (whole_breakdown), each stage's chip that finished last, the one that finished last.
void whole_builder::measure(whole_result& r, const std::vector<double>& begin, const std::vector<double>& core_end,
                            platform::multichip_platform& plat) {
    // Each operation's last completion and the core it was on (the first such core).
    const uint32_t K = cc.cores;
    std::vector<double> end(meta.size(), 0);
    std::vector<uint32_t> last_core(meta.size(), 0);
    for (op_id o = 0; o < meta.size(); ++o)
        for (uint32_t k = 0; k < K; ++k)
            if (core_end[o * K + k] > end[o]) end[o] = core_end[o * K + k], last_core[o] = k;
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
        whole_span sp{meta[o].name, meta[o].kind, seq.chip_of(o), meta[o].micro_batch, begin[o], end[o]};
        sp.last_core = last_core[o];
        double others = 0;  // the latest completion of the other cores' parts
        for (uint32_t k = 0; k < K; ++k)
            if (k != sp.last_core) others = std::max(others, core_end[o * K + k]);
        if (others > 0) sp.lag_ns = end[o] - others;
        r.spans.push_back(std::move(sp));
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
            else if (tp_comm(mm.kind)) b.tp_ns += t;
            else if (mm.kind == "adam") b.optimizer_ns += t;
            else if (mm.kind == "dp_allreduce") b.dp_end_ns = std::max(b.dp_end_ns, end[o]);
            if (mm.backward && mm.kind != "dp_allreduce" && mm.kind != "send")
                b.backward_end_ns = std::max(b.backward_end_ns, end[o]);
            if (mm.kind == "gemm" || mm.kind == "phase" || tp_comm(mm.kind)) {
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

void check_reduces_in_place(const parallel_plan& p, collective::algo tp, collective::algo dp, const std::string& prefix) {
    for (auto [what, a, used] :
         {std::tuple<const char*, collective::algo, bool>{"--tp-algo", tp, p.tp > 1}, {"--dp-algo", dp, p.dp > 1}})
        if (used && !tb::reduces_in_place(a))
            throw std::invalid_argument(prefix + what + " " + std::string(collective::name_of(a)) +
                                        ": the step all-reduces its activations and gradients in place, which a ring, "
                                        "bidir_ring or torus all-reduce does");
}

whole_result run_whole_step(const platform::platform_config& cfg, const model_spec& m, const parallel_plan& p,
                            const whole_options& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    check_whole(cfg, m, p);
    if (opt.check && m.kv_heads != m.heads)
        throw std::invalid_argument("--whole --check: model " + m.name + " has grouped-query attention (" +
                                    std::to_string(m.kv_heads) + " key/value heads for " + std::to_string(m.heads) +
                                    "): the key and value gradients of grouped heads are not yet summed");
    check_reduces_in_place(p, opt.tp_algo, opt.dp_algo, "--whole ");
    whole_builder b(cfg, m, p, opt);
    b.add_passes();
    if (!opt.pass) b.add_buckets_and_adam();
    return b.run(t0);
}

std::vector<tp_place> whole_tp_places(const platform::platform_config& cfg, const model_spec& m, const parallel_plan& p,
                                      const whole_options& opt) {
    check_whole(cfg, m, p);
    std::vector<tp_place> out;
    whole_builder b(cfg, m, p, opt);
    b.places_only(&out);
    b.add_passes();
    return out;
}

}  // namespace trnsim::train

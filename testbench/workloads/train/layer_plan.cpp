#include "testbench/workloads/train/layer_plan.h"

#include <cmath>

#include "models/numerics/dtype.h"
#include "testbench/stimulus.h"

namespace trnsim::train {

const char* name_of(phase_kind k) {
    switch (k) {
    case phase_kind::rmsnorm: return "rmsnorm";
    case phase_kind::rmsnorm_bwd: return "rmsnorm_bwd";
    case phase_kind::softmax: return "softmax";
    case phase_kind::softmax_bwd: return "softmax_bwd";
    case phase_kind::rope: return "rope";
    case phase_kind::swiglu: return "swiglu";
    case phase_kind::swiglu_bwd: return "swiglu_bwd";
    case phase_kind::add: return "add";
    case phase_kind::copy: return "copy";
    case phase_kind::adam: return "adam";
    case phase_kind::colsum: return "colsum";
    case phase_kind::softmax_stats: return "softmax_stats";
    case phase_kind::softmax_merge: return "softmax_merge";
    case phase_kind::gather: return "gather";
    case phase_kind::scatter_add: return "scatter_add";
    }
    return "?";
}

namespace {

// A GEMM of the step: `layout` names how A and B are stored ("mk" or "km", "kn" or "nk"); C in the model dtype.
layer_op gemm(std::string name, uint64_t m, uint64_t k, uint64_t n, const char* a, const char* b, uint32_t count = 1) {
    layer_op o;
    o.k = layer_op::kind::gemm;
    o.name = std::move(name);
    o.m = m, o.kk = k, o.n = n, o.count = count;
    o.a_rows = std::string(a) == "mk";
    o.b_cols = std::string(b) == "nk";
    o.c_model = true;
    return o;
}
layer_op phase(std::string name, phase_kind pk, uint64_t rows, uint64_t cols) {
    layer_op o;
    o.k = layer_op::kind::phase;
    o.name = std::move(name);
    o.phase = pk, o.rows = rows, o.cols = cols;
    return o;
}
layer_op allreduce(std::string name, uint64_t bytes) {
    layer_op o;
    o.k = layer_op::kind::tp_allreduce;
    o.name = std::move(name);
    o.bytes = bytes;
    return o;
}
layer_op allgather(std::string name, uint64_t bytes, uint32_t parts) {
    layer_op o;
    o.k = layer_op::kind::tp_allgather;
    o.name = std::move(name);
    o.bytes = bytes, o.parts = parts;
    return o;
}
// RoPE on the q|k columns of T tokens, every head of d columns rotated in its halves.
layer_op rope(std::string name, uint64_t T, uint64_t cols, uint64_t d) {
    layer_op o = phase(std::move(name), phase_kind::rope, T, cols);
    o.rope_dim = d;
    return o;
}
layer_op softmax(std::string name, phase_kind k, uint64_t rows, uint64_t cols, float scale, uint64_t causal) {
    layer_op o = phase(std::move(name), k, rows, cols);
    o.scale = scale;
    o.causal_block = causal;
    return o;
}

}  // namespace

namespace {

using io_list = std::vector<std::pair<std::string, operand>>;
operand at(std::string t, uint64_t col = 0) {
    operand o;
    o.tensor = std::move(t);
    o.col = col;
    return o;
}
layer_op bind(layer_op o, io_list io) {
    o.io = std::move(io);
    return o;
}

}  // namespace

layer_plan plan_layer(const model_spec& m, const parallel_plan& p) {
    layer_plan lp;
    const uint64_t T = uint64_t(p.micro_batch) * m.seq, H = m.hidden, d = m.head_dim(), S = m.seq;
    const uint64_t h = m.heads / p.tp, kv = m.kv_heads / p.tp, F = m.ffn / p.tp, V = m.vocab / p.tp;
    const uint32_t heads_mb = uint32_t(h * p.micro_batch);  // attention instances per chip and micro-batch
    const uint64_t qkv = (h + 2 * kv) * d, qk = (h + kv) * d, hd = h * d, g = h / kv;
    const uint64_t I = heads_mb * S;  // rows of the scores of every instance, one above the other
    const uint64_t R = (T + 127) / 128;  // norm backward: one gain-gradient row per 128-row tile
    const uint64_t act = T * H * numerics::size_of(m.dtype);
    lp.activation_bytes = act;
    const bool tp = p.tp > 1;

    // A head's block of a token-major tensor (instance i: sequence b's rows, head j's columns) from column `col`;
    // of key/value heads (shared by g query heads); of an instance-major tensor (scores).
    auto q_head = [&](std::string t, uint64_t col = 0) {
        operand o = at(std::move(t), col);
        o.b_rows = S, o.j_cols = d;
        return o;
    };
    auto kv_head = [&](std::string t, uint64_t col) {
        operand o = q_head(std::move(t), col);
        o.group = g;
        return o;
    };
    auto inst = [&](std::string t) {
        operand o = at(std::move(t));
        o.i_rows = S;
        return o;
    };
    auto heads = [&](layer_op o) {
        o.heads = uint32_t(h);
        return o;
    };
    using sc = tensor_scope;
    auto decl = [](std::vector<tensor_decl>& v, std::string n, uint64_t r, uint64_t c, sc scope, bool fp32 = false,
                   bool all_reduced = false) { v.push_back({std::move(n), r, c, scope, fp32, all_reduced}); };
    auto& lt = lp.layer_tensors;
    decl(lt, "x", T, H, sc::input), decl(lt, "dy", T, H, sc::input);
    decl(lt, "wqkv", H, qkv, sc::weight), decl(lt, "wo", hd, H, sc::weight), decl(lt, "wgu", H, 2 * F, sc::weight);
    decl(lt, "wd", F, H, sc::weight), decl(lt, "g1", 1, H, sc::weight), decl(lt, "g2", 1, H, sc::weight);
    decl(lt, "cos", T, qk, sc::table), decl(lt, "sin", T, qk, sc::table), decl(lt, "nsin", T, qk, sc::table);
    for (const char* n : {"n1", "h1", "n2", "y", "dh1n", "dh1", "dxn", "dx"}) decl(lt, n, T, H, sc::activation);
    for (const char* n : {"a1", "m1", "dn2", "dn1"}) decl(lt, n, T, H, sc::activation, false, tp);
    decl(lt, "rstd1", T, 1, sc::activation, true), decl(lt, "rstd2", T, 1, sc::activation, true);
    decl(lt, "qkv", T, qkv, sc::activation), decl(lt, "qkr", T, qk, sc::activation);
    decl(lt, "s", I, S, sc::activation), decl(lt, "p", I, S, sc::activation);
    decl(lt, "o", T, hd, sc::activation), decl(lt, "gu", T, 2 * F, sc::activation);
    decl(lt, "act", T, F, sc::activation), decl(lt, "dact", T, F, sc::activation);
    decl(lt, "dgu", T, 2 * F, sc::activation), decl(lt, "do", T, hd, sc::activation);
    decl(lt, "dp", I, S, sc::activation), decl(lt, "ds", I, S, sc::activation);
    decl(lt, "dqkr", T, qk, sc::activation), decl(lt, "dqkv", T, qkv, sc::activation);
    decl(lt, "dgain1", R, H, sc::activation, true), decl(lt, "dgain2", R, H, sc::activation, true);

    auto& f = lp.fwd;
    f.push_back(bind(phase("fwd.norm1", phase_kind::rmsnorm, T, H),
                     {{"x", at("x")}, {"gain", at("g1")}, {"y", at("n1")}, {"rstd", at("rstd1")}}));
    const float scale = float(1.0 / std::sqrt(double(d)));
    // Activations token-major (T x features), so every forward GEMM reads its A as stored (M x K) and writes C in
    // the model dtype; scores = Q K^T reads K as B^T.
    f.push_back(bind(gemm("fwd.qkv", T, H, qkv, "mk", "kn"), {{"a", at("n1")}, {"b", at("wqkv")}, {"c", at("qkv")}}));
    f.push_back(bind(rope("fwd.rope", T, qk, d),
                     {{"x", at("qkv")}, {"cos", at("cos")}, {"sin", at("sin")}, {"y", at("qkr")}}));
    f.push_back(heads(bind(gemm("fwd.scores", S, d, S, "mk", "nk", heads_mb),
                           {{"a", q_head("qkr")}, {"b", kv_head("qkr", hd)}, {"c", inst("s")}})));
    f.push_back(bind(softmax("fwd.softmax", phase_kind::softmax, I, S, scale, S), {{"s", at("s")}, {"p", at("p")}}));
    f.push_back(heads(bind(gemm("fwd.pv", S, S, d, "mk", "kn", heads_mb),
                           {{"a", inst("p")}, {"b", kv_head("qkv", qk)}, {"c", q_head("o")}})));
    f.push_back(bind(gemm("fwd.out", T, hd, H, "mk", "kn"), {{"a", at("o")}, {"b", at("wo")}, {"c", at("a1")}}));
    if (tp) f.push_back(bind(allreduce("fwd.attn.allreduce", act), {{"x", at("a1")}}));
    f.push_back(bind(phase("fwd.residual1", phase_kind::add, T, H), {{"a", at("x")}, {"b", at("a1")}, {"y", at("h1")}}));
    f.push_back(bind(phase("fwd.norm2", phase_kind::rmsnorm, T, H),
                     {{"x", at("h1")}, {"gain", at("g2")}, {"y", at("n2")}, {"rstd", at("rstd2")}}));
    f.push_back(bind(gemm("fwd.gate_up", T, H, 2 * F, "mk", "kn"), {{"a", at("n2")}, {"b", at("wgu")}, {"c", at("gu")}}));
    f.push_back(bind(phase("fwd.swiglu", phase_kind::swiglu, T, F), {{"g", at("gu")}, {"u", at("gu", F)}, {"y", at("act")}}));
    f.push_back(bind(gemm("fwd.down", T, F, H, "mk", "kn"), {{"a", at("act")}, {"b", at("wd")}, {"c", at("m1")}}));
    if (tp) f.push_back(bind(allreduce("fwd.mlp.allreduce", act), {{"x", at("m1")}}));
    f.push_back(bind(phase("fwd.residual2", phase_kind::add, T, H), {{"a", at("h1")}, {"b", at("m1")}, {"y", at("y")}}));

    // Backward. A linear layer y = x W (x: T x in, W: in x out): dx = dy W^T (T x out x in: dy token-major, W read
    // transposed), dW = x^T dy (in x T x out: x and dy token-major are A^T and B as the Tensor Engine reads them).
    auto& b = lp.bwd;
    auto linear_bwd = [&](const std::string& n, uint64_t in, uint64_t out, const std::string& x, const std::string& dy,
                          const std::string& w, const std::string& dx) {
        b.push_back(bind(gemm("bwd." + n + ".dgrad", T, out, in, "mk", "nk"), {{"a", at(dy)}, {"b", at(w)}, {"c", at(dx)}}));
        b.push_back(bind(gemm("bwd." + n + ".wgrad", in, T, out, "km", "kn"), {{"a", at(x)}, {"b", at(dy)}, {"c", at("d" + w)}}));
    };
    linear_bwd("down", F, H, "act", "dy", "wd", "dact");
    b.push_back(bind(phase("bwd.swiglu", phase_kind::swiglu_bwd, T, F),
                     {{"g", at("gu")}, {"u", at("gu", F)}, {"dy", at("dact")}, {"dg", at("dgu")}, {"du", at("dgu", F)}}));
    linear_bwd("gate_up", H, 2 * F, "n2", "dgu", "wgu", "dn2");
    if (tp) b.push_back(bind(allreduce("bwd.mlp.allreduce", act), {{"x", at("dn2")}}));
    b.push_back(bind(phase("bwd.norm2", phase_kind::rmsnorm_bwd, T, H),
                     {{"x", at("h1")}, {"dy", at("dn2")}, {"gain", at("g2")}, {"rstd", at("rstd2")}, {"dx", at("dh1n")},
                      {"dgain", at("dgain2")}}));
    // The gain's gradient: the norm backward's rows (one per row tile) summed.
    b.push_back(bind(phase("bwd.norm2.dgain", phase_kind::colsum, R, H), {{"x", at("dgain2")}, {"y", at("dg2")}}));
    b.push_back(bind(phase("bwd.residual2", phase_kind::add, T, H), {{"a", at("dy")}, {"b", at("dh1n")}, {"y", at("dh1")}}));
    linear_bwd("out", hd, H, "o", "dh1", "wo", "do");
    b.push_back(heads(bind(gemm("bwd.pv.dp", S, d, S, "mk", "nk", heads_mb),  // dP = dO V^T
                           {{"a", q_head("do")}, {"b", kv_head("qkv", qk)}, {"c", inst("dp")}})));
    b.push_back(heads(bind(gemm("bwd.pv.dv", S, S, d, "km", "kn", heads_mb),  // dV = P^T dO
                           {{"a", inst("p")}, {"b", q_head("do")}, {"c", kv_head("dqkv", qk)}})));
    b.push_back(bind(softmax("bwd.softmax", phase_kind::softmax_bwd, I, S, scale, 0),
                     {{"p", at("p")}, {"dp", at("dp")}, {"ds", at("ds")}}));
    b.push_back(heads(bind(gemm("bwd.scores.dq", S, S, d, "mk", "kn", heads_mb),  // dQ = dS K
                           {{"a", inst("ds")}, {"b", kv_head("qkr", hd)}, {"c", q_head("dqkr")}})));
    b.push_back(heads(bind(gemm("bwd.scores.dk", S, S, d, "km", "kn", heads_mb),  // dK = dS^T Q
                           {{"a", inst("ds")}, {"b", q_head("qkr")}, {"c", kv_head("dqkr", hd)}})));
    b.push_back(bind(rope("bwd.rope", T, qk, d),  // the inverse rotation: sin negated
                     {{"x", at("dqkr")}, {"cos", at("cos")}, {"sin", at("nsin")}, {"y", at("dqkv")}}));
    linear_bwd("qkv", H, qkv, "n1", "dqkv", "wqkv", "dn1");
    if (tp) b.push_back(bind(allreduce("bwd.attn.allreduce", act), {{"x", at("dn1")}}));
    b.push_back(bind(phase("bwd.norm1", phase_kind::rmsnorm_bwd, T, H),
                     {{"x", at("x")}, {"dy", at("dn1")}, {"gain", at("g1")}, {"rstd", at("rstd1")}, {"dx", at("dxn")},
                      {"dgain", at("dgain1")}}));
    b.push_back(bind(phase("bwd.norm1.dgain", phase_kind::colsum, R, H), {{"x", at("dgain1")}, {"y", at("dg1")}}));
    b.push_back(bind(phase("bwd.residual1", phase_kind::add, T, H), {{"a", at("dh1")}, {"b", at("dxn")}, {"y", at("dx")}}));

    // The head: final norm, LM head GEMM, softmax over the vocabulary (each chip's logits a shard of it: with tp > 1,
    // each shard's row statistics gathered from the tp group and merged, Megatron's vocabulary-parallel
    // cross-entropy); its backward.
    auto& ht = lp.head_tensors;
    decl(ht, "x", T, H, sc::input);
    // The micro-batch's labels over the chip's vocabulary shard: -1 at each token's label if the shard holds it
    // (the loss is the sum of the tokens' cross-entropies, its gradient p - one-hot).
    decl(ht, "labels", T, V, sc::input);
    decl(ht, "wout", H, V, sc::weight), decl(ht, "gf", 1, H, sc::weight);
    decl(ht, "hn", T, H, sc::activation), decl(ht, "hrstd", T, 1, sc::activation, true);
    decl(ht, "logits", T, V, sc::activation), decl(ht, "probs", T, V, sc::activation);
    if (tp) decl(ht, "stats", 2, T, sc::activation, true), decl(ht, "gstats", 2 * uint64_t(p.tp), T, sc::activation, true);
    decl(ht, "dlogits", T, V, sc::activation), decl(ht, "dhn", T, H, sc::activation, false, tp);
    decl(ht, "dgainf", R, H, sc::activation, true), decl(ht, "dx", T, H, sc::activation);
    lp.head_fwd.push_back(bind(phase("head.norm", phase_kind::rmsnorm, T, H),
                               {{"x", at("x")}, {"gain", at("gf")}, {"y", at("hn")}, {"rstd", at("hrstd")}}));
    lp.head_fwd.push_back(bind(gemm("head.logits", T, H, V, "mk", "kn"), {{"a", at("hn")}, {"b", at("wout")}, {"c", at("logits")}}));
    if (tp) {
        lp.head_fwd.push_back(bind(phase("head.softmax.stats", phase_kind::softmax_stats, T, V),
                                   {{"s", at("logits")}, {"stats", at("stats")}}));
        lp.head_fwd.push_back(bind(allgather("head.softmax.gather", 2 * T * 4, p.tp), {{"x", at("stats")}, {"y", at("gstats")}}));
        layer_op merge = phase("head.softmax", phase_kind::softmax_merge, T, V);
        merge.parts = p.tp;
        lp.head_fwd.push_back(bind(merge, {{"s", at("logits")}, {"stats", at("gstats")}, {"p", at("probs")}}));
    } else {
        lp.head_fwd.push_back(bind(phase("head.softmax", phase_kind::softmax, T, V), {{"s", at("logits")}, {"p", at("probs")}}));
    }
    lp.head_bwd.push_back(bind(phase("head.dlogits", phase_kind::add, T, V),
                               {{"a", at("probs")}, {"b", at("labels")}, {"y", at("dlogits")}}));
    lp.head_bwd.push_back(bind(gemm("bwd.head.dgrad", T, V, H, "mk", "nk"), {{"a", at("dlogits")}, {"b", at("wout")}, {"c", at("dhn")}}));
    lp.head_bwd.push_back(bind(gemm("bwd.head.wgrad", H, T, V, "km", "kn"), {{"a", at("hn")}, {"b", at("dlogits")}, {"c", at("dwout")}}));
    if (tp) lp.head_bwd.push_back(bind(allreduce("bwd.head.allreduce", act), {{"x", at("dhn")}}));
    lp.head_bwd.push_back(bind(phase("bwd.head.norm", phase_kind::rmsnorm_bwd, T, H),
                               {{"x", at("x")}, {"dy", at("dhn")}, {"gain", at("gf")}, {"rstd", at("hrstd")}, {"dx", at("dx")},
                                {"dgain", at("dgainf")}}));
    lp.head_bwd.push_back(bind(phase("bwd.head.norm.dgain", phase_kind::colsum, R, H), {{"x", at("dgainf")}, {"y", at("dgf")}}));

    // The embedding (Megatron's vocabulary-parallel lookup): each token's row of the chip's vocabulary shard, or
    // the zero row for a token outside it, all-reduced over the tensor-parallel group; the backward adds each
    // token's gradient (layer 0's dx) into its row of the shard's gradient.
    auto& et = lp.embed_tensors;
    decl(et, "wemb", V, H, sc::weight);
    decl(et, "zero", 1, H, sc::table), decl(et, "dy", T, H, sc::input), decl(et, "y", T, H, sc::activation, false, tp);
    layer_op gather = phase("embed.gather", phase_kind::gather, T, H), scatter = phase("bwd.embed.scatter_add", phase_kind::scatter_add, T, H);
    gather.table_rows = scatter.table_rows = V;
    lp.embed_fwd.push_back(bind(gather, {{"table", at("wemb")}, {"zero", at("zero")}, {"y", at("y")}}));
    if (tp) lp.embed_fwd.push_back(bind(allreduce("embed.allreduce", act), {{"x", at("y")}}));
    lp.embed_bwd.push_back(bind(scatter, {{"dy", at("dy")}, {"zero", at("zero")}, {"table", at("dwemb")}}));

    lp.layer_params_per_chip = H * qkv + h * d * H + 3 * H * F + 2 * H;
    lp.head_params_per_chip = V * H + H;
    lp.embed_params_per_chip = V * H;
    // The operations that write a weight's gradient ("d" + a declared weight): a GEMM's C, a colsum's y, a
    // scatter_add's table.
    auto mark = [](std::vector<layer_op>& ops, const std::vector<tensor_decl>& decls) {
        for (auto& o : ops)
            for (const auto& [role, od] : o.io)
                if (role == (o.k == layer_op::kind::gemm ? "c" : o.phase == phase_kind::scatter_add ? "table" : "y"))
                    for (const auto& w : decls)
                        if (w.scope == tensor_scope::weight && od.tensor == "d" + w.name) o.gradient = true;
    };
    mark(lp.bwd, lp.layer_tensors);
    mark(lp.head_bwd, lp.head_tensors);
    mark(lp.embed_bwd, lp.embed_tensors);
    return lp;
}

std::vector<uint32_t> step_tokens(const model_spec& m, const parallel_plan& p, uint64_t seed, uint32_t replica) {
    tb::rng g((seed * 0x9E3779B97F4A7C15ull) ^ (0x746F6B656E73ull + replica));  // "tokens"
    std::vector<uint32_t> tok(p.micro_batches(m) * p.micro_batch * m.seq);
    for (auto& t : tok) t = uint32_t(g.next() % m.vocab);
    return tok;
}

std::vector<int64_t> shard_rows(const std::vector<uint32_t>& tokens, const model_spec& m, const parallel_plan& p,
                                uint64_t mb, uint32_t t) {
    const uint64_t T = uint64_t(p.micro_batch) * m.seq, V = m.vocab / p.tp;
    std::vector<int64_t> rows(T);
    for (uint64_t i = 0; i < T; ++i) {
        const uint32_t tok = tokens.at(mb * T + i);
        rows[i] = tok / V == t ? int64_t(tok % V) : -1;
    }
    return rows;
}

std::vector<layer_op> accumulating(std::vector<layer_op> ops) {
    for (auto& o : ops) o.accumulate = o.gradient;
    return ops;
}

layer_op adam_op(uint64_t params, std::string name) {
    return phase(std::move(name), phase_kind::adam, 128, (params + 127) / 128);
}

double step_model_flops(const model_spec& m, const parallel_plan& p, const layer_plan& lp) {
    double per_mb = 0;  // one chip, one micro-batch, one layer
    for (const auto* v : {&lp.fwd, &lp.bwd})
        for (const auto& o : *v) per_mb += o.flops();
    double head = 0;
    for (const auto* v : {&lp.head_fwd, &lp.head_bwd})
        for (const auto& o : *v) head += o.flops();
    const double mbs = double(p.micro_batches(m)) * p.dp;  // micro-batches over all replicas
    return mbs * p.tp * (per_mb * m.layers + head);
}

}  // namespace trnsim::train

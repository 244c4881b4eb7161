#include "testbench/workloads/train/layer_plan.h"

#include <cmath>

#include "models/numerics/dtype.h"

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
// y = x W with x: T x in (token-major), W: in x out. Backward: dx = dy W^T (T x out x in: dy token-major, W read
// transposed), dW = x^T dy (in x T x out: x and dy token-major are A^T and B as the Tensor Engine reads them).
void linear_bwd(std::vector<layer_op>& v, const std::string& n, uint64_t T, uint64_t in, uint64_t out) {
    v.push_back(gemm("bwd." + n + ".dgrad", T, out, in, "mk", "nk"));
    v.push_back(gemm("bwd." + n + ".wgrad", in, T, out, "km", "kn"));
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

layer_plan plan_layer(const model_spec& m, const parallel_plan& p) {
    layer_plan lp;
    const uint64_t T = uint64_t(p.micro_batch) * m.seq, H = m.hidden, d = m.head_dim(), S = m.seq;
    const uint64_t h = m.heads / p.tp, kv = m.kv_heads / p.tp, F = m.ffn / p.tp, V = m.vocab / p.tp;
    const uint32_t heads_mb = uint32_t(h * p.micro_batch);  // attention instances per chip and micro-batch
    const uint64_t qkv = (h + 2 * kv) * d;
    const uint64_t act = T * H * numerics::size_of(m.dtype);
    lp.activation_bytes = act;
    const bool tp = p.tp > 1;

    auto& f = lp.fwd;
    f.push_back(phase("fwd.norm1", phase_kind::rmsnorm, T, H));
    const float scale = float(1.0 / std::sqrt(double(d)));
    // Activations token-major (T x features), so every forward GEMM reads its A as stored (M x K) and writes C in
    // the model dtype; scores = Q K^T reads K as B^T.
    f.push_back(gemm("fwd.qkv", T, H, qkv, "mk", "kn"));
    f.push_back(rope("fwd.rope", T, (h + kv) * d, d));
    f.push_back(gemm("fwd.scores", S, d, S, "mk", "nk", heads_mb));
    f.push_back(softmax("fwd.softmax", phase_kind::softmax, heads_mb * S, S, scale, S));
    f.push_back(gemm("fwd.pv", S, S, d, "mk", "kn", heads_mb));
    f.push_back(gemm("fwd.out", T, h * d, H, "mk", "kn"));
    if (tp) f.push_back(allreduce("fwd.attn.allreduce", act));
    f.push_back(phase("fwd.residual1", phase_kind::add, T, H));
    f.push_back(phase("fwd.norm2", phase_kind::rmsnorm, T, H));
    f.push_back(gemm("fwd.gate_up", T, H, 2 * F, "mk", "kn"));
    f.push_back(phase("fwd.swiglu", phase_kind::swiglu, T, F));
    f.push_back(gemm("fwd.down", T, F, H, "mk", "kn"));
    if (tp) f.push_back(allreduce("fwd.mlp.allreduce", act));
    f.push_back(phase("fwd.residual2", phase_kind::add, T, H));

    auto& b = lp.bwd;
    b.push_back(phase("bwd.residual2", phase_kind::add, T, H));
    linear_bwd(b, "down", T, F, H);
    b.push_back(phase("bwd.swiglu", phase_kind::swiglu_bwd, T, F));
    linear_bwd(b, "gate_up", T, H, 2 * F);
    if (tp) b.push_back(allreduce("bwd.mlp.allreduce", act));
    b.push_back(phase("bwd.norm2", phase_kind::rmsnorm_bwd, T, H));
    b.push_back(phase("bwd.residual1", phase_kind::add, T, H));
    linear_bwd(b, "out", T, h * d, H);
    b.push_back(gemm("bwd.pv.dp", S, d, S, "mk", "nk", heads_mb));   // dP = dO V^T
    b.push_back(gemm("bwd.pv.dv", S, S, d, "km", "kn", heads_mb));   // dV = P^T dO
    b.push_back(softmax("bwd.softmax", phase_kind::softmax_bwd, heads_mb * S, S, scale, 0));
    b.push_back(gemm("bwd.scores.dq", S, S, d, "mk", "kn", heads_mb));  // dQ = dS K
    b.push_back(gemm("bwd.scores.dk", S, S, d, "km", "kn", heads_mb));  // dK = dS^T Q
    b.push_back(rope("bwd.rope", T, (h + kv) * d, d));
    linear_bwd(b, "qkv", T, H, qkv);
    if (tp) b.push_back(allreduce("bwd.attn.allreduce", act));
    b.push_back(phase("bwd.norm1", phase_kind::rmsnorm_bwd, T, H));

    lp.head_fwd.push_back(phase("head.norm", phase_kind::rmsnorm, T, H));
    lp.head_fwd.push_back(gemm("head.logits", T, H, V, "mk", "kn"));
    lp.head_fwd.push_back(phase("head.softmax", phase_kind::softmax, T, V));
    lp.head_bwd.push_back(phase("head.dlogits", phase_kind::add, T, V));  // softmax - one-hot
    linear_bwd(lp.head_bwd, "head", T, H, V);
    if (tp) lp.head_bwd.push_back(allreduce("bwd.head.allreduce", act));
    lp.head_bwd.push_back(phase("bwd.head.norm", phase_kind::rmsnorm_bwd, T, H));

    lp.embed_fwd.push_back(phase("embed.gather", phase_kind::copy, T, H));
    if (tp) lp.embed_fwd.push_back(allreduce("embed.allreduce", act));

    lp.layer_params_per_chip = H * qkv + h * d * H + 3 * H * F + 2 * H;
    lp.head_params_per_chip = V * H + H;
    return lp;
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

// FP64 golden models of the transformer workloads (testbench/workloads/transformer/transformer.h): plain C++, std:: math,
// written from the textbook formulas and independent of the engines' kernels and the compiler's tiling.
#pragma once
#include <cstdint>
#include <vector>

namespace trnsim::tb::golden {

struct mat {
    uint32_t rows = 0, cols = 0;
    std::vector<double> v;
    mat() = default;
    mat(uint32_t r, uint32_t c) : rows(r), cols(c), v(uint64_t(r) * c, 0.0) {}
    double& operator()(uint32_t r, uint32_t c) { return v[uint64_t(r) * cols + c]; }
    double operator()(uint32_t r, uint32_t c) const { return v[uint64_t(r) * cols + c]; }
};

mat matmul(const mat& a, const mat& b);      // a b
mat matmul_tn(const mat& a, const mat& b);   // a^T b
mat matmul_nt(const mat& a, const mat& b);   // a b^T

struct decoder_weights {
    mat wq, wk, wv, wo;  // H x H
    mat w1, w3;          // H x F (gate, up)
    mat w2;              // F x H (down)
    mat g1, g2;          // 1 x H (norm gains)
    mat b1, b2;          // 1 x H (layer norm biases; unused by RMS norm)
    bool layer_norm = false;  // LayerNorm (x - mean) / sqrt(var + eps) g + b instead of RMSNorm x / rms(x) g
    // Grouped-query attention: kv_heads key/value heads (0: as many as query heads), wk and wv H x kv_heads * d,
    // query head j using key/value head j / (heads / kv_heads).
    uint32_t kv_heads = 0;
    // RoPE (empty: none): q and k rotated per head after the projection, row i of the sequence by row i of the
    // S x d tables: y1 = x1 cos1 - x2 sin1, y2 = x2 cos2 + x1 sin2 (halves 1 and 2 of the head's d columns).
    mat rope_cos, rope_sin;
};
struct decoder_grads {
    mat dx, dwq, dwk, dwv, dwo, dw1, dw2, dw3, dg1, dg2, db1, db2;
};

// y = MHA(x) = concat_h softmax(Q_h K_h^T / sqrt(d) + mask) V_h  Wo, Q = x Wq, K = x Wk, V = x Wv.
mat attention(const mat& x, const decoder_weights& w, uint32_t heads, bool causal);
// y = (silu(x W1) * (x W3)) W2.
mat mlp(const mat& x, const decoder_weights& w);
// Pre-norm decoder layer: x2 = x + MHA(norm(x) g1); y = x2 + MLP(norm(x2) g2) (norm: RMS or layer norm). With dy, also the gradients
// of sum(y * dy) with respect to x and every weight.
mat decoder(const mat& x, const decoder_weights& w, uint32_t heads, bool causal, double eps, const mat* dy,
            decoder_grads* grads);

// RMS norm (b null) or layer norm (b given) over each row of x: h = norm(x) g (+ b), with what the backward needs.
struct norm_state {
    mat xn;                 // (x - mean) * r for layer norm, x * r for RMS norm
    std::vector<double> r;  // 1 / sqrt(var + eps) or 1 / sqrt(mean(x^2) + eps) per row
};
mat norm_forward(const mat& x, const mat& g, const mat* b, double eps, norm_state& st);
// d/dx of h = norm(x) g (+ b) given dh; dg = sum over rows of dh * xn, db = sum over rows of dh.
mat norm_backward(const mat& dh, const mat& g, bool layer_norm, const norm_state& st, mat& dg, mat& db);

// One Adam step (bias-corrected), in place on p, m, v.
void adam(std::vector<double>& p, std::vector<double>& m, std::vector<double>& v, const std::vector<double>& g,
          double lr, double beta1, double beta2, double eps, uint32_t step);

} // namespace trnsim::tb::golden

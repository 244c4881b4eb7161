#include "testbench/workloads/transformer/transformer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "platforms/single_chip/chip.h"
#include "testbench/chip_probe.h"
#include "testbench/verification/golden/golden_transformer.h"
#include "testbench/stimulus.h"
#include "testbench/workloads/transformer/kernel_builder.h"

namespace trnsim::tb {

using ve::act_fn;
using ve::bcast;
using ve::vop;

const char* name_of(transformer_kind k) {
    switch (k) {
    case transformer_kind::attention: return "attention";
    case transformer_kind::mlp: return "mlp";
    case transformer_kind::decoder: return "decoder";
    case transformer_kind::adam: return "adam";
    }
    return "?";
}

void validate(const transformer_spec& s, const platform::chip_config& chip) {
    const uint32_t P = std::min({chip.core.sbuf.partitions, chip.core.te.rows, chip.core.te.cols});
    auto bad = [](const std::string& opt, const std::string& why) { throw std::invalid_argument("--" + opt + ": " + why); };
    if (s.kind == transformer_kind::adam) {
        if (s.rows == 0) bad("rows", "the parameter tensor must be at least 1 x 1");
        if (s.cols == 0) bad("cols", "the parameter tensor must be at least 1 x 1");
        // Four FP32 tensors of rows x cols live in host memory and HBM: at most 2^26 elements (256 MiB each).
        if (uint64_t(s.rows) * s.cols > (1ull << 26))
            bad("cols", std::to_string(s.rows) + " x " + std::to_string(s.cols) +
                            " parameters is more than the 67108864 (2^26) this workload holds");
        if (s.step == 0) bad("step", "the Adam step number starts at 1");
        if (!(s.lr > 0 && s.lr <= 10)) bad("lr", "the learning rate must be > 0 and <= 10");
        return;
    }
    auto dim = [&](const char* opt, uint32_t v) {
        if (v == 0 || v > P)
            bad(opt, std::to_string(v) + " is outside 1.." + std::to_string(P) +
                         " (one partition tile: the array's rows and columns and SBUF partitions)");
        if (v > chip.core.te.n_max)
            bad(opt, std::to_string(v) + " exceeds the Tensor Engine's n_max " + std::to_string(chip.core.te.n_max) +
                         " (the moving free size of one MATMUL)");
    };
    dim("seq", s.seq);
    dim("hidden", s.hidden);
    if (s.kind != transformer_kind::attention) dim("ffn", s.ffn);
    if (s.kind != transformer_kind::mlp) {
        if (s.heads == 0 || s.hidden % s.heads)
            bad("heads", std::to_string(s.heads) + " does not divide --hidden " + std::to_string(s.hidden));
    }
}

namespace {

constexpr float MASK = -30000.0f;  // added to masked scores: exp underflows to exactly 0

// Everything the host puts in HBM and reads back, by name, row-major FP32.
struct hbm_tensor {
    std::string name;
    uint32_t rows, cols;
    uint64_t addr;
    std::vector<float> host;  // initial contents (inputs) or the result read back (outputs)
};

struct hbm_plan {
    std::vector<hbm_tensor> t;
    uint64_t next;
    explicit hbm_plan(uint64_t base) : next(base) {}
    size_t add(const std::string& name, uint32_t rows, uint32_t cols) {
        t.push_back({name, rows, cols, next, std::vector<float>(uint64_t(rows) * cols, 0.0f)});
        next += (uint64_t(rows) * cols * 4 + 4095) / 4096 * 4096;
        return t.size() - 1;
    }
    hbm_tensor& operator[](const std::string& name) {
        for (auto& x : t)
            if (x.name == name) return x;
        throw std::logic_error("no HBM tensor " + name);
    }
    tile at(const std::string& name) {
        auto& x = (*this)[name];
        return kernel_builder::hbm(x.addr, x.rows, x.cols, name);
    }
};

void fill(std::vector<float>& v, uint64_t seed, double lo, double hi) {
    rng g(seed);
    for (auto& x : v) x = float(lo + (hi - lo) * g.uniform());
}

golden::mat to_mat(const hbm_tensor& t) {
    golden::mat m(t.rows, t.cols);
    for (size_t i = 0; i < t.host.size(); ++i) m.v[i] = t.host[i];
    return m;
}

// The compiled kernels. `kb` emits; tiles carry the data flow.
struct compiler {
    kernel_builder& kb;
    hbm_plan& hbm;
    const transformer_spec& s;

    tile load(const std::string& name) {
        auto& h = hbm[name];
        tile t = kb.sbuf(h.rows, h.cols, name);
        kb.copy(t, hbm.at(name));
        return t;
    }
    void store(const std::string& name, const tile& t) { kb.copy(hbm.at(name), t); }
    tile transpose(const tile& a, const std::string& name) {
        tile t = kb.sbuf(a.free, a.parts, name);
        kb.unary(vop::transpose, t, a);
        return t;
    }
    tile evacuate(const tile& ps, const std::string& name, float scale = 1.0f) {  // PSUM -> SBUF (Scalar Engine)
        tile t = kb.sbuf(ps.parts, ps.free, name);
        kb.act(t, ps, act_fn::identity, scale);
        return t;
    }

    // RMS norm (or layer norm) over the free dimension of a token-major x (S x H):
    //   RMS:   h = x r g,            r = 1 / sqrt(mean(x^2) + eps)
    //   layer: h = (x - mean) r g + b, r = 1 / sqrt(var + eps)
    struct rms_saved {
        tile xn, r;
    };
    tile rmsnorm(const tile& x, const tile& g, const tile& b, rms_saved& st, const std::string& n) {
        const uint32_t S = x.parts, H = x.free;
        tile xc = x;
        if (s.layer_norm) {
            tile sum = kb.sbuf(S, 1, n + ".sum"), mu = kb.sbuf(S, 1, n + ".mean");
            xc = kb.sbuf(S, H, n + ".xc");
            kb.unary(vop::reduce_sum_free, sum, x);
            kb.unary(vop::scale_bias, mu, sum, 1.0f / float(H));
            kb.binary(vop::sub, xc, x, mu, bcast::column);
        }
        tile sq = kb.sbuf(S, H, n + ".sq"), ss = kb.sbuf(S, 1, n + ".ss");
        st.r = kb.sbuf(S, 1, n + ".r");
        st.xn = kb.sbuf(S, H, n + ".xn");
        tile h = kb.sbuf(S, H, n + ".h");
        emit_rmsnorm(kb, h, st.xn, st.r, sq, ss, xc, g, s.eps);
        if (s.layer_norm) kb.binary(vop::add, h, h, b, bcast::row);
        return h;
    }
    // dx of the norm from dh (S x H, SBUF or PSUM); dg (1 x H) = sum over tokens of dh * xn, db = sum of dh.
    tile rmsnorm_backward(const tile& dh, const tile& g, const rms_saved& st, tile& dg, tile& db, const std::string& n) {
        const uint32_t S = dh.parts, H = dh.free;
        tile t = kb.sbuf(S, H, n + ".dh_xn"), dxn = kb.sbuf(S, H, n + ".dxn"), u = kb.sbuf(S, H, n + ".u");
        tile c = kb.sbuf(S, 1, n + ".c"), w = kb.sbuf(S, H, n + ".w"), v = kb.sbuf(S, H, n + ".v");
        tile dx = kb.sbuf(S, H, n + ".dx");
        dg = kb.sbuf(1, H, n + ".dg");
        kb.binary(vop::mul, t, dh, st.xn);
        kb.unary(vop::reduce_sum_part, dg, t);
        emit_rmsnorm_backward_core(kb, v, w, u, c, dxn, dh, g, st.xn);
        if (s.layer_norm) {  // - mean(dxn)
            db = kb.sbuf(1, H, n + ".db");
            kb.unary(vop::reduce_sum_part, db, dh);
            tile a = kb.sbuf(S, 1, n + ".a");
            kb.unary(vop::reduce_sum_free, a, dxn);
            kb.unary(vop::scale_bias, a, a, 1.0f / float(H));
            kb.binary(vop::sub, v, v, a, bcast::column);
        }
        kb.binary(vop::mul, dx, v, st.r, bcast::column);
        return dx;
    }

    struct attn_saved {
        tile h, hT, qsT, kT, v, oT;
        std::vector<tile> p;
    };
    // Multi-head attention of a token-major h (S x H); returns the PSUM tile of O Wo (S x H).
    tile attention(const tile& h, const tile& wq, const tile& wk, const tile& wv, const tile& wo, const tile& mask,
                   attn_saved& st) {
        const uint32_t S = h.parts, H = h.free, N = s.heads, d = H / N;
        st.h = h;
        st.hT = transpose(h, "hT");
        tile qT_ps = kb.psum(H, S, "qT.ps");
        kb.matmul(qT_ps, wq, st.hT, false);  // Wq^T h^T = (h Wq)^T
        st.qsT = evacuate(qT_ps, "qsT", 1.0f / std::sqrt(float(d)));  // Q / sqrt(d), feature-major
        tile kT_ps = kb.psum(H, S, "kT.ps");
        kb.matmul(kT_ps, wk, st.hT, false);
        st.kT = evacuate(kT_ps, "kT");
        tile v_ps = kb.psum(S, H, "v.ps");
        kb.matmul(v_ps, st.hT, wv, false);  // (h^T)^T Wv = h Wv, token-major
        st.v = evacuate(v_ps, "v");
        tile oT_ps = kb.psum_pinned(H, S, "oT.ps");
        for (uint32_t hd = 0; hd < N; ++hd) {
            const std::string n = "head" + std::to_string(hd);
            tile sc_ps = kb.psum(S, S, n + ".scores.ps");
            kb.matmul(sc_ps, st.qsT.rows(hd * d, d), st.kT.rows(hd * d, d), false);  // Q_h K_h^T / sqrt(d)
            tile sm = kb.sbuf(S, S, n + ".scores");
            if (s.causal) kb.binary(vop::add, sm, sc_ps, mask);
            else kb.unary(vop::copy, sm, sc_ps);
            tile mx = kb.sbuf(S, 1, n + ".max"), e = kb.sbuf(S, S, n + ".exp"), sum = kb.sbuf(S, 1, n + ".sum");
            tile rs = kb.sbuf(S, 1, n + ".rsum"), p = kb.sbuf(S, S, n + ".p");
            kb.unary(vop::reduce_max_free, mx, sm);
            kb.binary(vop::sub, e, sm, mx, bcast::column);
            kb.act(e, e, act_fn::exp);
            kb.unary(vop::reduce_sum_free, sum, e);
            kb.act(rs, sum, act_fn::reciprocal);
            kb.binary(vop::mul, p, e, rs, bcast::column);
            tile pT = transpose(p, n + ".pT");
            kb.matmul(oT_ps.rows(hd * d, d), st.v.cols(hd * d, d), pT, false);  // V_h^T P^T = (P V_h)^T
            st.p.push_back(p);
        }
        st.oT = evacuate(oT_ps, "oT");
        kb.release(oT_ps);
        tile a_ps = kb.psum(S, H, "attn_out.ps");
        kb.matmul(a_ps, st.oT, wo, false);  // O Wo
        return a_ps;
    }

    struct mlp_saved {
        tile h, hT, gT, uT, sg, silu, mT;
    };
    // SwiGLU MLP of a token-major h (S x H): returns the PSUM tile of (silu(h W1) * (h W3)) W2 (S x H).
    tile mlp(const tile& h, const tile& w1, const tile& w3, const tile& w2, mlp_saved& st) {
        const uint32_t S = h.parts, F = w1.free;
        st.h = h;
        st.hT = transpose(h, "mlp.hT");
        tile gT_ps = kb.psum(F, S, "gT.ps"), uT_ps = kb.psum(F, S, "uT.ps");
        kb.matmul(gT_ps, w1, st.hT, false);  // (h W1)^T
        kb.matmul(uT_ps, w3, st.hT, false);
        st.gT = kb.sbuf(F, S, "gT");
        kb.unary(vop::copy, st.gT, gT_ps);
        st.uT = evacuate(uT_ps, "uT");
        st.sg = kb.sbuf(F, S, "sigmoid_g");
        kb.act(st.sg, st.gT, act_fn::sigmoid);
        st.silu = kb.sbuf(F, S, "silu_g");
        kb.binary(vop::mul, st.silu, st.gT, st.sg);
        st.mT = kb.sbuf(F, S, "mT");
        kb.binary(vop::mul, st.mT, st.silu, st.uT);
        tile y_ps = kb.psum(S, w2.free, "mlp_out.ps");
        kb.matmul(y_ps, st.mT, w2, false);  // M W2
        return y_ps;
    }
    // MLP backward from dy (token-major, SBUF) and dy^T: stores dW1, dW2, dW3, returns the PSUM tile of dh (S x H).
    tile mlp_backward(const tile& dy, const tile& dyT, const tile& w1, const tile& w3, const tile& w2,
                      const mlp_saved& st) {
        const uint32_t S = dy.parts, F = w1.free, H = dy.free;
        tile m = transpose(st.mT, "m");
        tile dw2_ps = kb.psum(F, H, "dW2.ps");
        kb.matmul(dw2_ps, m, dy, false);  // M^T dy
        store("dW2", dw2_ps);
        tile w2T = transpose(w2, "W2T");
        tile dmT_ps = kb.psum(F, S, "dmT.ps");
        kb.matmul(dmT_ps, w2T, dyT, false);  // W2 dy^T = (dy W2^T)^T
        tile dmT = evacuate(dmT_ps, "dmT");
        tile duT = kb.sbuf(F, S, "duT"), t = kb.sbuf(F, S, "dsiluT"), d1 = kb.sbuf(F, S, "silu'"), dgT = kb.sbuf(F, S, "dgT");
        kb.binary(vop::mul, duT, dmT, st.silu);
        kb.binary(vop::mul, t, dmT, st.uT);
        // silu'(g) = s (1 + g (1 - s)), s = sigmoid(g)
        kb.unary(vop::scale_bias, d1, st.sg, -1.0f, 1.0f);
        kb.binary(vop::mul, d1, d1, st.gT);
        kb.unary(vop::scale_bias, d1, d1, 1.0f, 1.0f);
        kb.binary(vop::mul, d1, d1, st.sg);
        kb.binary(vop::mul, dgT, t, d1);
        tile dg = transpose(dgT, "dg"), du = transpose(duT, "du");
        tile dw1_ps = kb.psum(H, F, "dW1.ps");
        kb.matmul(dw1_ps, st.h, dg, false);  // h^T dG
        store("dW1", dw1_ps);
        tile dw3_ps = kb.psum(H, F, "dW3.ps");
        kb.matmul(dw3_ps, st.h, du, false);
        store("dW3", dw3_ps);
        tile w1T = transpose(w1, "W1T"), w3T = transpose(w3, "W3T");
        tile dh_ps = kb.psum(S, H, "dh2.ps");
        kb.matmul(dh_ps, dgT, w1T, false);  // dG W1^T + dU W3^T
        kb.matmul(dh_ps, duT, w3T, true);
        return dh_ps;
    }
    // Attention backward from da (token-major, SBUF) and da^T: stores dWq, dWk, dWv, dWo; returns the PSUM tile of
    // dh (S x H).
    tile attention_backward(const tile& da, const tile& daT, const tile& wq, const tile& wk, const tile& wv,
                            const tile& wo, const attn_saved& st) {
        const uint32_t S = da.parts, H = da.free, N = s.heads, d = H / N;
        tile o = transpose(st.oT, "o");
        tile dwo_ps = kb.psum(H, H, "dWo.ps");
        kb.matmul(dwo_ps, o, da, false);  // O^T da
        store("dWo", dwo_ps);
        tile woT = transpose(wo, "WoT");
        tile doT_ps = kb.psum(H, S, "doT.ps");
        kb.matmul(doT_ps, woT, daT, false);  // Wo da^T = (da Wo^T)^T
        tile doT = evacuate(doT_ps, "doT");
        tile dO = transpose(doT, "do");
        tile qs = transpose(st.qsT, "qs"), k = transpose(st.kT, "k"), vT = transpose(st.v, "vT");
        tile dqT_ps = kb.psum_pinned(H, S, "dqT.ps"), dkT_ps = kb.psum_pinned(H, S, "dkT.ps");
        tile dvT_ps = kb.psum_pinned(H, S, "dvT.ps");
        for (uint32_t hd = 0; hd < N; ++hd) {
            const std::string n = "head" + std::to_string(hd);
            const tile& p = st.p[hd];
            tile dp_ps = kb.psum(S, S, n + ".dp.ps");
            kb.matmul(dp_ps, doT.rows(hd * d, d), vT.rows(hd * d, d), false);  // dO_h V_h^T
            tile t = kb.sbuf(S, S, n + ".dp_p"), rs = kb.sbuf(S, 1, n + ".rowsum"), ds = kb.sbuf(S, S, n + ".ds");
            kb.binary(vop::mul, t, dp_ps, p);
            kb.unary(vop::reduce_sum_free, rs, t);
            kb.binary(vop::sub, ds, dp_ps, rs, bcast::column);
            kb.binary(vop::mul, ds, ds, p);  // dS = P (dP - rowsum(dP P)), gradient of the scaled scores
            tile dsT = transpose(ds, n + ".dsT");
            kb.matmul(dqT_ps.rows(hd * d, d), k.cols(hd * d, d), dsT, false);   // (dS K_h)^T
            kb.matmul(dkT_ps.rows(hd * d, d), qs.cols(hd * d, d), ds, false);   // (dS^T Qs_h)^T
            kb.matmul(dvT_ps.rows(hd * d, d), dO.cols(hd * d, d), p, false);    // (P^T dO_h)^T
        }
        tile dqT = evacuate(dqT_ps, "dqT", 1.0f / std::sqrt(float(d)));  // scores were Q K^T / sqrt(d)
        tile dkT = evacuate(dkT_ps, "dkT"), dvT = evacuate(dvT_ps, "dvT");
        for (const tile* t : {&dqT_ps, &dkT_ps, &dvT_ps}) kb.release(*t);
        tile dq = transpose(dqT, "dq"), dk = transpose(dkT, "dk"), dv = transpose(dvT, "dv");
        const std::pair<const char*, const tile*> grads[] = {{"dWq", &dq}, {"dWk", &dk}, {"dWv", &dv}};
        for (auto& [name, g] : grads) {
            tile ps = kb.psum(H, H, std::string(name) + ".ps");
            kb.matmul(ps, st.h, *g, false);  // h^T dQ
            store(name, ps);
        }
        tile wqT = transpose(wq, "WqT"), wkT = transpose(wk, "WkT"), wvT = transpose(wv, "WvT");
        tile dh_ps = kb.psum(S, H, "dh1.ps");
        kb.matmul(dh_ps, dqT, wqT, false);  // dQ Wq^T + dK Wk^T + dV Wv^T
        kb.matmul(dh_ps, dkT, wkT, true);
        kb.matmul(dh_ps, dvT, wvT, true);
        return dh_ps;
    }

    void decoder() {
        tile x = load("x"), g1 = load("g1"), g2 = load("g2");
        tile b1 = s.layer_norm ? load("b1") : tile{}, b2 = s.layer_norm ? load("b2") : tile{};
        tile wq = load("Wq"), wk = load("Wk"), wv = load("Wv"), wo = load("Wo");
        tile w1 = load("W1"), w3 = load("W3"), w2 = load("W2");
        tile mask = s.causal ? load("mask") : tile{};
        const uint32_t S = s.seq, H = s.hidden;
        rms_saved n1, n2;
        attn_saved at;
        mlp_saved ml;
        tile h1 = rmsnorm(x, g1, b1, n1, "norm1");
        tile a_ps = attention(h1, wq, wk, wv, wo, mask, at);
        tile x2 = kb.sbuf(S, H, "x2");
        kb.binary(vop::add, x2, x, a_ps);
        tile h2 = rmsnorm(x2, g2, b2, n2, "norm2");
        tile m_ps = mlp(h2, w1, w3, w2, ml);
        tile y = kb.sbuf(S, H, "y");
        kb.binary(vop::add, y, x2, m_ps);
        store("y", y);
        if (!s.backward) return;
        tile dy = load("dy");
        tile dyT = transpose(dy, "dyT");
        tile dh2_ps = mlp_backward(dy, dyT, w1, w3, w2, ml);
        tile dg2, db2;
        tile dxn2 = rmsnorm_backward(dh2_ps, g2, n2, dg2, db2, "norm2.bwd");
        store("dg2", dg2);
        if (s.layer_norm) store("db2", db2);
        tile dx2 = kb.sbuf(S, H, "dx2");
        kb.binary(vop::add, dx2, dy, dxn2);
        tile dx2T = transpose(dx2, "dx2T");
        tile dh1_ps = attention_backward(dx2, dx2T, wq, wk, wv, wo, at);
        tile dg1, db1;
        tile dxn1 = rmsnorm_backward(dh1_ps, g1, n1, dg1, db1, "norm1.bwd");
        store("dg1", dg1);
        if (s.layer_norm) store("db1", db1);
        tile dx = kb.sbuf(S, H, "dx");
        kb.binary(vop::add, dx, dx2, dxn1);
        store("dx", dx);
    }
    void attention_only() {
        tile x = load("x"), wq = load("Wq"), wk = load("Wk"), wv = load("Wv"), wo = load("Wo");
        tile mask = s.causal ? load("mask") : tile{};
        attn_saved at;
        tile a_ps = attention(x, wq, wk, wv, wo, mask, at);
        store("y", a_ps);
    }
    void mlp_only() {
        tile x = load("x"), w1 = load("W1"), w3 = load("W3"), w2 = load("W2");
        mlp_saved ml;
        store("y", mlp(x, w1, w3, w2, ml));
    }
    // Adam on a rows x cols tensor, tiles of up to 128 partitions x 512 elements; p, m, v updated in place in HBM.
    // Two SBUF buffer sets, used alternately: tile i + 2 reuses tile i's buffers, and the hazard tracking makes its
    // loads wait for tile i's stores (write-after-read), so any tensor that fits HBM runs in 24 KiB per partition.
    void adam() {
        const uint32_t P = kb_partitions, FT = 512;
        const float c1 = 1.0f - std::pow(s.beta1, float(s.step)), c2 = 1.0f - std::pow(s.beta2, float(s.step));
        const uint32_t bp = std::min(P, s.rows), bf = std::min(FT, s.cols);
        struct buffers {
            tile p, g, m, v, g2, den;
        };
        buffers set[2];
        for (int i = 0; i < 2; ++i) {
            const std::string n = "[" + std::to_string(i) + "]";
            set[i] = {kb.sbuf(bp, bf, "p" + n), kb.sbuf(bp, bf, "g" + n), kb.sbuf(bp, bf, "m" + n),
                      kb.sbuf(bp, bf, "v" + n), kb.sbuf(bp, bf, "g2" + n), kb.sbuf(bp, bf, "den" + n)};
        }
        uint64_t k = 0;
        for (uint32_t r0 = 0; r0 < s.rows; r0 += P)
            for (uint32_t f0 = 0; f0 < s.cols; f0 += FT, ++k) {
                const uint32_t pr = std::min(P, s.rows - r0), fc = std::min(FT, s.cols - f0);
                auto part = [&](const char* n) { return hbm.at(n).rows(r0, pr).cols(f0, fc); };
                const buffers& b = set[k % 2];
                auto view = [&](const tile& t) { return t.rows(0, pr).cols(0, fc); };
                tile p = view(b.p), g = view(b.g), m = view(b.m), v = view(b.v);
                kb.copy(p, part("param"));
                kb.copy(g, part("grad"));
                kb.copy(m, part("m"));
                kb.copy(v, part("v"));
                tile g2 = view(b.g2), den = view(b.den);
                emit_adam(kb, p, m, v, g, g2, den, den, {s.beta1, s.beta2, s.lr, s.adam_eps, c1, c2});
                kb.copy(part("param"), p);
                kb.copy(part("m"), m);
                kb.copy(part("v"), v);
            }
    }
    uint32_t kb_partitions;
};

double matmul_flops(const transformer_spec& s) {
    const double S = s.seq, H = s.hidden, F = s.ffn;
    const double attn = 2 * (4 * S * H * H + 2 * S * S * H), mlp = 2 * 3 * S * H * F;
    switch (s.kind) {
    case transformer_kind::attention: return attn;
    case transformer_kind::mlp: return mlp;
    case transformer_kind::decoder: return (attn + mlp) * (s.backward ? 3 : 1);
    case transformer_kind::adam: return 0;
    }
    return 0;
}

} // namespace

namespace {

// --- layout: every input (host-initialised, seeded) and output tensor in HBM -------------------------------------
hbm_plan place_tensors(const platform::chip_config& cc, const transformer_spec& s, std::vector<std::string>& outputs) {
    const uint32_t S = s.seq, H = s.hidden, F = s.ffn;
    hbm_plan hbm(cc.hbm_base);
    const double wscale_h = 1.0 / std::sqrt(double(H)), wscale_f = 1.0 / std::sqrt(double(F));
    uint64_t seed = s.seed * 1000003;
    auto input = [&](const std::string& n, uint32_t rows, uint32_t cols, double lo, double hi) {
        fill(hbm.t[hbm.add(n, rows, cols)].host, ++seed, lo, hi);
    };
    auto output = [&](const std::string& n, uint32_t rows, uint32_t cols) {
        hbm.add(n, rows, cols);
        outputs.push_back(n);
    };
    if (s.kind == transformer_kind::adam) {
        input("param", s.rows, s.cols, -1, 1);
        input("grad", s.rows, s.cols, -1, 1);
        input("m", s.rows, s.cols, -0.1, 0.1);
        input("v", s.rows, s.cols, 0, 0.01);
        outputs = {"param", "m", "v"};
    } else {
        input("x", S, H, -1, 1);
        if (s.kind != transformer_kind::mlp) {
            for (const char* w : {"Wq", "Wk", "Wv", "Wo"}) input(w, H, H, -2 * wscale_h, 2 * wscale_h);
            if (s.causal) {
                hbm.add("mask", S, S);
                auto& m = hbm["mask"].host;
                for (uint32_t i = 0; i < S; ++i)
                    for (uint32_t j = 0; j < S; ++j) m[uint64_t(i) * S + j] = j <= i ? 0.0f : MASK;
            }
        }
        if (s.kind != transformer_kind::attention) {
            input("W1", H, F, -2 * wscale_h, 2 * wscale_h);
            input("W3", H, F, -2 * wscale_h, 2 * wscale_h);
            input("W2", F, H, -2 * wscale_f, 2 * wscale_f);
        }
        if (s.kind == transformer_kind::decoder) {
            input("g1", 1, H, 0.8, 1.2);
            input("g2", 1, H, 0.8, 1.2);
            if (s.layer_norm) {
                input("b1", 1, H, -0.2, 0.2);
                input("b2", 1, H, -0.2, 0.2);
            }
            if (s.backward) input("dy", S, H, -1, 1);
        }
        output("y", S, H);
        if (s.kind == transformer_kind::decoder && s.backward) {
            output("dx", S, H);
            for (const char* w : {"dWq", "dWk", "dWv", "dWo"}) output(w, H, H);
            output("dW1", H, F);
            output("dW3", H, F);
            output("dW2", F, H);
            output("dg1", 1, H);
            output("dg2", 1, H);
            if (s.layer_norm) {
                output("db1", 1, H);
                output("db2", 1, H);
            }
        }
    }
    if (hbm.next - cc.hbm_base > cc.hbm.capacity_bytes)
        throw std::invalid_argument("the workload's tensors do not fit HBM (chip.hbm.capacity_gib)");

    return hbm;
}

// --- reference: the golden FP64 value of every output (taken before the run: Adam overwrites its inputs) --------
std::map<std::string, golden::mat> golden_outputs(const transformer_spec& s, hbm_plan& hbm) {
    std::map<std::string, golden::mat> want;
    if (s.kind == transformer_kind::adam) {
        auto d = [&](const char* n) { return std::vector<double>(hbm[n].host.begin(), hbm[n].host.end()); };
        std::vector<double> p = d("param"), m = d("m"), v = d("v"), g = d("grad");
        golden::adam(p, m, v, g, s.lr, s.beta1, s.beta2, s.adam_eps, s.step);
        for (auto& [n, vec] : {std::pair<const char*, std::vector<double>*>{"param", &p}, {"m", &m}, {"v", &v}}) {
            golden::mat mm(s.rows, s.cols);
            mm.v = *vec;
            want[n] = mm;
        }
    } else {
        golden::decoder_weights w;
        auto get = [&](const char* n) { return to_mat(hbm[n]); };
        golden::mat x = get("x");
        if (s.kind != transformer_kind::mlp) w.wq = get("Wq"), w.wk = get("Wk"), w.wv = get("Wv"), w.wo = get("Wo");
        if (s.kind != transformer_kind::attention) w.w1 = get("W1"), w.w2 = get("W2"), w.w3 = get("W3");
        if (s.kind == transformer_kind::attention) want["y"] = golden::attention(x, w, s.heads, s.causal);
        if (s.kind == transformer_kind::mlp) want["y"] = golden::mlp(x, w);
        if (s.kind == transformer_kind::decoder) {
            w.g1 = get("g1");
            w.g2 = get("g2");
            w.layer_norm = s.layer_norm;
            if (s.layer_norm) w.b1 = get("b1"), w.b2 = get("b2");
            golden::decoder_grads gr;
            golden::mat dy;
            if (s.backward) dy = get("dy");
            want["y"] = golden::decoder(x, w, s.heads, s.causal, s.eps, s.backward ? &dy : nullptr, &gr);
            if (s.backward) {
                want["dx"] = gr.dx, want["dWq"] = gr.dwq, want["dWk"] = gr.dwk, want["dWv"] = gr.dwv;
                want["dWo"] = gr.dwo, want["dW1"] = gr.dw1, want["dW2"] = gr.dw2, want["dW3"] = gr.dw3;
                want["dg1"] = gr.dg1, want["dg2"] = gr.dg2;
                if (s.layer_norm) want["db1"] = gr.db1, want["db2"] = gr.db2;
            }
        }
    }
    return want;
}

// --- the run's figures from the chip's statistics ------------------------------------------------------------------
void read_figures(const platform::chip_config& cc, const transformer_spec& s, platform::chip& chip, transformer_result& r) {
    r.stats = chip.stats().flatten();
    const std::string c0 = "chip0.core0.";
    r.te_instructions = uint64_t(r.stats[c0 + "te.instructions"]);
    r.vector_instructions = uint64_t(r.stats[c0 + "vector.instructions"]);
    r.scalar_instructions = uint64_t(r.stats[c0 + "scalar.instructions"]);
    r.dma_instructions = uint64_t(r.stats[c0 + "dma_instructions"]);
    r.vector_busy_ns = r.stats[c0 + "vector.busy_ns"];
    r.scalar_busy_ns = r.stats[c0 + "scalar.busy_ns"];
    r.vector_elements = r.stats[c0 + "vector.elements"];
    r.scalar_elements = r.stats[c0 + "scalar.elements"];
    r.te_busy_ns = r.stats[c0 + "te.stream_cycles"] / cc.core.te.clock_ghz;
    r.flops = matmul_flops(s);
    const auto& te = cc.core.te;
    r.peak_tflops = 2.0 * te.rows * te.cols / te.fp32_passes * te.clock_ghz * 1e9 / 1e12;  // one core, FP32
    r.achieved_tflops = r.sim_ns > 0 ? r.flops / (r.sim_ns * 1e-9) / 1e12 : 0;

}

// --- check: what the chip wrote against the golden values (normwise error per output) ----------------------------
void check_outputs(const transformer_spec& s, platform::chip& chip, hbm_plan& hbm, const std::vector<std::string>& outputs,
                   std::map<std::string, golden::mat>& want, transformer_result& r) {
    r.checked = true;
    r.pass = true;
    // Tolerances (normwise, max |got - golden| / max |golden|): the engines compute in FP32 (unit roundoff 6e-8)
    // with activation approximations good to a few ulp (docs/vector_engine.md); a forward pass chains ~10 rounding
    // steps of up to H-term sums, the backward pass about three times as many.
    const double tol_fwd = 2e-5, tol_bwd = 1e-4, tol_adam = 1e-5;
    // Adam's parameter is checked by its update (p' - p): lr-sized, it would vanish in a normwise error of p'.
    std::vector<float> p0;
    if (s.kind == transformer_kind::adam) {
        p0 = hbm["param"].host;
        auto& g = want.at("param");
        for (size_t i = 0; i < p0.size(); ++i) g.v[i] -= double(p0[i]);
    }
    for (const auto& n : outputs) {
        auto& t = hbm[n];
        chip.host_read(t.addr, t.host.data(), t.host.size() * 4);
        if (!p0.empty() && n == "param")
            for (size_t i = 0; i < p0.size(); ++i) t.host[i] = float(double(t.host[i]) - double(p0[i]));
        tensor_check c;
        c.name = !p0.empty() && n == "param" ? "update" : n;
        c.elements = t.host.size();
        const auto& g = want.at(n);
        for (size_t i = 0; i < t.host.size(); ++i) {
            const double got = t.host[i];
            const double err = std::isfinite(got) ? std::fabs(got - g.v[i]) : INFINITY;
            c.max_abs_err = std::max(c.max_abs_err, err);
            c.max_ref = std::max(c.max_ref, std::fabs(g.v[i]));
        }
        c.rel_err = c.max_ref > 0 ? c.max_abs_err / c.max_ref : c.max_abs_err;
        c.tolerance = s.kind == transformer_kind::adam ? tol_adam : (n == "y" ? tol_fwd : tol_bwd);
        if (!p0.empty() && n == "param" && c.max_ref > 0) {
            // plus the rounding of p' itself to FP32 (half an ulp of the largest |p|, 2^-24 relative)
            double pmax = 0;
            for (float v : p0) pmax = std::max(pmax, double(std::fabs(v)));
            c.tolerance += pmax * 0x1.0p-24 / c.max_ref;
        }
        c.pass = c.rel_err <= c.tolerance;
        r.pass = r.pass && c.pass;
        r.checks.push_back(c);
    }
}

} // namespace

transformer_result run_transformer(const platform::platform_config& cfg, const transformer_spec& s,
                                   const transformer_options& opt) {
    const auto& cc = cfg.chip;
    validate(s, cc);
    transformer_result r;
    r.spec = s;
    r.functional = cfg.functional;
    std::vector<std::string> outputs;
    hbm_plan hbm = place_tensors(cc, s, outputs);

    // --- emit: the program of core 0 ---
    kernel_builder kb(cc, 0);
    compiler comp{kb, hbm, s, cc.core.sbuf.partitions};
    switch (s.kind) {
    case transformer_kind::attention: comp.attention_only(); break;
    case transformer_kind::mlp: comp.mlp_only(); break;
    case transformer_kind::decoder: comp.decoder(); break;
    case transformer_kind::adam: comp.adam(); break;
    }
    r.sbuf_bytes_per_partition = kb.sbuf_used();
    const bool check = opt.check && cfg.functional;
    std::map<std::string, golden::mat> want;
    if (check) want = golden_outputs(s, hbm);

    // --- simulate ---
    platform::chip chip("chip0", cc);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    if (cfg.functional)
        for (const auto& t : hbm.t) chip.host_write(t.addr, t.host.data(), t.host.size() * 4);
    chip.cores[0]->load(kb.finish());
    sim_probe probe = make_chip_probe(chip);
    r.wall_s = run_to_completion(probe, opt.sim);
    r.sim_ns = last_completion(chip).to_seconds() * 1e9;
    read_figures(cc, s, chip, r);
    if (check) check_outputs(s, chip, hbm, outputs, want, r);
    return r;
}

} // namespace trnsim::tb

#include "testbench/verification/golden/golden_transformer.h"

#include <cmath>
#include <stdexcept>

namespace trnsim::tb::golden {

mat matmul(const mat& a, const mat& b) {
    if (a.cols != b.rows) throw std::logic_error("golden matmul: shapes");
    mat c(a.rows, b.cols);
    for (uint32_t i = 0; i < a.rows; ++i)
        for (uint32_t k = 0; k < a.cols; ++k) {
            const double x = a(i, k);
            for (uint32_t j = 0; j < b.cols; ++j) c(i, j) += x * b(k, j);
        }
    return c;
}
mat transpose(const mat& a) {
    mat t(a.cols, a.rows);
    for (uint32_t i = 0; i < a.rows; ++i)
        for (uint32_t j = 0; j < a.cols; ++j) t(j, i) = a(i, j);
    return t;
}
mat matmul_tn(const mat& a, const mat& b) { return matmul(transpose(a), b); }
mat matmul_nt(const mat& a, const mat& b) { return matmul(a, transpose(b)); }

namespace {

mat cols(const mat& a, uint32_t c0, uint32_t n) {
    mat r(a.rows, n);
    for (uint32_t i = 0; i < a.rows; ++i)
        for (uint32_t j = 0; j < n; ++j) r(i, j) = a(i, c0 + j);
    return r;
}
void put_cols(mat& a, const mat& b, uint32_t c0) {
    for (uint32_t i = 0; i < b.rows; ++i)
        for (uint32_t j = 0; j < b.cols; ++j) a(i, c0 + j) = b(i, j);
}
void add_cols(mat& a, const mat& b, uint32_t c0) {
    for (uint32_t i = 0; i < b.rows; ++i)
        for (uint32_t j = 0; j < b.cols; ++j) a(i, c0 + j) += b(i, j);
}
mat add(const mat& a, const mat& b) {
    mat r = a;
    for (size_t i = 0; i < r.v.size(); ++i) r.v[i] += b.v[i];
    return r;
}
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// RoPE on every head of d columns of x by the S x d tables (sign -1: the inverse rotation, the backward's).
mat rope(const mat& x, const decoder_weights& w, uint32_t d, double sign) {
    if (w.rope_cos.v.empty()) return x;
    mat y = x;
    const uint32_t h = d / 2;
    for (uint32_t i = 0; i < x.rows; ++i)
        for (uint32_t c = 0; c < x.cols; ++c) {
            const uint32_t o = c % d, pair = c - o + (o < h ? o + h : o - h);
            y(i, c) = x(i, c) * w.rope_cos(i, o) + sign * (o < h ? -1 : 1) * x(i, pair) * w.rope_sin(i, o);
        }
    return y;
}
uint32_t group_of(const decoder_weights& w, uint32_t heads) { return w.kv_heads ? heads / w.kv_heads : 1; }

struct attn_state {
    mat q, k, v, o;
    std::vector<mat> p;  // per head S x S
};
mat attention_fwd(const mat& h, const decoder_weights& w, uint32_t heads, bool causal, attn_state& st) {
    const uint32_t S = h.rows, d = uint32_t(w.wq.cols) / heads, g = group_of(w, heads);
    st.q = rope(matmul(h, w.wq), w, d, 1.0);
    st.k = rope(matmul(h, w.wk), w, d, 1.0);
    st.v = matmul(h, w.wv);
    st.o = mat(S, heads * d);
    st.p.clear();
    const double scale = 1.0 / std::sqrt(double(d));
    for (uint32_t hd = 0; hd < heads; ++hd) {
        mat qh = cols(st.q, hd * d, d), kh = cols(st.k, hd / g * d, d), vh = cols(st.v, hd / g * d, d);
        mat s = matmul_nt(qh, kh);
        mat p(S, S);
        for (uint32_t i = 0; i < S; ++i) {
            double mx = -1e300;
            for (uint32_t j = 0; j < S; ++j)
                if (!causal || j <= i) mx = std::max(mx, s(i, j) * scale);
            double sum = 0;
            for (uint32_t j = 0; j < S; ++j) {
                p(i, j) = (!causal || j <= i) ? std::exp(s(i, j) * scale - mx) : 0.0;
                sum += p(i, j);
            }
            for (uint32_t j = 0; j < S; ++j) p(i, j) /= sum;
        }
        put_cols(st.o, matmul(p, vh), hd * d);
        st.p.push_back(std::move(p));
    }
    return matmul(st.o, w.wo);
}

struct mlp_state {
    mat g, u, sg, m;
};
mat mlp_fwd(const mat& h, const decoder_weights& w, mlp_state& st) {
    st.g = matmul(h, w.w1);
    st.u = matmul(h, w.w3);
    st.sg = st.g;
    st.m = st.g;
    for (size_t i = 0; i < st.g.v.size(); ++i) {
        st.sg.v[i] = sigmoid(st.g.v[i]);
        st.m.v[i] = st.g.v[i] * st.sg.v[i] * st.u.v[i];
    }
    return matmul(st.m, w.w2);
}

} // namespace

mat norm_forward(const mat& x, const mat& g, const mat* b, double eps, norm_state& st) {
    st.xn = mat(x.rows, x.cols);
    st.r.assign(x.rows, 0);
    mat h(x.rows, x.cols);
    for (uint32_t i = 0; i < x.rows; ++i) {
        double mean = 0;
        if (b) {
            for (uint32_t j = 0; j < x.cols; ++j) mean += x(i, j);
            mean /= x.cols;
        }
        double ss = 0;
        for (uint32_t j = 0; j < x.cols; ++j) ss += (x(i, j) - mean) * (x(i, j) - mean);
        st.r[i] = 1.0 / std::sqrt(ss / x.cols + eps);
        for (uint32_t j = 0; j < x.cols; ++j) {
            st.xn(i, j) = (x(i, j) - mean) * st.r[i];
            h(i, j) = st.xn(i, j) * g(0, j) + (b ? (*b)(0, j) : 0.0);
        }
    }
    return h;
}
mat norm_backward(const mat& dh, const mat& g, bool layer_norm, const norm_state& st, mat& dg, mat& db) {
    const uint32_t H = dh.cols;
    dg = mat(1, H);
    db = mat(1, H);
    mat dx(dh.rows, H);
    for (uint32_t i = 0; i < dh.rows; ++i) {
        double c = 0, a = 0;
        for (uint32_t j = 0; j < H; ++j) {
            dg(0, j) += dh(i, j) * st.xn(i, j);
            db(0, j) += dh(i, j);
            c += dh(i, j) * g(0, j) * st.xn(i, j);
            a += dh(i, j) * g(0, j);
        }
        if (!layer_norm) a = 0;
        for (uint32_t j = 0; j < H; ++j) dx(i, j) = st.r[i] * (dh(i, j) * g(0, j) - a / H - st.xn(i, j) * c / H);
    }
    return dx;
}

mat attention(const mat& x, const decoder_weights& w, uint32_t heads, bool causal) {
    attn_state st;
    return attention_fwd(x, w, heads, causal, st);
}

mat mlp(const mat& x, const decoder_weights& w) {
    mlp_state st;
    return mlp_fwd(x, w, st);
}

mat decoder(const mat& x, const decoder_weights& w, uint32_t heads, bool causal, double eps, const mat* dy,
            decoder_grads* gr) {
    const uint32_t S = x.rows, d = uint32_t(w.wq.cols) / heads, grp = group_of(w, heads);
    norm_state n1, n2;
    attn_state at;
    mlp_state ml;
    mat h1 = norm_forward(x, w.g1, w.layer_norm ? &w.b1 : nullptr, eps, n1);
    mat x2 = add(x, attention_fwd(h1, w, heads, causal, at));
    mat h2 = norm_forward(x2, w.g2, w.layer_norm ? &w.b2 : nullptr, eps, n2);
    mat y = add(x2, mlp_fwd(h2, w, ml));
    if (!dy || !gr) return y;

    // MLP
    gr->dw2 = matmul_tn(ml.m, *dy);
    mat dm = matmul_nt(*dy, w.w2);
    mat dg(S, uint32_t(w.w1.cols)), du(S, uint32_t(w.w1.cols));
    for (size_t i = 0; i < dm.v.size(); ++i) {
        const double g = ml.g.v[i], s = ml.sg.v[i];
        du.v[i] = dm.v[i] * g * s;
        dg.v[i] = dm.v[i] * ml.u.v[i] * s * (1.0 + g * (1.0 - s));
    }
    gr->dw1 = matmul_tn(h2, dg);
    gr->dw3 = matmul_tn(h2, du);
    mat dh2 = add(matmul_nt(dg, w.w1), matmul_nt(du, w.w3));
    mat dx2 = add(*dy, norm_backward(dh2, w.g2, w.layer_norm, n2, gr->dg2, gr->db2));
    // Attention
    gr->dwo = matmul_tn(at.o, dx2);
    mat d_o = matmul_nt(dx2, w.wo);
    mat dq(S, heads * d), dk(S, uint32_t(w.wk.cols)), dv(S, uint32_t(w.wv.cols));
    const double scale = 1.0 / std::sqrt(double(d));
    for (uint32_t hd = 0; hd < heads; ++hd) {
        const mat& p = at.p[hd];
        const uint32_t kc = hd / grp * d;  // the key/value head's columns
        mat doh = cols(d_o, hd * d, d), vh = cols(at.v, kc, d), qh = cols(at.q, hd * d, d), kh = cols(at.k, kc, d);
        mat dp = matmul_nt(doh, vh);
        add_cols(dv, matmul_tn(p, doh), kc);
        mat ds(S, S);
        for (uint32_t i = 0; i < S; ++i) {
            double rs = 0;
            for (uint32_t j = 0; j < S; ++j) rs += dp(i, j) * p(i, j);
            for (uint32_t j = 0; j < S; ++j) ds(i, j) = p(i, j) * (dp(i, j) - rs) * scale;
        }
        put_cols(dq, matmul(ds, kh), hd * d);
        add_cols(dk, matmul_tn(ds, qh), kc);
    }
    dq = rope(dq, w, d, -1.0);  // back through the rotation
    dk = rope(dk, w, d, -1.0);
    gr->dwq = matmul_tn(h1, dq);
    gr->dwk = matmul_tn(h1, dk);
    gr->dwv = matmul_tn(h1, dv);
    mat dh1 = add(add(matmul_nt(dq, w.wq), matmul_nt(dk, w.wk)), matmul_nt(dv, w.wv));
    gr->dx = add(dx2, norm_backward(dh1, w.g1, w.layer_norm, n1, gr->dg1, gr->db1));
    return y;
}

void adam(std::vector<double>& p, std::vector<double>& m, std::vector<double>& v, const std::vector<double>& g,
          double lr, double beta1, double beta2, double eps, uint32_t step) {
    const double c1 = 1.0 - std::pow(beta1, step), c2 = 1.0 - std::pow(beta2, step);
    for (size_t i = 0; i < p.size(); ++i) {
        m[i] = beta1 * m[i] + (1.0 - beta1) * g[i];
        v[i] = beta2 * v[i] + (1.0 - beta2) * g[i] * g[i];
        p[i] -= lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + eps);
    }
}

} // namespace trnsim::tb::golden

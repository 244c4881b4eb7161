#include "testbench/verification/golden/golden_gemm.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <thread>

#include "models/numerics/dtype.h"

namespace trnsim::tb {

namespace {
// Rows i0..i1 of C, blocked for the host: R rows x W columns of one group's partial sums live in vector registers
// while k runs (GCC vector types; the plain row-by-row loop read all of B per row of C and was memory bound).
// Every element keeps the order of operations above: per group, y = +0.0, then y = y + a * b in k order (separate
// FP32 multiply and add: the project builds without FP contraction); C = the first group's y, then C = C + y group
// by group. Columns left over at the right edge take the scalar loop, in the same order.
typedef float vf __attribute__((vector_size(64)));  // 16 floats
constexpr uint64_t R = 6, V = 2, W = 16 * V;

inline vf load(const float* p) {
    vf v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// One R x W block of one group: y[r][v] = sum over kk of at[kk][i + r] * b[kk][j + 16 v .. + 16).
// The accumulators are locals (kept in registers), written out once at the end. Rows past nr (the last block of
// a thread's rows) read a zero instead of A and are not written back.
void block(const float* at, const float* b, uint64_t m, uint64_t n, uint64_t i, uint64_t nr, uint64_t j, uint64_t g0,
           uint64_t g1, vf (&y)[R][V]) {
    vf acc[R][V] = {};
    float a[R];
    for (uint64_t kk = g0; kk < g1; ++kk) {
        const float* bk = b + kk * n + j;
        vf bv[V];
        for (uint64_t v = 0; v < V; ++v) bv[v] = load(bk + 16 * v);
        const float* ak = at + kk * m + i;
        for (uint64_t r = 0; r < R; ++r) a[r] = r < nr ? ak[r] : 0.0f;
#pragma GCC unroll 8
        for (uint64_t r = 0; r < R; ++r)
#pragma GCC unroll 4
            for (uint64_t v = 0; v < V; ++v) acc[r][v] = acc[r][v] + a[r] * bv[v];
    }
    std::memcpy(y, acc, sizeof acc);
}

void rows(const std::vector<float>& at, const std::vector<float>& b, uint64_t m, uint64_t k, uint64_t n,
          uint64_t k_group, uint64_t i0, uint64_t i1, float* c, std::atomic<uint64_t>* done) {
    constexpr uint64_t JC = 256;  // columns of B per pass over this thread's rows: a group's chunk stays in L2
    std::vector<float> y(n);
    const uint64_t nv = n / W * W;  // columns done in vector blocks
    for (uint64_t g0 = 0; g0 < k; g0 += k_group) {
        const uint64_t g1 = std::min(k, g0 + k_group);
        for (uint64_t jc = 0; jc < nv; jc += JC) {
            for (uint64_t ib = i0; ib < i1; ib += R) {
                const uint64_t nr = std::min(R, i1 - ib);
                for (uint64_t j = jc; j < std::min(nv, jc + JC); j += W) {
                    vf yb[R][V];
                    block(at.data(), b.data(), m, n, ib, nr, j, g0, g1, yb);
                    for (uint64_t r = 0; r < nr; ++r) {
                        float* ci = c + (ib + r) * n + j;
                        float part[W];
                        std::memcpy(part, yb[r], sizeof part);
                        for (uint64_t e = 0; e < W; ++e) ci[e] = g0 == 0 ? part[e] : ci[e] + part[e];
                    }
                }
            }
        }
        for (uint64_t i = i0; i < i1 && nv < n; ++i) {  // the right edge
            std::fill(y.begin() + nv, y.end(), 0.0f);
            for (uint64_t kk = g0; kk < g1; ++kk) {
                const float a = at[kk * m + i];
                const float* bk = b.data() + kk * n;
                for (uint64_t j = nv; j < n; ++j) y[j] = y[j] + a * bk[j];
            }
            float* ci = c + i * n;
            for (uint64_t j = nv; j < n; ++j) ci[j] = g0 == 0 ? y[j] : ci[j] + y[j];
        }
        if (g1 == k) *done += i1 - i0;
    }
    for (uint64_t i = i0; i < i1; ++i) {
        float* ci = c + i * n;
        for (uint64_t j = 0; j < n; ++j)
            if (std::isnan(ci[j])) std::memcpy(&ci[j], &numerics::canonical_nan_bits, 4);
    }
}
} // namespace

std::vector<float> golden_gemm(const std::vector<float>& at, const std::vector<float>& b, uint64_t m, uint64_t k,
                               uint64_t n, uint64_t k_group, unsigned threads, double progress_after_s) {
    std::vector<float> c(m * n);
    threads = std::max(1u, std::min<unsigned>(threads, unsigned(m)));
    std::vector<std::thread> pool;
    std::atomic<uint64_t> done{0};
    for (unsigned t = 0; t < threads; ++t) {
        uint64_t i0 = m * t / threads, i1 = m * (t + 1) / threads;
        pool.emplace_back(rows, std::cref(at), std::cref(b), m, k, n, k_group, i0, i1, c.data(), &done);
    }
    // A progress line on stderr once the check has taken progress_after_s (as the simulation's, sim_run.h).
    if (progress_after_s > 0) {
        using clock = std::chrono::steady_clock;
        const auto t0 = clock::now();
        bool printed = false;
        double next = progress_after_s;
        while (done.load() < m) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            const double wall = std::chrono::duration<double>(clock::now() - t0).count();
            if (wall < next) continue;
            next = wall + 1;
            std::fprintf(stderr, "\r[%6.1f s wall] golden check: %llu of %llu rows of C   ", wall,
                         (unsigned long long)done.load(), (unsigned long long)m);
            printed = true;
        }
        if (printed) std::fprintf(stderr, "\n");
    }
    for (auto& th : pool) th.join();
    return c;
}

std::vector<double> fp64_reference(const std::vector<float>& at, const std::vector<float>& b, uint64_t m, uint64_t k,
                                   uint64_t n, const std::vector<uint64_t>& idx) {
    std::vector<double> s(idx.size(), 0.0);
    for (uint64_t kk = 0; kk < k; ++kk) {
        const float* ak = at.data() + kk * m;
        const float* bk = b.data() + kk * n;
        for (size_t e = 0; e < idx.size(); ++e) s[e] += double(ak[idx[e] / n]) * double(bk[idx[e] % n]);
    }
    return s;
}

} // namespace trnsim::tb

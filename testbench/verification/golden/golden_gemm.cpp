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
void rows(const std::vector<float>& at, const std::vector<float>& b, uint64_t m, uint64_t k, uint64_t n,
          uint64_t k_group, uint64_t i0, uint64_t i1, float* c, std::atomic<uint64_t>* done) {
    std::vector<float> y(n);
    for (uint64_t i = i0; i < i1; ++i, ++*done) {
        float* ci = c + i * n;
        for (uint64_t g0 = 0; g0 < k; g0 += k_group) {
            std::fill(y.begin(), y.end(), 0.0f);
            for (uint64_t kk = g0; kk < std::min(k, g0 + k_group); ++kk) {
                const float a = at[kk * m + i];
                const float* bk = b.data() + kk * n;
                for (uint64_t j = 0; j < n; ++j) y[j] = y[j] + a * bk[j];
            }
            if (g0 == 0) std::copy(y.begin(), y.end(), ci);
            else
                for (uint64_t j = 0; j < n; ++j) ci[j] = ci[j] + y[j];
        }
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

double fp64_reference(const std::vector<float>& at, const std::vector<float>& b, uint64_t m, uint64_t k, uint64_t n,
                      uint64_t i, uint64_t j) {
    double s = 0;
    for (uint64_t kk = 0; kk < k; ++kk) s += double(at[kk * m + i]) * double(b[kk * n + j]);
    return s;
}

} // namespace trnsim::tb

#include "models/tensor_engine/pe_array.h"

#include <cmath>
#include <cstring>

#include "models/numerics/dtype.h"

namespace trnsim::te {

namespace {

// A register block of MB output rows x NB output columns, accumulated over all kk. The compiler keeps acc in
// vector registers; -ffp-contract=off keeps multiply and add separately rounded.
template <int MB, int NB>
inline void block(const float* S, const float* X, uint32_t k, uint32_t m, uint32_t n, float* Y, uint32_t c0,
                  uint32_t j0) {
    float acc[MB][NB];
    for (int i = 0; i < MB; ++i)
        for (int j = 0; j < NB; ++j) acc[i][j] = 0.0f;
    for (uint32_t kk = 0; kk < k; ++kk) {
        const float* x = X + size_t(kk) * n + j0;
        const float* s = S + size_t(kk) * m + c0;
        for (int i = 0; i < MB; ++i) {
            const float w = s[i];
            for (int j = 0; j < NB; ++j) acc[i][j] = acc[i][j] + w * x[j];
        }
    }
    for (int i = 0; i < MB; ++i) std::memcpy(Y + size_t(c0 + i) * n + j0, acc[i], sizeof(float) * NB);
}

// Any leftover edge (fewer than MB rows or NB columns): the same order, scalar.
void edge(const float* S, const float* X, uint32_t k, uint32_t m, uint32_t n, float* Y, uint32_t c0, uint32_t c1,
          uint32_t j0, uint32_t j1) {
    for (uint32_t c = c0; c < c1; ++c)
        for (uint32_t j = j0; j < j1; ++j) {
            float acc = 0.0f;
            for (uint32_t kk = 0; kk < k; ++kk) acc = acc + S[size_t(kk) * m + c] * X[size_t(kk) * n + j];
            Y[size_t(c) * n + j] = acc;
        }
}

} // namespace

void pe_array_compute(const float* S, const float* X, uint32_t k, uint32_t m, uint32_t n, float* Y) {
    constexpr int MB = 8, NB = 32;  // 8x32: 2.5x the GMAC/s of 4x32 on this host (docs/PERFORMANCE.md)
    uint32_t mfull = m - m % MB, nfull = n - n % NB;
    for (uint32_t c0 = 0; c0 < mfull; c0 += MB)
        for (uint32_t j0 = 0; j0 < nfull; j0 += NB) block<MB, NB>(S, X, k, m, n, Y, c0, j0);
    if (nfull < n) edge(S, X, k, m, n, Y, 0, mfull, nfull, n);
    if (mfull < m) edge(S, X, k, m, n, Y, mfull, m, 0, n);
    for (size_t i = 0, e = size_t(m) * n; i < e; ++i)
        if (std::isnan(Y[i])) std::memcpy(&Y[i], &numerics::canonical_nan_bits, 4);
}

} // namespace trnsim::te

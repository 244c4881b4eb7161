// Golden reference and stimulus of the matrix engine co-verification (plain C++, no Verilator, no SystemC): used
// by testbench/verification/cosim/cosim_run (trnsim cosim) and by the pin-level tests in tests/cosim.
//
// Golden PE arithmetic (docs/tensor_engine.md): psum starts at +0.0 and for k = 0 .. K-1 becomes
// fl32(psum + fl32(w * x)). Build with -ffp-contract=off so that the compiler never fuses the two roundings.
#pragma once
#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "models/numerics/dtype.h"

namespace trnsim::cosim {

using numerics::dtype;

inline uint32_t f2u(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float u2f(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t canon_bits(float f) { return std::isnan(f) ? numerics::canonical_nan_bits : f2u(f); }

// Exact decode of a raw element to FP32, written from the format definitions (ldexp), independently of the RTL.
inline float decode_elem(dtype t, uint16_t raw) {
    auto sgn = [](bool s, float v) { return s ? -v : v; };
    switch (t) {
    case dtype::bf16: return u2f(uint32_t(raw) << 16);
    case dtype::fp16: {
        bool s = raw >> 15; int e = (raw >> 10) & 31, m = raw & 1023;
        if (e == 31) return m ? NAN : sgn(s, INFINITY);
        return sgn(s, e ? std::ldexp(float(1024 + m), e - 25) : std::ldexp(float(m), -24));
    }
    case dtype::fp8_e4m3: {
        bool s = (raw >> 7) & 1; int e = (raw >> 3) & 15, m = raw & 7;
        if (e == 15 && m == 7) return NAN;
        return sgn(s, e ? std::ldexp(float(8 + m), e - 10) : std::ldexp(float(m), -9));
    }
    case dtype::fp8_e5m2: {
        bool s = (raw >> 7) & 1; int e = (raw >> 2) & 31, m = raw & 3;
        if (e == 31) return m ? NAN : sgn(s, INFINITY);
        return sgn(s, e ? std::ldexp(float(4 + m), e - 17) : std::ldexp(float(m), -16));
    }
    default: return 0.0f;
    }
}

// One MATMUL tile: S[k][m], X[k][n] (raw elements, row-major), Y[m][n] as FP32 bits.
struct tile {
    dtype type = dtype::bf16;
    uint32_t k = 1, m = 1, n = 1;
    uint64_t ready = 0;              // cycle its operands are available
    std::vector<uint16_t> s, x;      // s[kk * m + c], x[kk * n + j]
    std::vector<uint32_t> golden;    // golden[c * n + j]
};

inline void compute_golden(tile& t) {
    std::vector<float> s(t.s.size()), x(t.x.size());
    for (size_t i = 0; i < s.size(); i++) s[i] = decode_elem(t.type, t.s[i]);
    for (size_t i = 0; i < x.size(); i++) x[i] = decode_elem(t.type, t.x[i]);
    t.golden.assign(size_t(t.m) * t.n, 0);
    for (uint32_t c = 0; c < t.m; c++)
        for (uint32_t j = 0; j < t.n; j++) {
            float psum = 0.0f;
            for (uint32_t kk = 0; kk < t.k; kk++) {
                float prod = s[size_t(kk) * t.m + c] * x[size_t(kk) * t.n + j];
                psum = psum + prod;
            }
            t.golden[size_t(c) * t.n + j] = canon_bits(psum);
        }
}

// Random raw elements: a per-tile value profile so that tiles exercise rounding (values of similar magnitude),
// cancellation and signed zeros (small integers), gradual underflow (subnormals), and every encoding (random bits,
// which include NaN, Inf, subnormals and -0).
class stimulus {
public:
    explicit stimulus(uint64_t seed) : m_rng(seed) {}

    uint32_t uniform(uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(m_rng); }
    bool chance(double p) { return std::bernoulli_distribution(p)(m_rng); }

    tile random_tile(const std::vector<dtype>& types, uint32_t rows, uint32_t cols, uint32_t n_max, uint32_t min_ii,
                     uint32_t ls) {
        tile t;
        t.type = types[uniform(0, uint32_t(types.size() - 1))];
        uint32_t r = uniform(0, 9);
        t.k = r < 3 ? rows : r < 5 ? uniform(1, std::min(ls, rows)) : uniform(1, rows);
        t.m = chance(0.3) ? cols : uniform(1, cols);
        r = uniform(0, 9);
        const uint32_t ii = std::max(1u, std::min(min_ii, n_max));
        if (r < 4) t.n = uniform(1, ii);                                    // N <= MIN_II: held for T
        else if (r < 5) t.n = std::min(n_max, std::max(1u, ii - 1 + uniform(0, 2)));  // around MIN_II
        else if (r < 9) t.n = uniform(1, std::min(n_max, 2 * ii));
        else t.n = uniform(1, n_max);
        m_profile = uniform(0, 4);
        t.s.resize(size_t(t.k) * t.m);
        t.x.resize(size_t(t.k) * t.n);
        for (auto& v : t.s) v = element(t.type);
        for (auto& v : t.x) v = element(t.type);
        compute_golden(t);
        return t;
    }

    // Corner tiles (geometry extremes, N around MIN_II, W = 1 and W = max, single-column tiles back to back),
    // types in turn; values from the profiles.
    std::vector<tile> directed_tiles(const std::vector<dtype>& types, uint32_t rows, uint32_t cols, uint32_t n_max,
                                     uint32_t min_ii, uint32_t ls) {
        auto cl = [](uint32_t v, uint32_t hi) { return std::max(1u, std::min(v, hi)); };
        const uint32_t shapes[][3] = {  // k, m, n
            {rows, cols, 1}, {1, 1, 1}, {rows, cols, n_max}, {ls, cols, min_ii}, {ls + 1, 1, min_ii + 1},
            {rows, cols, min_ii - 1}, {1, cols, 1}, {1, cols, 1}, {rows, 1, 1}, {rows, cols, 1}, {ls, cols, n_max},
            {rows, cols, n_max}, {1, 1, min_ii}, {rows, cols, 2}};
        std::vector<tile> out;
        size_t i = 0;
        for (const auto& sh : shapes) {
            tile t;
            t.type = types[i % types.size()];
            t.k = cl(sh[0], rows);
            t.m = cl(sh[1], cols);
            t.n = cl(sh[2], n_max);
            m_profile = unsigned(i++ % 5);
            t.s.resize(size_t(t.k) * t.m);
            t.x.resize(size_t(t.k) * t.n);
            for (auto& v : t.s) v = element(t.type);
            for (auto& v : t.x) v = element(t.type);
            compute_golden(t);
            out.push_back(std::move(t));
        }
        return out;
    }

    // A raw element of format t under the current profile.
    uint16_t element(dtype t) {
        const fmt f = format_of(t);
        switch (m_profile) {
        case 0: return uint16_t(uniform(0, (1u << f.bits) - 1));                  // any encoding
        case 1: return chance(0.03) ? special(f) : near_one(f, 3);               // rounding
        case 2: return chance(0.5) ? subnormal(f) : (chance(0.1) ? special(f) : near_one(f, 2));
        case 3: {                                                                // small integers, cancellation
            static const float vals[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 0.5f, -0.5f, 3.0f, -3.0f};
            return encode_simple(f, vals[uniform(0, 9)]);
        }
        default: return chance(0.1) ? special(f) : near_one(f, f.emax_field / 2); // wide range, overflow
        }
    }

private:
    struct fmt { unsigned bits, ebits, mbits, bias, emax_field; bool e4m3; };
    static fmt format_of(dtype t) {
        switch (t) {
        case dtype::bf16: return {16, 8, 7, 127, 255, false};
        case dtype::fp16: return {16, 5, 10, 15, 31, false};
        case dtype::fp8_e4m3: return {8, 4, 3, 7, 15, true};
        default: return {8, 5, 2, 15, 31, false};
        }
    }
    uint16_t pack(const fmt& f, unsigned s, unsigned e, unsigned m) const {
        return uint16_t((s << (f.bits - 1)) | (e << f.mbits) | m);
    }
    uint16_t near_one(const fmt& f, unsigned spread) {
        int e = int(f.bias) + int(uniform(0, 2 * spread)) - int(spread);
        e = std::max(1, std::min(e, int(f.emax_field) - 1));
        return pack(f, uniform(0, 1), unsigned(e), uniform(0, (1u << f.mbits) - 1));
    }
    uint16_t subnormal(const fmt& f) { return pack(f, uniform(0, 1), 0, uniform(1, (1u << f.mbits) - 1)); }
    uint16_t special(const fmt& f) {
        unsigned s = uniform(0, 1), mmax = (1u << f.mbits) - 1;
        switch (uniform(0, 6)) {
        case 0: return pack(f, s, 0, 0);                                           // +-0
        case 1: return f.e4m3 ? pack(f, s, 15, 6) : pack(f, s, f.emax_field, 0);   // Inf (E4M3: max finite)
        case 2: return f.e4m3 ? pack(f, s, 15, 7) : pack(f, s, f.emax_field, uniform(1, mmax)); // NaN
        case 3: return pack(f, s, 0, 1);                                           // smallest subnormal
        case 4: return pack(f, s, 0, mmax);                                        // largest subnormal
        case 5: return f.e4m3 ? pack(f, s, 15, 6) : pack(f, s, f.emax_field - 1, mmax); // max finite
        default: return pack(f, s, 1, 0);                                          // min normal
        }
    }
    uint16_t encode_simple(const fmt& f, float v) const {   // v is 0, +-0.5, +-1, +-2 or +-3
        unsigned s = std::signbit(v);
        float a = std::fabs(v);
        if (a == 0.0f) return pack(f, s, 0, 0);
        int ex; float fr = std::frexp(a, &ex);  // a = fr * 2^ex, fr in [0.5, 1)
        unsigned m = unsigned((fr * 2.0f - 1.0f) * float(1u << f.mbits));
        return pack(f, s, unsigned(int(f.bias) + ex - 1), m);
    }

    std::mt19937_64 m_rng;
    unsigned m_profile = 0;
};

// The dtype's canonical name, for printf-style failure messages. Spelled out here (not numerics::name_of) because
// this header is all the standalone RTL harnesses (tests/cosim/me_cosim_test.cpp) take from the C++ model: they link
// the Verilated RTL only.
inline const char* type_name(dtype t) {
    switch (t) {
    case dtype::fp32: return "fp32";
    case dtype::tf32: return "tf32";
    case dtype::bf16: return "bf16";
    case dtype::fp16: return "fp16";
    case dtype::fp8_e4m3: return "fp8_e4m3";
    case dtype::fp8_e5m2: return "fp8_e5m2";
    }
    return "?";
}

// Elements of a tile operand (one or two bytes each, in the low bits of a uint16_t) packed little-endian into the
// bytes a Tensor Engine job carries.
inline std::vector<uint8_t> pack_operand(const std::vector<uint16_t>& v, dtype t) {
    const size_t bytes = numerics::size_of(t);
    std::vector<uint8_t> b(v.size() * bytes);
    for (size_t e = 0; e < v.size(); e++) {
        b[e * bytes] = uint8_t(v[e]);
        if (bytes == 2) b[e * bytes + 1] = uint8_t(v[e] >> 8);
    }
    return b;
}

} // namespace trnsim::cosim

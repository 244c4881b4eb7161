#include "models/numerics/mx.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "models/numerics/dtype.h"

namespace trnsim::numerics::mx {

std::string_view name_of(element e) {
    switch (e) {
    case element::e4m3: return "mxfp8_e4m3";
    case element::e5m2: return "mxfp8_e5m2";
    case element::e2m1: return "mxfp4_e2m1";
    }
    return "?";
}

std::optional<element> parse_element(std::string_view s) {
    for (element e : {element::e4m3, element::e5m2, element::e2m1})
        if (s == name_of(e)) return e;
    return std::nullopt;
}

int emax_of(element e) { return e == element::e4m3 ? 8 : e == element::e5m2 ? 15 : 2; }
float max_normal(element e) { return e == element::e4m3 ? 448.0f : e == element::e5m2 ? 57344.0f : 6.0f; }
unsigned bits_of(element e) { return e == element::e2m1 ? 4 : 8; }

float e8m0_to_fp32(uint8_t code) {
    if (code == nan_scale) return std::numeric_limits<float>::quiet_NaN();
    return std::ldexp(1.0f, int(code) - 127);  // 2^-127 is an FP32 subnormal: exact
}

namespace {

uint8_t encode_element(element e, float x) {
    switch (e) {
    case element::e4m3: return fp32_to_e4m3(x);  // saturates to +-448
    case element::e5m2: return fp32_to_e5m2(x);  // saturates finite values to +-57344 (x is finite here)
    case element::e2m1: return fp32_to_e2m1(x);  // saturates to +-6
    }
    return 0;
}

float decode_element(element e, uint8_t c) {
    switch (e) {
    case element::e4m3: return e4m3_to_fp32(c);
    case element::e5m2: return e5m2_to_fp32(c);
    case element::e2m1: return e2m1_to_fp32(c & 0xFu);
    }
    return 0;
}

} // namespace

uint8_t encode_block(element e, const float* v, size_t n, uint8_t* codes) {
    float amax = 0.0f;
    bool special = false;
    for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(v[i])) special = true;
        else amax = std::max(amax, std::fabs(v[i]));
    }
    // floor(log2(amax)) is the FP32 exponent of amax (ilogb; subnormals too); zero blocks take the smallest scale.
    int shared = amax > 0.0f ? std::ilogb(amax) - emax_of(e) : -127;
    shared = std::max(-127, std::min(127, shared));
    for (size_t i = 0; i < n; ++i) {
        // V / X: a power-of-two scaling, exact unless it underflows FP32, where every element format rounds to zero.
        const float x = std::isfinite(v[i]) ? std::ldexp(v[i], -shared) : 0.0f;
        codes[i] = encode_element(e, x);
    }
    return special ? nan_scale : uint8_t(shared + 127);
}

void decode_block(element e, uint8_t scale, const uint8_t* codes, size_t n, float* out) {
    if (scale == nan_scale) {
        for (size_t i = 0; i < n; ++i) out[i] = std::numeric_limits<float>::quiet_NaN();
        return;
    }
    // X * P in double is exact (a power of two times a short significand); rounding to FP32 is exact within its
    // range and gives +-Inf above it.
    const double x = std::ldexp(1.0, int(scale) - 127);
    for (size_t i = 0; i < n; ++i) out[i] = float(x * double(decode_element(e, codes[i])));
}

void encode(element e, const float* v, size_t n, uint8_t* scales, uint8_t* codes) {
    for (size_t b = 0; b * block_size < n; ++b) {
        const size_t off = b * block_size;
        scales[b] = encode_block(e, v + off, std::min(block_size, n - off), codes + off);
    }
}

void decode(element e, const uint8_t* scales, const uint8_t* codes, size_t n, float* out) {
    for (size_t b = 0; b * block_size < n; ++b) {
        const size_t off = b * block_size;
        decode_block(e, scales[b], codes + off, std::min(block_size, n - off), out + off);
    }
}

void pack_e2m1(const uint8_t* codes, size_t n, uint8_t* packed) {
    for (size_t j = 0; 2 * j < n; ++j)
        packed[j] = uint8_t((codes[2 * j] & 0xFu) | (2 * j + 1 < n ? (codes[2 * j + 1] & 0xFu) << 4 : 0u));
}

void unpack_e2m1(const uint8_t* packed, size_t n, uint8_t* codes) {
    for (size_t i = 0; i < n; ++i) codes[i] = (packed[i / 2] >> (4 * (i % 2))) & 0xFu;
}

} // namespace trnsim::numerics::mx

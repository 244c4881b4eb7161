// Conversions between FP32 and the Tensor Engine's narrow formats. See dtype.h and docs/numerics.md for the rules.
//
// Everything is integer bit manipulation on the FP32 encoding: the result never depends on the host FPU (rounding
// mode, FTZ/DAZ, x87 excess precision).
#include "models/numerics/dtype.h"

#include <cstring>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "decode()/encode() assume a little-endian host (arrays are packed little-endian)"
#endif

namespace trnsim::numerics {
namespace {

inline uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

constexpr uint32_t f32_abs_mask = 0x7FFFFFFFu;
constexpr uint32_t f32_inf = 0x7F800000u;

// Round-to-nearest-even right shift of x by s bits, 1 <= s <= 31. Exact (no uint32 wrap) for x <= 2^32 - 2^s; the
// callers only ever wrap on lanes whose result they discard.
inline uint32_t rne_shift(uint32_t x, uint32_t s) {
    return (x + ((1u << (s - 1)) - 1u) + ((x >> s) & 1u)) >> s;
}

// ---------------------------------------------------------------------------------------------------------------
// Formats with the FP32 exponent range (BF16, TF32): drop low mantissa bits with RNE. A mantissa carry walks into
// the exponent, which gives normal->next binade, subnormal->min normal and max finite->Inf for free.

inline uint16_t enc_bf16(uint32_t u) {
    const uint32_t a = u & f32_abs_mask;
    const uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t r = rne_shift(a, 16);  // a <= 0x7F800000 here, so no overflow of the addition
    r = a > f32_inf ? 0x7FC0u : r;
    return static_cast<uint16_t>(r | sign);
}

inline uint32_t enc_tf32(uint32_t u) {
    const uint32_t a = u & f32_abs_mask;
    const uint32_t sign = u & 0x80000000u;
    uint32_t r = rne_shift(a, 13) << 13;
    r = a > f32_inf ? 0x7FC00000u : r;
    return r | sign;
}

// ---------------------------------------------------------------------------------------------------------------
// Formats with a narrower exponent (FP16, E5M2, E4M3): E exponent bits, M mantissa bits, bias B.
//   MaxFinite : magnitude code of the largest finite value.
//   OvfCode   : magnitude code for a finite value whose rounded magnitude exceeds MaxFinite (Inf or MaxFinite).
//   InfCode   : magnitude code for an Inf input.
//   NanCode   : magnitude code of the canonical quiet NaN.
// Written without branches so that the array loop can be if-converted and vectorised.
template <int E, int M, int B, uint32_t MaxFinite, uint32_t OvfCode, uint32_t InfCode, uint32_t NanCode>
inline uint32_t enc_narrow(uint32_t u) {
    static_assert(M >= 1 && M <= 10 && B >= 1 && 127 - B > 0, "format outside what this encoder handles");
    constexpr uint32_t shift_normal = 23 - M;
    constexpr uint32_t rebias = static_cast<uint32_t>(127 - B) << 23;
    constexpr uint32_t min_normal_exp = 128 - B;  // FP32 biased exponent of the target's smallest normal binade

    const uint32_t a = u & f32_abs_mask;
    const uint32_t sign = (u >> 31) << (E + M);
    const uint32_t e = a >> 23;

    // Target-normal range: rebias the exponent in place and drop 23-M mantissa bits with RNE.
    const uint32_t r_normal = rne_shift(a - rebias, shift_normal);

    // Target-subnormal range: significand (with hidden bit; FP32 subnormals have exponent 1 and no hidden bit) is
    // sig * 2^(eff_e - 150); the target's subnormal unit is 2^(1 - B - M). Shift right by the difference.
    // A carry out of the subnormal mantissa lands exactly on the code of the smallest normal.
    const uint32_t sig = (a & 0x007FFFFFu) | (e != 0 ? 0x00800000u : 0u);
    const uint32_t eff_e = e != 0 ? e : 1u;
    // In this range the shift is >= 24 - M; sig < 2^24, so any shift >= 25 already gives 0 and clamping to 31 is
    // exact. Lanes in the normal range compute a discarded value; the clamp to >= 1 keeps their shift defined.
    int sh = 151 - B - M - static_cast<int>(eff_e);
    sh = sh > 31 ? 31 : (sh < 1 ? 1 : sh);
    const uint32_t r_sub = rne_shift(sig, static_cast<uint32_t>(sh));

    uint32_t r = e >= min_normal_exp ? r_normal : r_sub;
    r = r > MaxFinite ? OvfCode : r;
    r = a == f32_inf ? InfCode : r;
    r = a > f32_inf ? NanCode : r;
    return r | sign;
}

inline uint16_t enc_fp16(uint32_t u) {
    return static_cast<uint16_t>(enc_narrow<5, 10, 15, 0x7BFFu, 0x7C00u, 0x7C00u, 0x7E00u>(u));
}
inline uint8_t enc_e5m2(uint32_t u) {
    return static_cast<uint8_t>(enc_narrow<5, 2, 15, 0x7Bu, 0x7Bu, 0x7Cu, 0x7Eu>(u));
}
inline uint8_t enc_e4m3(uint32_t u) {
    return static_cast<uint8_t>(enc_narrow<4, 3, 7, 0x7Eu, 0x7Eu, 0x7Eu, 0x7Fu>(u));
}

// ---------------------------------------------------------------------------------------------------------------
// Decoding: field-wise, exact. Inf/NaN: exponent all ones -> 0xFF, mantissa left-aligned (payload kept, not
// quieted), sign kept. FnNan: no Inf, only exponent and mantissa all ones is NaN (E4M3 "fn").
template <int E, int M, int B, bool FnNan>
uint32_t dec_narrow(uint32_t v) {
    constexpr uint32_t emax = (1u << E) - 1u;
    constexpr uint32_t mmask = (1u << M) - 1u;
    const uint32_t sign = ((v >> (E + M)) & 1u) << 31;
    const uint32_t ef = (v >> M) & emax;
    const uint32_t mf = v & mmask;
    const bool special = FnNan ? (ef == emax && mf == mmask) : (ef == emax);
    if (special) return sign | f32_inf | (mf << (23 - M));
    if (ef != 0) return sign | ((ef - B + 127) << 23) | (mf << (23 - M));
    if (mf == 0) return sign;
    // Subnormal mf * 2^(1-B-M): leading one at bit p gives 2^(p+1-B-M) * 1.xxx.
    int p = M - 1;
    while (((mf >> p) & 1u) == 0) --p;
    const uint32_t exp32 = static_cast<uint32_t>(p + 1 - B - M + 127);
    return sign | (exp32 << 23) | ((mf & ~(1u << p)) << (23 - p));
}

constexpr uint32_t tf32_mask = 0xFFFFE000u;  // sign, exponent and the 10 TF32 mantissa bits

template <size_t N>
struct decode_table {
    uint32_t bits[N];
    template <class F>
    explicit decode_table(F f) {
        for (size_t i = 0; i < N; ++i) bits[i] = f(static_cast<uint32_t>(i));
    }
};

const uint32_t* bf16_table() {
    static const decode_table<65536> t([](uint32_t v) { return v << 16; });
    return t.bits;
}
const uint32_t* fp16_table() {
    static const decode_table<65536> t(dec_narrow<5, 10, 15, false>);
    return t.bits;
}
const uint32_t* e4m3_table() {
    static const decode_table<256> t(dec_narrow<4, 3, 7, true>);
    return t.bits;
}
const uint32_t* e5m2_table() {
    static const decode_table<256> t(dec_narrow<5, 2, 15, false>);
    return t.bits;
}

template <class T>
void decode_lut(const uint32_t* table, const void* src, float* dst, size_t n) {
    const auto* s = static_cast<const unsigned char*>(src);
    for (size_t i = 0; i < n; ++i) {
        T v;
        std::memcpy(&v, s + i * sizeof(T), sizeof(T));  // packed little-endian; host is little-endian
        const uint32_t b = table[v];
        std::memcpy(dst + i, &b, sizeof b);
    }
}

template <class T, class F>
void encode_loop(F enc, const float* src, void* dst, size_t n) {
    auto* d = static_cast<unsigned char*>(dst);
    for (size_t i = 0; i < n; ++i) {
        uint32_t u;
        std::memcpy(&u, src + i, sizeof u);
        const T v = enc(u);
        std::memcpy(d + i * sizeof(T), &v, sizeof(T));
    }
}

} // namespace

// ---------------------------------------------------------------------------------------------------------------

std::string_view name_of(dtype t) {
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

std::optional<dtype> parse_dtype(std::string_view s) {
    for (dtype t : all_dtypes)
        if (s == name_of(t)) return t;
    if (s == "e4m3") return dtype::fp8_e4m3;
    if (s == "e5m2") return dtype::fp8_e5m2;
    return std::nullopt;
}

uint16_t fp32_to_bf16(float f) { return enc_bf16(bits_of(f)); }
uint16_t fp32_to_fp16(float f) { return enc_fp16(bits_of(f)); }
uint32_t fp32_to_tf32(float f) { return enc_tf32(bits_of(f)); }
uint8_t fp32_to_e4m3(float f) { return enc_e4m3(bits_of(f)); }
uint8_t fp32_to_e5m2(float f) { return enc_e5m2(bits_of(f)); }
// FP4 E2M1 (OCP MX): no Inf, no NaN; finite overflow, Inf and NaN saturate to 6 (a block holding Inf or NaN gets a
// NaN scale instead, mx.h).
uint8_t fp32_to_e2m1(float f) { return static_cast<uint8_t>(enc_narrow<2, 1, 1, 0x7u, 0x7u, 0x7u, 0x7u>(bits_of(f))); }

float bf16_to_fp32(uint16_t h) { return float_of(static_cast<uint32_t>(h) << 16); }
float fp16_to_fp32(uint16_t h) { return float_of(dec_narrow<5, 10, 15, false>(h)); }
float tf32_to_fp32(uint32_t v) { return float_of(v & tf32_mask); }
float e4m3_to_fp32(uint8_t v) { return float_of(dec_narrow<4, 3, 7, true>(v)); }
float e5m2_to_fp32(uint8_t v) { return float_of(dec_narrow<5, 2, 15, false>(v)); }
float e2m1_to_fp32(uint8_t v) {
    static constexpr float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};  // S.EE.M, bias 1
    return (v & 0x8u) ? -mag[v & 0x7u] : mag[v & 0x7u];
}

float quantize(dtype t, float f) {
    switch (t) {
    case dtype::fp32: return f;
    case dtype::tf32: return tf32_to_fp32(fp32_to_tf32(f));
    case dtype::bf16: return bf16_to_fp32(fp32_to_bf16(f));
    case dtype::fp16: return fp16_to_fp32(fp32_to_fp16(f));
    case dtype::fp8_e4m3: return e4m3_to_fp32(fp32_to_e4m3(f));
    case dtype::fp8_e5m2: return e5m2_to_fp32(fp32_to_e5m2(f));
    }
    return f;
}

void decode(dtype t, const void* src, float* dst, size_t n) {
    if (n == 0) return;
    switch (t) {
    case dtype::fp32: std::memcpy(dst, src, n * sizeof(float)); return;
    case dtype::tf32: {
        const auto* s = static_cast<const unsigned char*>(src);
        for (size_t i = 0; i < n; ++i) {
            uint32_t v;
            std::memcpy(&v, s + 4 * i, sizeof v);
            v &= tf32_mask;
            std::memcpy(dst + i, &v, sizeof v);
        }
        return;
    }
    case dtype::bf16: decode_lut<uint16_t>(bf16_table(), src, dst, n); return;
    case dtype::fp16: decode_lut<uint16_t>(fp16_table(), src, dst, n); return;
    case dtype::fp8_e4m3: decode_lut<uint8_t>(e4m3_table(), src, dst, n); return;
    case dtype::fp8_e5m2: decode_lut<uint8_t>(e5m2_table(), src, dst, n); return;
    }
}

void encode(dtype t, const float* src, void* dst, size_t n) {
    if (n == 0) return;
    switch (t) {
    case dtype::fp32: std::memcpy(dst, src, n * sizeof(float)); return;
    case dtype::tf32: encode_loop<uint32_t>(enc_tf32, src, dst, n); return;
    case dtype::bf16: encode_loop<uint16_t>(enc_bf16, src, dst, n); return;
    case dtype::fp16: encode_loop<uint16_t>(enc_fp16, src, dst, n); return;
    case dtype::fp8_e4m3: encode_loop<uint8_t>(enc_e4m3, src, dst, n); return;
    case dtype::fp8_e5m2: encode_loop<uint8_t>(enc_e5m2, src, dst, n); return;
    }
}

void accumulate(dtype t, void* dst, const void* src, size_t n, std::vector<float>& ta, std::vector<float>& tb) {
    if (t == dtype::fp32) {
        float* d = static_cast<float*>(dst);
        const float* s = static_cast<const float*>(src);
        for (size_t i = 0; i < n; ++i) d[i] = d[i] + s[i];
        return;
    }
    ta.resize(n);
    tb.resize(n);
    decode(t, dst, ta.data(), n);
    decode(t, src, tb.data(), n);
    for (size_t i = 0; i < n; ++i) ta[i] = ta[i] + tb[i];
    encode(t, ta.data(), dst, n);
}

} // namespace trnsim::numerics

// Tests for models/numerics/dtype.h against an independent, slow reference written here from first principles:
//  * the reference decoder builds each value with std::ldexp from the bit fields;
//  * the reference encoder enumerates all non-negative finite values of a format (from the reference decoder),
//    finds the two neighbours of |x| and picks the nearest, ties to the even mantissa (= even code), with the
//    format's overflow rule applied on top. It uses double arithmetic only where it is exact.
// Large sweeps count mismatches and report the first few instead of asserting per element (Catch2 is slow per
// assertion), so every sweep still fails loudly on a single wrong bit.
#include "models/numerics/dtype.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace trnsim::numerics;

namespace {

uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}
std::string hex(uint32_t v) {
    char b[16];
    std::snprintf(b, sizeof b, "0x%08X", v);
    return b;
}

// ---------------------------------------------------------------------------------------------------------------
// Format descriptions, written from the format definitions (not from dtype.cpp).
enum class special_kind {
    ieee,  // exponent all ones: mantissa 0 = Inf, else NaN
    fn     // no Inf; only exponent and mantissa all ones is NaN (OCP E4M3)
};
enum class overflow_kind {
    to_inf,   // IEEE: round to nearest, magnitudes that round beyond max finite become Inf
    saturate  // finite magnitudes above max finite become max finite
};

struct ref_format {
    const char* name;
    dtype t;
    int ebits, mbits, bias;
    special_kind special;
    overflow_kind overflow;
    bool inf_saturates;   // an Inf input becomes +-max finite (E4M3) instead of +-Inf
    int container_shift;  // the code sits this many bits up in its container (TF32: 13)
    uint32_t canonical_nan;  // positive canonical quiet NaN, as a container value
};

const ref_format f_tf32{"tf32", dtype::tf32, 8, 10, 127, special_kind::ieee, overflow_kind::to_inf, false, 13,
                        0x7FC00000u};
const ref_format f_bf16{"bf16", dtype::bf16, 8, 7, 127, special_kind::ieee, overflow_kind::to_inf, false, 0,
                        0x7FC0u};
const ref_format f_fp16{"fp16", dtype::fp16, 5, 10, 15, special_kind::ieee, overflow_kind::to_inf, false, 0,
                        0x7E00u};
const ref_format f_e4m3{"fp8_e4m3", dtype::fp8_e4m3, 4, 3, 7, special_kind::fn, overflow_kind::saturate, true, 0,
                        0x7Fu};
const ref_format f_e5m2{"fp8_e5m2", dtype::fp8_e5m2, 5, 2, 15, special_kind::ieee, overflow_kind::saturate, false,
                        0, 0x7Eu};
const ref_format* const narrow_formats[] = {&f_tf32, &f_bf16, &f_fp16, &f_e4m3, &f_e5m2};

uint32_t code_count(const ref_format& f) { return 1u << (1 + f.ebits + f.mbits); }
uint32_t sign_code(const ref_format& f) { return 1u << (f.ebits + f.mbits); }

// Reference decoder: the value of a code (code space, i.e. without the TF32 container shift).
double ref_decode(const ref_format& f, uint32_t code) {
    const uint32_t emax = (1u << f.ebits) - 1u, mmask = (1u << f.mbits) - 1u;
    const bool neg = (code & sign_code(f)) != 0;
    const uint32_t e = (code >> f.mbits) & emax, m = code & mmask;
    double v;
    if (f.special == special_kind::ieee && e == emax)
        v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    else if (f.special == special_kind::fn && e == emax && m == mmask)
        v = std::numeric_limits<double>::quiet_NaN();
    else if (e == 0)
        v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.mbits);
    else
        v = std::ldexp(static_cast<double>(m + (1u << f.mbits)), static_cast<int>(e) - f.bias - f.mbits);
    return neg ? -v : v;
}

// All non-negative finite values of a format in increasing order, with their codes.
struct value_table {
    std::vector<double> vals;
    std::vector<uint32_t> codes;
    double max_finite = 0;
    uint32_t max_code = 0;
    double above_max = 0;  // the value the next code would have if the exponent range went on: max + ulp(max)
};

value_table build_table(const ref_format& f) {
    value_table t;
    for (uint32_t c = 0; c < sign_code(f); ++c) {
        const double v = ref_decode(f, c);
        if (!std::isfinite(v)) continue;
        t.vals.push_back(v);
        t.codes.push_back(c);
    }
    t.max_finite = t.vals.back();
    t.max_code = t.codes.back();
    const double ulp_max = t.vals.back() - t.vals[t.vals.size() - 2];
    t.above_max = t.max_finite + ulp_max;
    return t;
}

const value_table& table_of(const ref_format& f) {
    static const value_table tabs[] = {build_table(f_tf32), build_table(f_bf16), build_table(f_fp16),
                                       build_table(f_e4m3), build_table(f_e5m2)};
    for (size_t i = 0; i < 5; ++i)
        if (narrow_formats[i] == &f) return tabs[i];
    throw std::logic_error("unknown format");
}

// Reference encoder, returning the container value.
uint32_t ref_encode(const ref_format& f, float x) {
    const value_table& t = table_of(f);
    const uint32_t sign = std::signbit(x) ? sign_code(f) : 0u;
    const auto out = [&](uint32_t code) { return (code | sign) << f.container_shift; };
    if (std::isnan(x)) return out(f.canonical_nan >> f.container_shift);
    const uint32_t inf_code = f.special == special_kind::ieee ? ((1u << f.ebits) - 1u) << f.mbits : 0u;
    const double a = std::fabs(static_cast<double>(x));
    if (std::isinf(a)) return out(f.inf_saturates ? t.max_code : inf_code);
    if (a > t.max_finite) {
        if (f.overflow == overflow_kind::saturate) return out(t.max_code);
        // IEEE: the candidates are max finite (odd mantissa) and the "next" value above it, which is Inf.
        const double twice = 2.0 * a, mid2 = t.max_finite + t.above_max;
        if (twice < mid2) return out(t.max_code);
        if (twice > mid2) return out(inf_code);
        return out((t.max_code & 1u) == 0 ? t.max_code : inf_code);
    }
    const size_t hi = static_cast<size_t>(std::upper_bound(t.vals.begin(), t.vals.end(), a) - t.vals.begin());
    const size_t lo = hi - 1;  // vals[0] == 0 <= a
    if (t.vals[lo] == a) return out(t.codes[lo]);
    // 2a and vals[lo] + vals[hi] are exact in double: neighbours have <= 11 significant bits and adjacent binades.
    const double twice = 2.0 * a, mid2 = t.vals[lo] + t.vals[hi];
    if (twice < mid2) return out(t.codes[lo]);
    if (twice > mid2) return out(t.codes[hi]);
    return out((t.codes[lo] & 1u) == 0 ? t.codes[lo] : t.codes[hi]);
}

// ---------------------------------------------------------------------------------------------------------------
// The implementation under test, through a uniform interface (container values in uint32_t).
uint32_t fast_encode(const ref_format& f, float x) {
    switch (f.t) {
    case dtype::tf32: return fp32_to_tf32(x);
    case dtype::bf16: return fp32_to_bf16(x);
    case dtype::fp16: return fp32_to_fp16(x);
    case dtype::fp8_e4m3: return fp32_to_e4m3(x);
    case dtype::fp8_e5m2: return fp32_to_e5m2(x);
    case dtype::fp32: break;
    }
    return 0xDEADBEEFu;
}
float fast_decode(const ref_format& f, uint32_t v) {
    switch (f.t) {
    case dtype::tf32: return tf32_to_fp32(v);
    case dtype::bf16: return bf16_to_fp32(static_cast<uint16_t>(v));
    case dtype::fp16: return fp16_to_fp32(static_cast<uint16_t>(v));
    case dtype::fp8_e4m3: return e4m3_to_fp32(static_cast<uint8_t>(v));
    case dtype::fp8_e5m2: return e5m2_to_fp32(static_cast<uint8_t>(v));
    case dtype::fp32: break;
    }
    return 0.0f;
}

// Packs containers into the little-endian array layout of decode()/encode(), and back.
std::vector<unsigned char> pack(dtype t, const std::vector<uint32_t>& v) {
    const size_t sz = size_of(t);
    std::vector<unsigned char> out(v.size() * sz);
    for (size_t i = 0; i < v.size(); ++i)
        for (size_t b = 0; b < sz; ++b) out[i * sz + b] = static_cast<unsigned char>(v[i] >> (8 * b));
    return out;
}
uint32_t unpack(dtype t, const std::vector<unsigned char>& buf, size_t i) {
    const size_t sz = size_of(t);
    uint32_t v = 0;
    for (size_t b = 0; b < sz; ++b) v |= static_cast<uint32_t>(buf[i * sz + b]) << (8 * b);
    return v;
}

// Counts mismatches; keeps the first few descriptions for the failure message.
struct mismatch_log {
    size_t count = 0;
    size_t checked = 0;
    std::string first;
    void add(const std::string& what) {
        if (count++ < 8) first += "  " + what + "\n";
    }
};
#define REQUIRE_NO_MISMATCH(log)                                                                                  \
    do {                                                                                                          \
        INFO("checked " << (log).checked << ", mismatches " << (log).count << ", first:\n" << (log).first);      \
        CHECK((log).checked > 0);                                                                                 \
        CHECK((log).count == 0);                                                                                  \
    } while (0)

// Compares the fast encoder (scalar and array paths) with the reference on a set of inputs.
mismatch_log compare_encoders(const ref_format& f, const std::vector<float>& in) {
    mismatch_log log;
    std::vector<unsigned char> buf(in.size() * size_of(f.t));
    encode(f.t, in.data(), buf.data(), in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        const uint32_t want = ref_encode(f, in[i]);
        const uint32_t scalar = fast_encode(f, in[i]);
        const uint32_t array = unpack(f.t, buf, i);
        ++log.checked;
        if (scalar != want || array != want)
            log.add(std::string(f.name) + "(" + hex(bits_of(in[i])) + ") ref " + hex(want) + " scalar " +
                    hex(scalar) + " array " + hex(array));
    }
    return log;
}

void push_both_signs(std::vector<float>& v, float x) {
    v.push_back(x);
    v.push_back(-x);
}

} // namespace

// ===============================================================================================================

TEST_CASE("reference tables are sane", "[numerics][reference]") {
    // Guards the reference itself: monotone codes, expected counts and extremes.
    for (const ref_format* f : narrow_formats) {
        INFO(f->name);
        const value_table& t = table_of(*f);
        CHECK(std::is_sorted(t.vals.begin(), t.vals.end()));
        CHECK(std::adjacent_find(t.vals.begin(), t.vals.end()) == t.vals.end());
        CHECK(t.vals[0] == 0.0);
    }
    CHECK(table_of(f_e4m3).vals.size() == 127);  // 0x00..0x7E
    CHECK(table_of(f_e4m3).max_finite == 448.0);
    CHECK(table_of(f_e4m3).above_max == 480.0);
    CHECK(table_of(f_e5m2).vals.size() == 124);  // 0x00..0x7B
    CHECK(table_of(f_e5m2).max_finite == 57344.0);
    CHECK(table_of(f_e5m2).above_max == 65536.0);
    CHECK(table_of(f_fp16).max_finite == 65504.0);
    CHECK(table_of(f_fp16).above_max == 65536.0);
    CHECK(table_of(f_bf16).max_finite == std::ldexp(255.0, 120));
    CHECK(table_of(f_tf32).max_finite == std::ldexp(2047.0, 117));
    CHECK(table_of(f_tf32).vals[1] == std::ldexp(1.0, -136));
    CHECK(table_of(f_bf16).vals[1] == std::ldexp(1.0, -133));
}

TEST_CASE("names and parsing", "[numerics]") {
    for (dtype t : all_dtypes) {
        INFO(name_of(t));
        REQUIRE(parse_dtype(name_of(t)).has_value());
        CHECK(*parse_dtype(name_of(t)) == t);
    }
    CHECK(name_of(dtype::fp32) == "fp32");
    CHECK(name_of(dtype::tf32) == "tf32");
    CHECK(name_of(dtype::bf16) == "bf16");
    CHECK(name_of(dtype::fp16) == "fp16");
    CHECK(name_of(dtype::fp8_e4m3) == "fp8_e4m3");
    CHECK(name_of(dtype::fp8_e5m2) == "fp8_e5m2");
    CHECK(parse_dtype("e4m3") == dtype::fp8_e4m3);
    CHECK(parse_dtype("e5m2") == dtype::fp8_e5m2);
    CHECK_FALSE(parse_dtype("").has_value());
    CHECK_FALSE(parse_dtype("fp8").has_value());
    CHECK_FALSE(parse_dtype("bf16 ").has_value());
    CHECK_FALSE(parse_dtype("FP32").has_value());  // names are case-sensitive
    CHECK(size_of(dtype::tf32) == 4);
    CHECK(size_of(dtype::fp8_e5m2) == 1);
}

TEST_CASE("exhaustive decode against the ldexp reference", "[numerics][decode]") {
    for (const ref_format* fp : narrow_formats) {
        const ref_format& f = *fp;
        mismatch_log log;
        std::vector<uint32_t> containers;
        for (uint32_t c = 0; c < code_count(f); ++c) containers.push_back(c << f.container_shift);
        const std::vector<unsigned char> packed = pack(f.t, containers);
        std::vector<float> arr(containers.size());
        decode(f.t, packed.data(), arr.data(), arr.size());
        for (uint32_t c = 0; c < code_count(f); ++c) {
            const double want = ref_decode(f, c);
            const float scalar = fast_decode(f, containers[c]);
            ++log.checked;
            for (const float got : {scalar, arr[c]}) {
                const bool ok = std::isnan(want)
                                    ? std::isnan(got) && std::signbit(got) == std::signbit(want)
                                    : static_cast<double>(got) == want && std::signbit(got) == std::signbit(want);
                if (!ok) log.add(std::string(f.name) + " code " + hex(c) + " got " + hex(bits_of(got)));
            }
        }
        INFO(f.name);
        REQUIRE_NO_MISMATCH(log);
    }
}

TEST_CASE("decode of known patterns", "[numerics][decode]") {
    CHECK(bf16_to_fp32(0x3F80) == 1.0f);
    CHECK(bf16_to_fp32(0xC000) == -2.0f);
    CHECK(bits_of(bf16_to_fp32(0x8000)) == 0x80000000u);
    CHECK(bf16_to_fp32(0x0001) == std::ldexp(1.0f, -133));
    CHECK(fp16_to_fp32(0x3C00) == 1.0f);
    CHECK(fp16_to_fp32(0x7BFF) == 65504.0f);
    CHECK(fp16_to_fp32(0x0400) == std::ldexp(1.0f, -14));
    CHECK(fp16_to_fp32(0x0001) == std::ldexp(1.0f, -24));
    CHECK(fp16_to_fp32(0x03FF) == std::ldexp(1023.0f, -24));
    CHECK(std::isinf(fp16_to_fp32(0x7C00)));
    CHECK(fp16_to_fp32(0xFC00) == -std::numeric_limits<float>::infinity());
    CHECK(e4m3_to_fp32(0x38) == 1.0f);
    CHECK(e4m3_to_fp32(0x7E) == 448.0f);
    CHECK(e4m3_to_fp32(0xFE) == -448.0f);
    CHECK(e4m3_to_fp32(0x78) == 256.0f);  // exponent field 1111 is a normal binade in E4M3 fn
    CHECK(e4m3_to_fp32(0x7D) == 416.0f);
    CHECK(e4m3_to_fp32(0x08) == std::ldexp(1.0f, -6));
    CHECK(e4m3_to_fp32(0x01) == std::ldexp(1.0f, -9));
    CHECK(e4m3_to_fp32(0x07) == std::ldexp(7.0f, -9));
    CHECK(std::isnan(e4m3_to_fp32(0x7F)));
    CHECK(std::isnan(e4m3_to_fp32(0xFF)));
    CHECK(e5m2_to_fp32(0x3C) == 1.0f);
    CHECK(e5m2_to_fp32(0x7B) == 57344.0f);
    CHECK(e5m2_to_fp32(0x04) == std::ldexp(1.0f, -14));
    CHECK(e5m2_to_fp32(0x01) == std::ldexp(1.0f, -16));
    CHECK(e5m2_to_fp32(0x7C) == std::numeric_limits<float>::infinity());
    CHECK(e5m2_to_fp32(0xFC) == -std::numeric_limits<float>::infinity());
    for (uint8_t n : {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}) CHECK(std::isnan(e5m2_to_fp32(n)));
    CHECK(tf32_to_fp32(0x3F800000u) == 1.0f);
    CHECK(tf32_to_fp32(0x00002000u) == std::ldexp(1.0f, -136));
}

TEST_CASE("decode of NaN keeps sign and left-aligned payload, TF32 ignores container bits 12:0", "[numerics][decode]") {
    // Not value semantics (a NaN has no value) but the documented bit rule, so RTL and model agree on the bits.
    CHECK(bits_of(bf16_to_fp32(0x7FC0)) == 0x7FC00000u);
    CHECK(bits_of(bf16_to_fp32(0xFF81)) == 0xFF810000u);
    CHECK(bits_of(fp16_to_fp32(0x7E00)) == 0x7FC00000u);
    CHECK(bits_of(fp16_to_fp32(0xFC01)) == 0xFF802000u);
    CHECK(bits_of(e5m2_to_fp32(0x7E)) == 0x7FC00000u);
    CHECK(bits_of(e5m2_to_fp32(0xFD)) == 0xFFA00000u);
    CHECK(bits_of(e4m3_to_fp32(0x7F)) == 0x7FF00000u);
    CHECK(bits_of(e4m3_to_fp32(0xFF)) == 0xFFF00000u);
    CHECK(bits_of(tf32_to_fp32(0x7FC00000u)) == 0x7FC00000u);
    CHECK(bits_of(tf32_to_fp32(0x3F801FFFu)) == 0x3F800000u);
    CHECK(bits_of(tf32_to_fp32(0x80001FFFu)) == 0x80000000u);
    const uint32_t c[] = {0x3F801FFFu, 0x7F800001u};
    float out[2];
    decode(dtype::tf32, c, out, 2);
    CHECK(bits_of(out[0]) == 0x3F800000u);
    CHECK(bits_of(out[1]) == 0x7F800000u);
    // And the whole 16-bit space decodes as if shifted into the top half, NaNs included.
    size_t bad = 0;
    for (uint32_t h = 0; h < 65536; ++h) bad += bits_of(bf16_to_fp32(static_cast<uint16_t>(h))) != (h << 16);
    CHECK(bad == 0);
}

TEST_CASE("exhaustive round trip encode(decode(x)) == x", "[numerics][roundtrip]") {
    for (const ref_format* fp : narrow_formats) {
        const ref_format& f = *fp;
        mismatch_log log;
        std::vector<float> decoded;
        for (uint32_t c = 0; c < code_count(f); ++c) decoded.push_back(fast_decode(f, c << f.container_shift));
        std::vector<unsigned char> buf(decoded.size() * size_of(f.t));
        encode(f.t, decoded.data(), buf.data(), decoded.size());
        for (uint32_t c = 0; c < code_count(f); ++c) {
            const uint32_t container = c << f.container_shift;
            const bool is_nan = std::isnan(ref_decode(f, c));
            const uint32_t want =
                is_nan ? (f.canonical_nan | ((c & sign_code(f)) << f.container_shift)) : container;
            const uint32_t scalar = fast_encode(f, decoded[c]);
            const uint32_t array = unpack(f.t, buf, c);
            ++log.checked;
            if (scalar != want || array != want)
                log.add(std::string(f.name) + " " + hex(container) + " -> " + hex(scalar) + " / " + hex(array));
        }
        INFO(f.name);
        REQUIRE_NO_MISMATCH(log);
    }
}

TEST_CASE("encode: midpoints between representable values and their FP32 neighbours", "[numerics][encode]") {
    for (const ref_format* fp : narrow_formats) {
        const ref_format& f = *fp;
        const value_table& t = table_of(f);
        std::vector<float> in;
        size_t inexact = 0;
        for (size_t i = 0; i < t.vals.size(); ++i) {
            const double lo = t.vals[i], hi = i + 1 < t.vals.size() ? t.vals[i + 1] : t.above_max;
            const double mid = (lo + hi) / 2;
            const float m = static_cast<float>(mid);
            inexact += static_cast<double>(m) != mid;  // every midpoint of these formats is an FP32 value
            const float lof = static_cast<float>(lo);
            for (float x : {m, std::nextafter(m, 0.0f), std::nextafter(m, INFINITY), std::nextafter(lof, 0.0f),
                            std::nextafter(lof, INFINITY)})
                push_both_signs(in, x);
        }
        INFO(f.name);
        CHECK(inexact == 0);
        const mismatch_log log = compare_encoders(f, in);
        REQUIRE_NO_MISMATCH(log);
    }
}

TEST_CASE("encode: boundaries", "[numerics][encode]") {
    for (const ref_format* fp : narrow_formats) {
        const ref_format& f = *fp;
        const value_table& t = table_of(f);
        const float min_sub = static_cast<float>(t.vals[1]);
        const float min_normal = static_cast<float>(std::ldexp(1.0, 1 - f.bias));
        const float max = static_cast<float>(t.max_finite);
        const float ovf = static_cast<float>((t.max_finite + t.above_max) / 2);  // IEEE overflow threshold
        const float above = static_cast<float>(t.above_max);
        const float half_sub = min_sub / 2;
        std::vector<float> in;
        for (float x : {0.0f, min_sub, half_sub, min_normal, max, ovf, above, 2 * above, 1.0f}) {
            push_both_signs(in, x);
            push_both_signs(in, std::nextafter(x, 0.0f));
            push_both_signs(in, std::nextafter(x, INFINITY));
        }
        for (float x : {FLT_MAX, FLT_MIN, std::nextafter(FLT_MIN, 0.0f), std::numeric_limits<float>::denorm_min(),
                        float_of(0x00000003u), float_of(0x00400000u), float_of(0x00008000u),
                        float_of(0x00018000u), std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN(), float_of(0x7F800001u), float_of(0x7FBFFFFFu),
                        float_of(0x7F802000u), float_of(0x7FFFFFFFu)})
            push_both_signs(in, x);
        INFO(f.name);
        const mismatch_log log = compare_encoders(f, in);
        REQUIRE_NO_MISMATCH(log);

        // The same rules stated directly (independent of the reference encoder).
        const uint32_t s = f.container_shift;
        CHECK(fast_encode(f, min_sub) == (1u << s));
        CHECK(fast_encode(f, half_sub) == 0u);                                   // tie -> even (zero)
        CHECK(fast_encode(f, -half_sub) == (sign_code(f) << s));                 // signed zero
        CHECK(fast_encode(f, std::nextafter(half_sub, 1.0f)) == (1u << s));      // just above half
        CHECK(fast_encode(f, std::nextafter(half_sub, 0.0f)) == 0u);
        CHECK(fast_encode(f, max) == (t.max_code << s));
        CHECK(fast_encode(f, std::nextafter(ovf, 0.0f)) == (t.max_code << s));
        const uint32_t inf = (((1u << f.ebits) - 1u) << f.mbits) << s;
        if (f.overflow == overflow_kind::to_inf) {
            CHECK(fast_encode(f, ovf) == inf);
            CHECK(fast_encode(f, FLT_MAX) == inf);
        } else {
            CHECK(fast_encode(f, ovf) == (t.max_code << s));
            CHECK(fast_encode(f, FLT_MAX) == (t.max_code << s));
            CHECK(fast_encode(f, -FLT_MAX) == ((t.max_code | sign_code(f)) << s));
        }
        CHECK(fast_encode(f, std::numeric_limits<float>::infinity()) == (f.inf_saturates ? t.max_code << s : inf));
        CHECK(fast_encode(f, std::numeric_limits<float>::quiet_NaN()) == f.canonical_nan);
        CHECK(fast_encode(f, -std::numeric_limits<float>::quiet_NaN()) == (f.canonical_nan | (sign_code(f) << s)));
        CHECK(fast_encode(f, float_of(0x7F800001u)) == f.canonical_nan);  // signalling NaN must not become Inf
    }
}

TEST_CASE("encode: random FP32 bit patterns", "[numerics][encode]") {
    for (size_t k = 0; k < 5; ++k) {
        const ref_format& f = *narrow_formats[k];
        std::mt19937 rng(0x7E57u + static_cast<uint32_t>(k));
        std::vector<float> in;
        // 1.5M uniform bit patterns (most FP32 values are far outside the FP8/FP16 range) ...
        for (int i = 0; i < 1500000; ++i) in.push_back(float_of(static_cast<uint32_t>(rng())));
        // ... and 0.5M with the exponent inside the format's range (+-3 binades), random sign and mantissa.
        const int e_lo = std::max(0, 127 + 1 - f.bias - f.mbits - 3);
        const int e_hi = std::min(255, 127 + ((1 << f.ebits) - 1 - f.bias) + 3);
        std::uniform_int_distribution<int> exp_dist(e_lo, e_hi);
        for (int i = 0; i < 500000; ++i) {
            const uint32_t r = static_cast<uint32_t>(rng());
            in.push_back(float_of((r & 0x807FFFFFu) | (static_cast<uint32_t>(exp_dist(rng)) << 23)));
        }
        INFO(f.name);
        const mismatch_log log = compare_encoders(f, in);
        REQUIRE_NO_MISMATCH(log);
    }
}

TEST_CASE("encode of published bit patterns", "[numerics][encode]") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    // BF16
    CHECK(fp32_to_bf16(1.0f) == 0x3F80);
    CHECK(fp32_to_bf16(-2.0f) == 0xC000);
    CHECK(fp32_to_bf16(3.14159265f) == 0x4049);
    CHECK(fp32_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);      // tie -> even
    CHECK(fp32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3F82);  // tie -> even (up)
    CHECK(fp32_to_bf16(FLT_MAX) == 0x7F80);
    CHECK(fp32_to_bf16(-inf) == 0xFF80);
    CHECK(fp32_to_bf16(nan) == 0x7FC0);
    CHECK(fp32_to_bf16(-nan) == 0xFFC0);
    CHECK(fp32_to_bf16(float_of(0x00018000u)) == 0x0002);  // FP32 subnormal input, tie -> even
    CHECK(fp32_to_bf16(float_of(0x00008001u)) == 0x0001);
    CHECK(fp32_to_bf16(float_of(0x007FFFFFu)) == 0x0080);  // largest FP32 subnormal rounds up to min normal
    CHECK(fp32_to_bf16(-0.0f) == 0x8000);
    // FP16
    CHECK(fp32_to_fp16(1.0f) == 0x3C00);
    CHECK(fp32_to_fp16(-2.0f) == 0xC000);
    CHECK(fp32_to_fp16(0.1f) == 0x2E66);
    CHECK(fp32_to_fp16(1.0f / 3.0f) == 0x3555);
    CHECK(fp32_to_fp16(65504.0f) == 0x7BFF);
    CHECK(fp32_to_fp16(std::nextafter(65520.0f, 0.0f)) == 0x7BFF);
    CHECK(fp32_to_fp16(65520.0f) == 0x7C00);
    CHECK(fp32_to_fp16(-65520.0f) == 0xFC00);
    CHECK(fp32_to_fp16(std::ldexp(1.0f, -14)) == 0x0400);
    CHECK(fp32_to_fp16(std::ldexp(1.0f, -24)) == 0x0001);
    CHECK(fp32_to_fp16(std::ldexp(1.0f, -25)) == 0x0000);
    CHECK(fp32_to_fp16(std::ldexp(3.0f, -25)) == 0x0002);  // 1.5 ulp -> tie -> even
    CHECK(fp32_to_fp16(std::ldexp(1023.5f, -24)) == 0x0400);  // subnormal carries into the min normal
    CHECK(fp32_to_fp16(nan) == 0x7E00);
    CHECK(fp32_to_fp16(-nan) == 0xFE00);
    // FP8 E4M3 (OCP fn)
    CHECK(fp32_to_e4m3(1.0f) == 0x38);
    CHECK(fp32_to_e4m3(0.5f) == 0x30);
    CHECK(fp32_to_e4m3(-0.0f) == 0x80);
    CHECK(fp32_to_e4m3(240.0f) == 0x77);
    CHECK(fp32_to_e4m3(448.0f) == 0x7E);
    CHECK(fp32_to_e4m3(464.0f) == 0x7E);
    CHECK(fp32_to_e4m3(480.0f) == 0x7E);
    CHECK(fp32_to_e4m3(-1e30f) == 0xFE);
    CHECK(fp32_to_e4m3(inf) == 0x7E);
    CHECK(fp32_to_e4m3(-inf) == 0xFE);
    CHECK(fp32_to_e4m3(nan) == 0x7F);
    CHECK(fp32_to_e4m3(-nan) == 0xFF);
    CHECK(fp32_to_e4m3(std::ldexp(1.0f, -6)) == 0x08);
    CHECK(fp32_to_e4m3(std::ldexp(1.0f, -9)) == 0x01);
    CHECK(fp32_to_e4m3(std::ldexp(1.0f, -10)) == 0x00);
    CHECK(fp32_to_e4m3(std::ldexp(3.0f, -10)) == 0x02);
    CHECK(fp32_to_e4m3(std::ldexp(15.0f, -10)) == 0x08);  // 7.5 * 2^-9 -> tie -> min normal (even)
    // FP8 E5M2
    CHECK(fp32_to_e5m2(1.0f) == 0x3C);
    CHECK(fp32_to_e5m2(-2.0f) == 0xC0);
    CHECK(fp32_to_e5m2(57344.0f) == 0x7B);
    CHECK(fp32_to_e5m2(61440.0f) == 0x7B);
    CHECK(fp32_to_e5m2(1e30f) == 0x7B);
    CHECK(fp32_to_e5m2(-FLT_MAX) == 0xFB);
    CHECK(fp32_to_e5m2(inf) == 0x7C);
    CHECK(fp32_to_e5m2(-inf) == 0xFC);
    CHECK(fp32_to_e5m2(nan) == 0x7E);
    CHECK(fp32_to_e5m2(-nan) == 0xFE);
    CHECK(fp32_to_e5m2(std::ldexp(1.0f, -14)) == 0x04);
    CHECK(fp32_to_e5m2(std::ldexp(1.0f, -16)) == 0x01);
    CHECK(fp32_to_e5m2(std::ldexp(1.0f, -17)) == 0x00);
    CHECK(fp32_to_e5m2(std::ldexp(1.25f, -16)) == 0x01);
    // TF32
    CHECK(fp32_to_tf32(1.0f) == 0x3F800000u);
    CHECK(fp32_to_tf32(1.0f + std::ldexp(1.0f, -11)) == 0x3F800000u);      // tie -> even
    CHECK(fp32_to_tf32(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3F804000u);  // tie -> even (up)
    CHECK(fp32_to_tf32(1.0f + std::ldexp(1.0f, -10)) == 0x3F802000u);
    CHECK(fp32_to_tf32(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)) == 0x3F802000u);
    CHECK(fp32_to_tf32(FLT_MAX) == 0x7F800000u);
    CHECK(fp32_to_tf32(nan) == 0x7FC00000u);
    CHECK(fp32_to_tf32(-nan) == 0xFFC00000u);
    CHECK(fp32_to_tf32(std::numeric_limits<float>::denorm_min()) == 0u);
    CHECK(fp32_to_tf32(float_of(0x00001000u)) == 0u);       // tie -> even
    CHECK(fp32_to_tf32(float_of(0x00003000u)) == 0x4000u);  // tie -> even (up)
}

TEST_CASE("quantize and the array paths agree with the scalar conversions", "[numerics]") {
    std::mt19937 rng(12345);
    std::vector<float> in;
    for (int i = 0; i < 20000; ++i) in.push_back(float_of(static_cast<uint32_t>(rng())));
    for (int i = 0; i < 20000; ++i) in.push_back(std::ldexp(std::uniform_real_distribution<float>(-1, 1)(rng), i % 40 - 30));
    size_t bad = 0;
    for (float x : in) bad += bits_of(quantize(dtype::fp32, x)) != bits_of(x);
    CHECK(bad == 0);
    for (const ref_format* fp : narrow_formats) {
        const ref_format& f = *fp;
        INFO(f.name);
        std::vector<unsigned char> buf(in.size() * size_of(f.t));
        encode(f.t, in.data(), buf.data(), in.size());
        std::vector<float> back(in.size());
        decode(f.t, buf.data(), back.data(), in.size());
        bad = 0;
        for (size_t i = 0; i < in.size(); ++i) {
            const float q = quantize(f.t, in[i]);
            const float s = fast_decode(f, fast_encode(f, in[i]));
            bad += bits_of(q) != bits_of(s) || bits_of(q) != bits_of(back[i]);
        }
        CHECK(bad == 0);
    }
    // FP32 arrays are copied bit for bit (NaN payloads included); n == 0 touches nothing.
    std::vector<float> out(in.size());
    in[0] = float_of(0x7F800001u);
    encode(dtype::fp32, in.data(), out.data(), in.size());
    CHECK(std::memcmp(in.data(), out.data(), in.size() * 4) == 0);
    std::fill(out.begin(), out.end(), 0.0f);
    decode(dtype::fp32, in.data(), out.data(), in.size());
    CHECK(std::memcmp(in.data(), out.data(), in.size() * 4) == 0);
    for (dtype t : all_dtypes) {
        decode(t, nullptr, nullptr, 0);
        encode(t, nullptr, nullptr, 0);
    }
}

// Tests for models/numerics/mx.h (OCP MX v1.0) against a slow reference written here from the specification's rules:
// the reference element value set is enumerated from the bit fields with std::ldexp; the reference rounding picks
// the nearest value of X * {element values} with ties to the even code, saturating at the largest normal.
#include "models/numerics/mx.h"
#include "models/numerics/dtype.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace trnsim::numerics;
using mx::element;

namespace {

// Value of an element code from its fields (S, E exponent bits, M mantissa bits, bias B); NaN where the format has
// one (E4M3: S.1111.111; E5M2: exponent all ones), never for E2M1.
double ref_value(element e, uint8_t c) {
    const int E = e == element::e4m3 ? 4 : e == element::e5m2 ? 5 : 2;
    const int M = e == element::e4m3 ? 3 : e == element::e5m2 ? 2 : 1;
    const int B = e == element::e4m3 ? 7 : e == element::e5m2 ? 15 : 1;
    const int s = (c >> (E + M)) & 1, ef = (c >> M) & ((1 << E) - 1), mf = c & ((1 << M) - 1);
    if (e == element::e4m3 && ef == 15 && mf == 7) return std::nan("");
    if (e == element::e5m2 && ef == 31) return mf ? std::nan("") : (s ? -1 : 1) * HUGE_VAL;
    const double mag = ef ? std::ldexp(1.0 + mf / double(1 << M), ef - B) : std::ldexp(mf / double(1 << M), 1 - B);
    return s ? -mag : mag;
}

unsigned codes_of(element e) { return e == element::e2m1 ? 16 : 256; }

// The nearest finite element value of x (ties: even code), saturating at the largest normal; returns the code.
uint8_t ref_round(element e, double x) {
    const double maxn = mx::max_normal(e);
    if (x > maxn) x = maxn;
    if (x < -maxn) x = -maxn;
    int best = -1;
    double bd = 0;
    for (unsigned c = 0; c < codes_of(e); ++c) {
        const double v = ref_value(e, uint8_t(c));
        if (!std::isfinite(v) || std::signbit(v) != std::signbit(x)) continue;
        const double d = std::fabs(v - x);
        if (best < 0 || d < bd || (d == bd && (c & 1) == 0 && (best & 1) == 1)) best = int(c), bd = d;
    }
    return uint8_t(best);
}

} // namespace

TEST_CASE("MX: E8M0 scales are 2^(e - 127), 0xFF is NaN", "[numerics][mx]") {
    for (unsigned c = 0; c < 255; ++c) REQUIRE(mx::e8m0_to_fp32(uint8_t(c)) == float(std::ldexp(1.0, int(c) - 127)));
    REQUIRE(std::isnan(mx::e8m0_to_fp32(0xFF)));
}

TEST_CASE("MX: FP4 E2M1 decodes every code and encodes RNE, saturating at 6", "[numerics][mx]") {
    for (unsigned c = 0; c < 16; ++c) {
        REQUIRE(e2m1_to_fp32(uint8_t(c)) == float(ref_value(element::e2m1, uint8_t(c))));
        REQUIRE(fp32_to_e2m1(e2m1_to_fp32(uint8_t(c))) == c);  // -0 keeps its sign
    }
    // Every midpoint goes to the even code, every value next to it to the nearer neighbour.
    const float mags[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    for (int i = 0; i < 7; ++i) {
        const float mid = (mags[i] + mags[i + 1]) / 2;
        for (float sgn : {1.0f, -1.0f}) {
            const uint8_t s = sgn < 0 ? 0x8 : 0;
            REQUIRE(fp32_to_e2m1(sgn * mid) == (s | (i % 2 == 0 ? i : i + 1)));
            REQUIRE(fp32_to_e2m1(sgn * std::nextafter(mid, 0.0f)) == (s | i));
            REQUIRE(fp32_to_e2m1(sgn * std::nextafter(mid, 100.0f)) == (s | (i + 1)));
        }
    }
    for (float big : {6.0f, 7.0f, 1e30f, std::numeric_limits<float>::infinity()}) {
        REQUIRE(fp32_to_e2m1(big) == 0x7);
        REQUIRE(fp32_to_e2m1(-big) == 0xF);
    }
    // A sweep of FP32 bit patterns in [0, 16) against the reference rounding.
    size_t bad = 0;
    for (uint32_t u = 0; u < 0x41800000u; u += 997) {
        float f;
        std::memcpy(&f, &u, 4);
        bad += fp32_to_e2m1(f) != ref_round(element::e2m1, f);
    }
    REQUIRE(bad == 0);
}

TEST_CASE("MX: every block element is the nearest X * P (ties even), X from the block maximum", "[numerics][mx]") {
    std::mt19937_64 g(11);
    for (element e : {element::e4m3, element::e5m2, element::e2m1}) {
        size_t bad = 0, blocks = 0;
        for (int t = 0; t < 3000; ++t, ++blocks) {
            // Values across many binades, some blocks with a short tail, zeros and FP32 subnormals among them.
            const size_t n = t % 5 == 0 ? 1 + g() % 32 : 32;
            const int span = int(g() % 30), base = int(g() % 200) - 140;
            float v[32];
            for (size_t i = 0; i < n; ++i) {
                const double m = std::ldexp(double(g() % (1u << 24)) / double(1u << 24), base + int(g() % (span + 1)));
                v[i] = float(g() % 9 == 0 ? 0.0 : (g() & 1 ? -m : m));
            }
            uint8_t codes[32];
            const uint8_t scale = mx::encode_block(e, v, n, codes);
            float amax = 0;
            for (size_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(v[i]));
            const int want = amax > 0 ? std::max(-127, std::min(127, std::ilogb(amax) - mx::emax_of(e))) : -127;
            if (scale != uint8_t(want + 127)) { ++bad; continue; }
            float out[32];
            mx::decode_block(e, scale, codes, n, out);
            for (size_t i = 0; i < n; ++i) {
                const uint8_t rc = ref_round(e, std::ldexp(double(v[i]), -want));
                // Zero's sign is kept; the reference value of the chosen code, scaled, is what decode must give.
                if (codes[i] != rc || out[i] != float(std::ldexp(ref_value(e, rc), want))) ++bad;
            }
        }
        INFO(mx::name_of(e) << ": " << bad << " wrong of " << blocks << " blocks");
        REQUIRE(bad == 0);
    }
}

TEST_CASE("MX: NaN or Inf in a block gives the NaN scale; zero blocks; saturation at the top", "[numerics][mx]") {
    for (element e : {element::e4m3, element::e5m2, element::e2m1}) {
        float v[32] = {};
        uint8_t c[32];
        REQUIRE(mx::encode_block(e, v, 32, c) == 0);  // all zeros: 2^-127, zero codes
        for (uint8_t x : c) REQUIRE(x == 0);
        v[3] = 1.0f;
        v[7] = std::numeric_limits<float>::quiet_NaN();
        REQUIRE(mx::encode_block(e, v, 32, c) == mx::nan_scale);
        v[7] = -std::numeric_limits<float>::infinity();
        REQUIRE(mx::encode_block(e, v, 32, c) == mx::nan_scale);
        float out[32];
        mx::decode_block(e, mx::nan_scale, c, 32, out);
        for (float x : out) REQUIRE(std::isnan(x));
        // The maximum just below the next power of two rounds up past the largest normal: saturates there.
        float w[2] = {std::nextafter(2.0f, 0.0f) * std::ldexp(1.0f, mx::emax_of(e)), 1.0f};
        const uint8_t s = mx::encode_block(e, w, 2, c);
        REQUIRE(s == 127);
        mx::decode_block(e, s, c, 2, out);
        REQUIRE(out[0] == mx::max_normal(e));
    }
    // Hand-written codes whose product leaves FP32's range decode to Inf.
    const uint8_t big = 0x7E;  // E4M3 448
    float out;
    mx::decode_block(element::e4m3, 0xFE, &big, 1, &out);
    REQUIRE(std::isinf(out));
}

TEST_CASE("MX: vectors in blocks of 32 and packed E2M1 round-trip", "[numerics][mx]") {
    std::mt19937 g(5);
    std::uniform_real_distribution<float> u(-3, 3);
    std::vector<float> v(101);
    for (auto& x : v) x = u(g);
    std::vector<uint8_t> scales(4), codes(101), packed(51), back(101);
    mx::encode(element::e2m1, v.data(), v.size(), scales.data(), codes.data());
    mx::pack_e2m1(codes.data(), codes.size(), packed.data());
    mx::unpack_e2m1(packed.data(), codes.size(), back.data());
    REQUIRE(back == codes);
    std::vector<float> out(101);
    mx::decode(element::e2m1, scales.data(), codes.data(), v.size(), out.data());
    // |V_i| / X < 8: half a step of the top binade [4, 6] is X, and values in (6X, 8X) saturate to 6X (error < 2X).
    for (size_t i = 0; i < v.size(); ++i) {
        const float x = mx::e8m0_to_fp32(scales[i / 32]);
        REQUIRE(std::fabs(out[i] - v[i]) < 2.0f * x);
    }
    REQUIRE(mx::parse_element("mxfp4_e2m1") == element::e2m1);
    REQUIRE(!mx::parse_element("mxfp6"));
}

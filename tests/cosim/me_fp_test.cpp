// Bit-exact check of the RTL arithmetic (rtl/matrix_engine/me_fp.sv) against the host's IEEE-754 FP32:
// every raw value of every RTL input format decoded, and random multiplies / adds biased towards the hard cases
// (subnormals, ties, cancellation, overflow, specials). Usage: me_fp_test [--seed S] [--count N]
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "Vme_fp_tb.h"
#include "verilated.h"

#include "testbench/verification/cosim/me_golden.h"
#if ME_HAVE_NUMERICS
#include "models/numerics/dtype.h"
#endif

using namespace trnsim::cosim;

namespace {

uint32_t expect_bits(float f) { return canon_bits(f); }

uint32_t random_operand(std::mt19937_64& rng, uint32_t other) {
    auto u = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
    uint32_t s = u(0, 1) << 31;
    switch (u(0, 9)) {
    case 0: return uint32_t(rng());                                       // any encoding
    case 1: return s | u(0, 0x7FFFFF);                                    // subnormal or zero
    case 2: return s | (u(1, 3) << 23) | u(0, 0x7FFFFF);                  // just above the subnormals
    case 3: {                                                             // specials
        static const uint32_t sp[] = {0, 0x7F800000, 0x7FC00000, 0x7F800001, 1, 0x7FFFFF, 0x800000, 0x7F7FFFFF};
        return s | sp[u(0, 7)];
    }
    case 4: return (other & 0x80000000u) ^ 0x80000000u ^ (other & 0x7FFFFFFFu) ^ u(0, 3);  // near -other
    case 5: return s | (((other >> 23) & 0xFF) + u(0, 30) - 15) << 23 | u(0, 0x7FFFFF);    // close exponent
    case 6: return s | (u(0, 30) + 0) << 23 | u(0, 0x7FFFFF);             // tiny exponents (products underflow)
    case 7: return s | (u(224, 254) << 23) | u(0, 0x7FFFFF);              // huge (products overflow)
    case 8: return s | (u(100, 154) << 23) | (u(0, 1) ? 0x7FFFFF ^ u(0, 255) : u(0, 255)); // ties when rounded
    default: return s | (u(96, 158) << 23) | u(0, 0x7FFFFF);              // ordinary
    }
}

} // namespace

int main(int argc, char** argv) {
    uint64_t seed = std::random_device{}();
    uint64_t count = 2000000;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 0);
        else if (a == "--count" && i + 1 < argc) count = std::strtoull(argv[++i], nullptr, 0);
    }
    std::printf("me_fp_test: seed %llu, %llu random operations\n", (unsigned long long)seed,
                (unsigned long long)count);
    VerilatedContext ctx;
    Vme_fp_tb tb{&ctx};
    uint64_t errors = 0;
    auto report = [&](const char* what, uint32_t a, uint32_t b, uint32_t got, uint32_t want) {
        if (++errors <= 20)
            std::printf("MISMATCH %s a=%08x b=%08x got=%08x want=%08x\n", what, a, b, got, want);
    };

    // Decode: every encoding of every RTL format.
    const trnsim::numerics::dtype types[] = {ME_RTL_DTYPES};  // me_pkg::DT_COMPUTED (tests/cosim/CMakeLists.txt)
    for (dtype t : types) {
        uint32_t n = trnsim::numerics::size_of(t) == 1 ? 256 : 65536;
        for (uint32_t raw = 0; raw < n; raw++) {
            tb.dt = uint8_t(t);
            tb.raw = uint16_t(raw);
            tb.a = 0;
            tb.b = 0;
            tb.eval();
            float want = decode_elem(t, uint16_t(raw));
            // Decoded NaNs may keep a payload (BF16); the array canonicalizes its outputs.
            bool ok = std::isnan(want) ? std::isnan(u2f(tb.dec)) : tb.dec == f2u(want);
            if (!ok) report(type_name(t), raw, 0, tb.dec, f2u(want));
#if ME_HAVE_NUMERICS
            // ... and the same bits as the project's numerics (models/numerics), NaNs up to the payload
            float lib = 0.0f;
            const uint8_t b[2] = {uint8_t(raw), uint8_t(raw >> 8)};
            trnsim::numerics::decode(t, b, &lib, 1);
            bool same = std::isnan(lib) ? std::isnan(u2f(tb.dec)) : tb.dec == f2u(lib);
            if (!same) report("numerics::decode", raw, uint32_t(t), tb.dec, f2u(lib));
#endif
        }
    }

    std::mt19937_64 rng(seed);
    for (uint64_t i = 0; i < count; i++) {
        uint32_t a = random_operand(rng, 0x3F800000u);
        uint32_t b = random_operand(rng, a);
        if (rng() & 1) std::swap(a, b);
        tb.a = a;
        tb.b = b;
        tb.eval();
        volatile float fa = u2f(a), fb = u2f(b);
        float prod = fa * fb, sum = fa + fb;
        if (tb.mul != expect_bits(prod)) report("mul", a, b, tb.mul, expect_bits(prod));
        if (tb.add != expect_bits(sum)) report("add", a, b, tb.add, expect_bits(sum));
    }
    std::printf("me_fp_test: %s (%llu mismatches)\n", errors ? "FAILED" : "passed", (unsigned long long)errors);
    return errors ? 1 : 0;
}

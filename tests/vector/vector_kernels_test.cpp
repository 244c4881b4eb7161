// Vector / Scalar engine kernels without a SystemC kernel: activation approximations against the std:: functions
// (the bounds docs/vector_engine.md states), op semantics, shape checks, the cycle formula.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "models/vector_engine/ve_kernels.h"
#include "platforms/config/platform_config.h"

using namespace trnsim::ve;

namespace {
// Max relative error of f against ref over n points of [lo, hi] (plus the points given).
template <class F, class R>
double max_rel(F f, R ref, double lo, double hi, int n) {
    double worst = 0;
    for (int i = 0; i <= n; ++i) {
        const float x = float(lo + (hi - lo) * i / n);
        const double want = ref(double(x));
        if (want == 0 || std::isinf(want)) continue;
        worst = std::max(worst, std::fabs(double(f(x)) - want) / std::fabs(want));
    }
    return worst;
}
template <class F, class R>
double max_abs(F f, R ref, double lo, double hi, int n) {
    double worst = 0;
    for (int i = 0; i <= n; ++i) {
        const float x = float(lo + (hi - lo) * i / n);
        worst = std::max(worst, std::fabs(double(f(x)) - ref(double(x))));
    }
    return worst;
}
} // namespace

TEST_CASE("exp approximation is within 2e-7 relative of std::exp over the FP32 normal range", "[vector][numerics]") {
    double e = max_rel(approx_exp, [](double x) { return std::exp(x); }, -87, 88.7, 200000);
    INFO("max relative error " << e);
    CHECK(e < 2e-7);
    CHECK(std::isinf(approx_exp(89.0f)));
    CHECK(approx_exp(-104.0f) == 0.0f);
    CHECK(approx_exp(0.0f) == 1.0f);
    CHECK(std::isnan(approx_exp(std::numeric_limits<float>::quiet_NaN())));
    // Subnormal results: within one subnormal step of the exact value (plus relative rounding).
    CHECK(std::fabs(double(approx_exp(-100.0f)) - std::exp(-100.0)) < 2e-45 + 1e-6 * std::exp(-100.0));
}

TEST_CASE("reciprocal and rsqrt within 2e-7 and sqrt within 2.5e-7 relative of the std functions", "[vector][numerics]") {
    auto recip = [](double x) { return 1.0 / x; };
    double e1 = std::max(max_rel(approx_reciprocal, recip, 1e-30, 1e30, 100000), max_rel(approx_reciprocal, recip, -4, 4, 100001));
    double e2 = std::max(max_rel(approx_rsqrt, [](double x) { return 1.0 / std::sqrt(x); }, 1e-30, 1e30, 100000),
                         max_rel(approx_rsqrt, [](double x) { return 1.0 / std::sqrt(x); }, 1e-6, 10, 100000));
    double e3 = max_rel(approx_sqrt, [](double x) { return std::sqrt(x); }, 1e-6, 1e6, 100000);
    INFO("reciprocal " << e1 << " rsqrt " << e2 << " sqrt " << e3);
    CHECK(e1 < 2e-7);
    CHECK(e2 < 2e-7);
    CHECK(e3 < 2.5e-7);
    CHECK(std::isinf(approx_reciprocal(0.0f)));
    CHECK(approx_reciprocal(-std::numeric_limits<float>::infinity()) == 0.0f);
    CHECK(std::isnan(approx_rsqrt(-1.0f)));
    CHECK(std::isinf(approx_rsqrt(0.0f)));
    CHECK(approx_rsqrt(std::numeric_limits<float>::infinity()) == 0.0f);
    // Subnormal input whose reciprocal is still finite (1/1e-40 would overflow FP32's 3.4e38).
    CHECK(std::fabs(double(approx_reciprocal(5e-39f)) * double(5e-39f) - 1.0) < 1e-6);
    CHECK(std::isinf(approx_reciprocal(1e-40f)));  // 1e40 > FLT_MAX
}

TEST_CASE("sigmoid within 3e-7 absolute and silu within 5e-7 relative and gelu within 1e-6 of tanh-GELU and 5e-4 of erf-GELU", "[vector][numerics]") {
    auto sig = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    double es = max_abs(approx_sigmoid, sig, -30, 30, 100000);
    double eu = max_rel(approx_silu, [&](double x) { return x * sig(x); }, -20, 20, 100000);
    // The tanh form differs from the exact (erf) GELU by up to ~4.7e-4 (its own approximation error); against the
    // tanh form evaluated in double, the engine's evaluation error is far smaller.
    auto gelu_erf = [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); };
    auto gelu_tanh = [](double x) { return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); };
    double eg = max_abs(approx_gelu, gelu_erf, -10, 10, 100000);
    double egt = max_abs(approx_gelu, gelu_tanh, -10, 10, 100000);
    INFO("sigmoid " << es << " silu(rel) " << eu << " gelu-erf " << eg << " gelu-tanh " << egt);
    CHECK(es < 3e-7);
    CHECK(eu < 5e-7);
    CHECK(eg < 5e-4);
    CHECK(egt < 1e-6);
    CHECK(approx_gelu(0.0f) == 0.0f);
    CHECK(approx_sigmoid(-200.0f) == 0.0f);
    CHECK(approx_sigmoid(200.0f) == 1.0f);
    // the limits at infinity, not -inf * 0 = NaN
    const float inf = std::numeric_limits<float>::infinity();
    CHECK(approx_gelu(-inf) == 0.0f);
    CHECK(approx_silu(-inf) == 0.0f);
    CHECK(approx_gelu(inf) == inf);
    CHECK(approx_silu(inf) == inf);
    CHECK(approx_gelu(-1e13f) == 0.0f);
}

TEST_CASE("elementwise ops with broadcasts and reductions along both dimensions and transpose", "[vector]") {
    // a: 2 x 3
    std::vector<float> a = {1, -2, 3, 4, 5, -6}, out(6);
    vec_args v;
    v.parts = 2;
    v.free = 3;
    v.op = vop::add;
    v.b_bcast = bcast::column;
    std::vector<float> col = {10, 20};
    compute(v, a.data(), col.data(), out.data());
    CHECK(out == std::vector<float>{11, 8, 13, 24, 25, 14});
    v.op = vop::mul;
    v.b_bcast = bcast::row;
    std::vector<float> row = {1, 0.5f, -1};
    compute(v, a.data(), row.data(), out.data());
    CHECK(out == std::vector<float>{1, -1, -3, 4, 2.5f, 6});
    v.op = vop::max;
    v.b_bcast = bcast::none;
    std::vector<float> b = {0, 0, 0, 0, 0, 0};
    compute(v, a.data(), b.data(), out.data());
    CHECK(out == std::vector<float>{1, 0, 3, 4, 5, 0});
    v.op = vop::axpby;
    v.scale = 2;
    v.bias = -1;
    std::vector<float> ones(6, 1.0f);
    compute(v, a.data(), ones.data(), out.data());
    CHECK(out == std::vector<float>{1, -5, 5, 7, 9, -13});
    v.op = vop::sub;
    compute(v, a.data(), ones.data(), out.data());
    CHECK(out == std::vector<float>{0, -3, 2, 3, 4, -7});
    v.op = vop::scale_bias;
    v.scale = 0.5f;
    v.bias = 1;
    compute(v, a.data(), nullptr, out.data());
    CHECK(out == std::vector<float>{1.5f, 0, 2.5f, 3, 3.5f, -2});
    v.op = vop::act;
    v.fn = act_fn::relu;
    v.scale = 1;
    v.bias = 0;
    compute(v, a.data(), nullptr, out.data());
    CHECK(out == std::vector<float>{1, 0, 3, 4, 5, 0});

    std::vector<float> r(3);
    v.op = vop::reduce_sum_free;
    compute(v, a.data(), nullptr, r.data());
    CHECK(r[0] == 2);
    CHECK(r[1] == 3);
    v.op = vop::reduce_max_free;
    compute(v, a.data(), nullptr, r.data());
    CHECK(r[0] == 3);
    CHECK(r[1] == 5);
    v.op = vop::reduce_sum_part;
    compute(v, a.data(), nullptr, r.data());
    CHECK(r == std::vector<float>{5, 3, -3});
    v.op = vop::reduce_max_part;
    compute(v, a.data(), nullptr, r.data());
    CHECK(r == std::vector<float>{4, 5, 3});
    v.op = vop::transpose;
    compute(v, a.data(), nullptr, out.data());
    CHECK(out == std::vector<float>{1, 4, -2, 5, 3, -6});
    uint32_t op, of;
    out_shape(v, op, of);
    CHECK(op == 3);
    CHECK(of == 2);
}

TEST_CASE("causal_mask keeps the scores a query may see and sets the rest to -inf", "[vector]") {
    // 3 x 4 tile whose first row is query 5 and first column key 4 (offset 1): row p sees columns f <= p + 1.
    std::vector<float> a(12), out(12);
    for (int i = 0; i < 12; ++i) a[i] = float(i + 1);
    vec_args v;
    v.parts = 3, v.free = 4, v.op = vop::causal_mask, v.bias = 1;
    compute(v, a.data(), nullptr, out.data());
    const float NI = -std::numeric_limits<float>::infinity();
    CHECK(out == std::vector<float>{1, 2, NI, NI, 5, 6, 7, NI, 9, 10, 11, 12});
    v.bias = -2;  // a tile right of the diagonal's start: row p sees f <= p - 2
    compute(v, a.data(), nullptr, out.data());
    CHECK(out == std::vector<float>{NI, NI, NI, NI, NI, NI, NI, NI, 9, NI, NI, NI});
    ve_config vc;
    v.bias = 0.5f;
    CHECK_THAT(check(v, vc, 128), Catch::Contains("causal_mask offset (bias) 0.5"));
}

TEST_CASE("shape and engine checks name what is wrong", "[vector]") {
    ve_config vc, sc;
    sc.scalar = true;
    vec_args v;
    v.parts = 0;
    v.free = 4;
    CHECK_THAT(check(v, vc, 128), Catch::Contains("zero-sized"));
    v.parts = 129;
    CHECK_THAT(check(v, vc, 128), Catch::Contains("exceeds the memory's 128 partitions"));
    v.parts = 4;
    v.free = 200;
    v.op = vop::transpose;
    CHECK_THAT(check(v, vc, 128), Catch::Contains("transpose of free size 200"));
    v.op = vop::add;
    CHECK(check(v, vc, 128).empty());
    CHECK_THAT(check(v, sc, 128), Catch::Contains("Scalar Engine runs one-input ops") && Catch::Contains("add"));
    v.op = vop::act;
    CHECK(check(v, sc, 128).empty());
}

TEST_CASE("cycles: static overhead + latency + streaming per input at elements_per_cycle", "[vector][timing]") {
    ve_config c;
    c.elements_per_cycle = 256;
    c.lanes = 128;
    c.pipeline_latency = 16;
    c.static_overhead_cycles = 100;
    vec_args v;
    v.parts = 128;
    v.free = 1024;
    v.op = vop::copy;
    CHECK(cycles(v, c) == 100 + 16 + 512);
    v.op = vop::add;  // two input streams
    CHECK(cycles(v, c) == 100 + 16 + 1024);
    v.parts = 1;  // one partition still occupies a lane group
    CHECK(cycles(v, c) == 100 + 16 + 1024);
    v.parts = 200;  // two lane groups
    CHECK(cycles(v, c) == 100 + 16 + 2048);
    // perf mode: all-16-bit operands stream at elements_per_cycle_16bit
    c.elements_per_cycle_16bit = 512;
    v.parts = 128;
    v.op = vop::copy;
    CHECK(cycles(v, c) == 100 + 16 + 512);  // FP32 operands: no perf mode
    v.a.type = v.out.type = trnsim::numerics::dtype::bf16;
    CHECK(cycles(v, c) == 100 + 16 + 256);
    v.op = vop::add;  // b still FP32
    CHECK(cycles(v, c) == 100 + 16 + 1024);
    v.b.type = trnsim::numerics::dtype::fp16;
    CHECK(cycles(v, c) == 100 + 16 + 512);
}

TEST_CASE("presets: perf mode only where the facts give one (trn1 does not inherit trn2's 512 BF16 elem per cycle)", "[vector][timing]") {
    auto t1 = trnsim::platform::load_platform("trn1", {}).chip.core;
    CHECK(t1.vector.elements_per_cycle == 128);
    CHECK(t1.vector.elements_per_cycle_16bit == 0);
    CHECK(t1.scalar.elements_per_cycle_16bit == 0);
    auto t2 = trnsim::platform::load_platform("trn2", {}).chip.core;
    CHECK(t2.vector.elements_per_cycle == 256);
    CHECK(t2.vector.elements_per_cycle_16bit == 512);
    CHECK(t2.scalar.elements_per_cycle_16bit == 0);
    auto t3 = trnsim::platform::load_platform("trn3", {}).chip.core;
    CHECK(t3.vector.elements_per_cycle_16bit == 512);
    CHECK(t3.scalar.elements_per_cycle_16bit == 256);
    // a 128 x 512 BF16 copy on trn1 streams at 128 per cycle, as FP32 does
    vec_args v;
    v.parts = 128;
    v.free = 512;
    v.op = vop::copy;
    v.a.type = v.out.type = trnsim::numerics::dtype::bf16;
    CHECK(cycles(v, t1.vector) == 100 + 16 + 512);
}

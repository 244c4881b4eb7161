#include "models/vector_engine/ve_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace trnsim::ve {

const char* name_of(vop op) {
    switch (op) {
    case vop::add: return "add";
    case vop::sub: return "sub";
    case vop::mul: return "mul";
    case vop::max: return "max";
    case vop::axpby: return "axpby";
    case vop::scale_bias: return "scale_bias";
    case vop::copy: return "copy";
    case vop::act: return "act";
    case vop::reduce_sum_free: return "reduce_sum_free";
    case vop::reduce_max_free: return "reduce_max_free";
    case vop::reduce_sum_part: return "reduce_sum_part";
    case vop::reduce_max_part: return "reduce_max_part";
    case vop::transpose: return "transpose";
    case vop::causal_mask: return "causal_mask";
    }
    return "?";
}

const char* name_of(act_fn f) {
    switch (f) {
    case act_fn::identity: return "identity";
    case act_fn::exp: return "exp";
    case act_fn::gelu: return "gelu";
    case act_fn::silu: return "silu";
    case act_fn::sigmoid: return "sigmoid";
    case act_fn::rsqrt: return "rsqrt";
    case act_fn::reciprocal: return "reciprocal";
    case act_fn::sqrt: return "sqrt";
    case act_fn::square: return "square";
    case act_fn::relu: return "relu";
    }
    return "?";
}

namespace {

constexpr float INF = std::numeric_limits<float>::infinity();

float from_bits(uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}
uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}
// p * 2^k by exponent-field arithmetic (exact unless the result is subnormal, where it rounds once per step).
float scale2(float p, int k) {
    while (k > 127) {
        p *= from_bits(uint32_t(127 + 127) << 23);
        k -= 127;
    }
    while (k < -126) {
        p *= from_bits(uint32_t(1) << 23);  // 2^-126
        k += 126;
    }
    return p * from_bits(uint32_t(k + 127) << 23);
}
// x = m * 2^e with m in [0.5, 1) for finite nonzero x (from the exponent field; subnormals normalised first).
float split(float x, int& e) {
    uint32_t b = bits_of(x);
    int bias = 0;
    if (((b >> 23) & 0xFF) == 0) {  // subnormal: scale by 2^64
        x *= from_bits(uint32_t(127 + 64) << 23);
        b = bits_of(x);
        bias = -64;
    }
    e = int((b >> 23) & 0xFF) - 126 + bias;
    return from_bits((b & 0x807FFFFFu) | (uint32_t(126) << 23));
}

} // namespace

float approx_exp(float x) {
    if (std::isnan(x)) return x;
    if (x > 88.72283935546875f) return INF;
    if (x < -103.972084045410f) return 0.0f;
    const float kf = std::floor(x * 1.44269504088896341f + 0.5f);
    // Cody-Waite: ln2 = LN2_HI + LN2_LO, LN2_HI has few enough bits that kf * LN2_HI is exact.
    const float LN2_HI = 0.693145751953125f, LN2_LO = 1.42860682030941723212e-6f;
    const float r = (x - kf * LN2_HI) - kf * LN2_LO;
    float p = 1.0f / 5040;
    p = p * r + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    return scale2(p, int(kf));
}

float approx_reciprocal(float x) {
    if (std::isnan(x)) return x;
    if (x == 0) return std::signbit(x) ? -INF : INF;
    if (std::isinf(x)) return std::signbit(x) ? -0.0f : 0.0f;
    int e;
    float m = split(std::fabs(x), e);  // |x| = m * 2^e, m in [0.5, 1)
    float y = 48.0f / 17 - 32.0f / 17 * m;  // linear seed, relative error <= 1/17
    for (int i = 0; i < 3; ++i) y = y * (2.0f - m * y);
    y = scale2(y, -e);
    return std::signbit(x) ? -y : y;
}

float approx_rsqrt(float x) {
    if (std::isnan(x) || x < 0) return std::numeric_limits<float>::quiet_NaN();
    if (x == 0) return std::signbit(x) ? -INF : INF;
    if (std::isinf(x)) return 0.0f;
    int e;
    float m = split(x, e);
    if (e & 1) {  // make the exponent even: m in [0.5, 2)
        m *= 2;
        e -= 1;
    }
    float y = from_bits(0x5f3759dfu - (bits_of(m) >> 1));  // relative error <= 3.5e-2 on [0.5, 2)
    for (int i = 0; i < 3; ++i) y = y * (1.5f - 0.5f * m * y * y);
    return scale2(y, -e / 2);
}

float approx_sqrt(float x) {
    if (x == 0 || std::isnan(x)) return x;
    if (x < 0) return std::numeric_limits<float>::quiet_NaN();
    if (std::isinf(x)) return x;
    return x * approx_rsqrt(x);
}

float approx_sigmoid(float x) { return approx_reciprocal(1.0f + approx_exp(-x)); }

float approx_silu(float x) {
    if (std::isinf(x) && x < 0) return -0.0f;  // the limit; -inf * sigmoid(-inf) = -inf * 0 would be NaN
    return x * approx_sigmoid(x);
}

float approx_gelu(float x) {
    if (std::isnan(x)) return x;
    if (std::isinf(x) && x < 0) return -0.0f;  // the limit; 0.5 x (1 + tanh(-inf)) = -inf * 0 would be NaN
    const float y = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    // tanh(y) = 1 - 2 / (exp(2y) + 1)
    const float t = 1.0f - 2.0f * approx_reciprocal(approx_exp(2.0f * y) + 1.0f);
    return 0.5f * x * (1.0f + t);
}

float apply(act_fn f, float x) {
    switch (f) {
    case act_fn::identity: return x;
    case act_fn::exp: return approx_exp(x);
    case act_fn::gelu: return approx_gelu(x);
    case act_fn::silu: return approx_silu(x);
    case act_fn::sigmoid: return approx_sigmoid(x);
    case act_fn::rsqrt: return approx_rsqrt(x);
    case act_fn::reciprocal: return approx_reciprocal(x);
    case act_fn::sqrt: return approx_sqrt(x);
    case act_fn::square: return x * x;
    case act_fn::relu: return x > 0 ? x : (std::isnan(x) ? x : 0.0f);
    }
    return x;
}

std::string check(const vec_args& a, const ve_config& cfg, uint32_t partitions) {
    if (a.parts == 0 || a.free == 0) return "zero-sized tile (parts and free must be >= 1)";
    if (a.parts > partitions)
        return "parts = " + std::to_string(a.parts) + " exceeds the memory's " + std::to_string(partitions) + " partitions";
    if (a.op == vop::transpose && a.free > partitions)
        return "transpose of free size " + std::to_string(a.free) + " exceeds the " + std::to_string(partitions) +
               " partitions it becomes";
    if (a.op == vop::causal_mask && (a.bias != std::floor(a.bias) || std::fabs(a.bias) > 16777216.0f))
        return "causal_mask offset (bias) " + std::to_string(a.bias) + " is not a whole number of at most 2^24";
    if (uint8_t(a.op) > uint8_t(vop::causal_mask)) return "unknown vector opcode " + std::to_string(int(a.op));
    if (uint8_t(a.fn) > uint8_t(act_fn::relu)) return "unknown activation " + std::to_string(int(a.fn));
    if (cfg.scalar) {
        const bool ok = a.op == vop::scale_bias || a.op == vop::copy || a.op == vop::act || a.op == vop::reduce_sum_free;
        if (!ok)
            return std::string("the Scalar Engine runs one-input ops (scale_bias, copy, act, reduce_sum_free), not ") +
                   name_of(a.op);
    }
    return {};
}

void compute(const vec_args& a, const float* A, const float* B, float* O) {
    const uint64_t P = a.parts, F = a.free;
    auto bval = [&](uint64_t p, uint64_t f) {
        switch (a.b_bcast) {
        case bcast::column: return B[p];
        case bcast::row: return B[f];
        default: return B[p * F + f];
        }
    };
    switch (a.op) {
    case vop::add: case vop::sub: case vop::mul: case vop::max: case vop::axpby:
        for (uint64_t p = 0; p < P; ++p)
            for (uint64_t f = 0; f < F; ++f) {
                const float x = A[p * F + f], y = bval(p, f);
                float r;
                switch (a.op) {
                case vop::add: r = x + y; break;
                case vop::sub: r = x - y; break;
                case vop::mul: r = x * y; break;
                case vop::max: r = (std::isnan(x) || std::isnan(y)) ? std::numeric_limits<float>::quiet_NaN() : std::max(x, y); break;
                default: r = a.scale * x + a.bias * y; break;
                }
                O[p * F + f] = r;
            }
        return;
    case vop::scale_bias:
        for (uint64_t i = 0; i < P * F; ++i) O[i] = A[i] * a.scale + a.bias;
        return;
    case vop::copy:
        std::memcpy(O, A, P * F * 4);
        return;
    case vop::act:
        for (uint64_t i = 0; i < P * F; ++i) O[i] = apply(a.fn, A[i] * a.scale + a.bias);
        return;
    case vop::reduce_sum_free: case vop::reduce_max_free:
        for (uint64_t p = 0; p < P; ++p) {
            float s = a.op == vop::reduce_sum_free ? 0.0f : -INF;
            for (uint64_t f = 0; f < F; ++f) {
                const float x = A[p * F + f];
                if (a.op == vop::reduce_sum_free) s += x;
                else s = (std::isnan(x) || std::isnan(s)) ? std::numeric_limits<float>::quiet_NaN() : std::max(s, x);
            }
            O[p] = s;
        }
        return;
    case vop::reduce_sum_part: case vop::reduce_max_part:
        for (uint64_t f = 0; f < F; ++f) {
            float s = a.op == vop::reduce_sum_part ? 0.0f : -INF;
            for (uint64_t p = 0; p < P; ++p) {
                const float x = A[p * F + f];
                if (a.op == vop::reduce_sum_part) s += x;
                else s = (std::isnan(x) || std::isnan(s)) ? std::numeric_limits<float>::quiet_NaN() : std::max(s, x);
            }
            O[f] = s;
        }
        return;
    case vop::transpose:
        for (uint64_t p = 0; p < P; ++p)
            for (uint64_t f = 0; f < F; ++f) O[f * P + p] = A[p * F + f];
        return;
    case vop::causal_mask: {
        const int64_t d = int64_t(a.bias);
        for (uint64_t p = 0; p < P; ++p)
            for (uint64_t f = 0; f < F; ++f) O[p * F + f] = int64_t(f) <= int64_t(p) + d ? A[p * F + f] : -INF;
        return;
    }
    }
}

uint64_t cycles(const vec_args& a, const ve_config& cfg) {
    const uint64_t groups = (uint64_t(a.parts) + cfg.lanes - 1) / cfg.lanes;
    const uint64_t elems = uint64_t(inputs_of(a.op)) * a.free * groups * cfg.lanes;
    auto narrow = [](const operand& o) { return numerics::size_of(o.type) == 2; };
    const bool fast16 = cfg.elements_per_cycle_16bit > 0 && narrow(a.a) && narrow(a.out) &&
                        (inputs_of(a.op) == 1 || narrow(a.b));
    const uint64_t epc = fast16 ? cfg.elements_per_cycle_16bit : cfg.elements_per_cycle;
    const uint64_t stream = (elems + epc - 1) / epc;
    return uint64_t(cfg.static_overhead_cycles) + cfg.pipeline_latency + stream;
}

uint64_t elements(const vec_args& a) { return uint64_t(a.parts) * a.free; }

} // namespace trnsim::ve

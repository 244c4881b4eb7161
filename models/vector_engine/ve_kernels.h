// Plain-C++ arithmetic and timing of the Vector and Scalar engines (no SystemC; unit-tested on their own).
//
// All math is FP32. The transcendental functions are the engines' own approximations, built only from FP32 add,
// multiply, compare and exponent-field manipulation (no libm); docs/vector_engine.md gives each one's method and its
// error bound, tests/vector/vector_kernels_test.cpp measures it against the std:: functions.
#pragma once
#include <cstdint>
#include <string>

#include "models/vector_engine/ve_config.h"
#include "models/vector_engine/vec_args.h"

namespace trnsim::ve {

float approx_exp(float x);         // range reduction to |r| <= ln2/2, degree-7 polynomial, 2^k by exponent bits
float approx_reciprocal(float x);  // exponent-bit seed + 3 Newton-Raphson steps
float approx_rsqrt(float x);       // 0x5f3759df seed + 3 Newton-Raphson steps
float approx_sqrt(float x);        // x * rsqrt(x)
float approx_sigmoid(float x);     // 1 / (1 + exp(-x))
float approx_silu(float x);        // x * sigmoid(x)
float approx_gelu(float x);        // tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), tanh from exp
float apply(act_fn f, float x);

// Empty if an engine can run `a` (shape and operand rules), else why not. `partitions` is the number of partitions
// of the memories (a transpose's free size becomes partitions).
std::string check(const vec_args& a, const ve_config& cfg, uint32_t partitions);

// Computes one instruction on dense FP32 arrays: a is parts x free, b as b_shape(), out as out_shape() (row-major).
void compute(const vec_args& a, const float* in_a, const float* in_b, float* out);

// Engine cycles of one instruction: static overhead + pipeline latency + streaming
// ceil(inputs * free * ceil(parts / lanes) * lanes / elements_per_cycle) (elements_per_cycle_16bit when every
// operand is BF16/FP16 and the engine has a perf mode).
uint64_t cycles(const vec_args& a, const ve_config& cfg);

// Operations counted for FLOP statistics (elements of the output, times the inputs' elements for reductions).
uint64_t elements(const vec_args& a);

} // namespace trnsim::ve

// The operands of one VECTOR or SCALAR instruction, as the core's instruction stream gives them to the Vector or
// Scalar Engine. Plain C++ (instruction streams are built and checked without a SystemC kernel).
//
// A tile is `parts` partitions x `free` elements. Element (p, f) of an operand lives at core-local address
// addr + p * part_stride + f * size_of(dtype): one SBUF/PSUM partition per tile row. All arithmetic is FP32:
// operands are decoded from their dtype, the result is encoded (RNE) into the output's dtype.
#pragma once
#include <cstdint>
#include <string>

#include "models/numerics/dtype.h"

namespace trnsim::ve {

enum class vop : uint8_t {
    // elementwise, two inputs: out = a OP b (b may broadcast, see bcast)
    add, sub, mul, max,
    axpby,        // out = scale * a + bias * b
    // elementwise, one input
    scale_bias,   // out = a * scale + bias
    copy,         // out = a (a dtype cast when the dtypes differ)
    act,          // out = f(a * scale + bias), f = args.fn
    // reductions (one input), FP32 accumulation in index order
    reduce_sum_free, reduce_max_free,   // out[p][0] = sum/max over f of a[p][f]
    reduce_sum_part, reduce_max_part,   // out[0][f] = sum/max over p of a[p][f]
    transpose,    // out[f][p] = a[p][f] (free <= partitions of the memory)
    causal_mask,  // out[p][f] = a[p][f] where f <= p + bias, else -inf (an affine select: the causal mask of a tile
                  // of attention scores whose first row is query bias + first column; bias a whole number)
};

enum class act_fn : uint8_t { identity, exp, gelu, silu, sigmoid, rsqrt, reciprocal, sqrt, square, relu };

enum class bcast : uint8_t {
    none,       // b is parts x free
    column,     // b is parts x 1: b[p][0] for every f (a per-partition scalar)
    row,        // b is 1 x free: b[0][f] for every p (the same row for every partition)
};

struct operand {
    numerics::dtype type = numerics::dtype::fp32;
    uint64_t addr = 0;         // core-local
    uint64_t part_stride = 0;  // bytes between partitions (the memory's partition size for a plain tile)
};

struct vec_args {
    vop op = vop::copy;
    act_fn fn = act_fn::identity;
    bcast b_bcast = bcast::none;
    uint32_t parts = 0, free = 0;  // shape of the input a
    float scale = 1.0f, bias = 0.0f;
    operand a, b, out;
    uint64_t tag = 0;
};

// Inputs an op reads from memory (1 or 2).
inline unsigned inputs_of(vop op) {
    switch (op) {
    case vop::add: case vop::sub: case vop::mul: case vop::max: case vop::axpby: return 2;
    default: return 1;
    }
}
// Shape of the output for input shape (parts, free).
inline void out_shape(const vec_args& a, uint32_t& parts, uint32_t& free) {
    parts = a.parts;
    free = a.free;
    switch (a.op) {
    case vop::reduce_sum_free: case vop::reduce_max_free: free = 1; break;
    case vop::reduce_sum_part: case vop::reduce_max_part: parts = 1; break;
    case vop::transpose: parts = a.free; free = a.parts; break;
    default: break;
    }
}
// Shape of operand b.
inline void b_shape(const vec_args& a, uint32_t& parts, uint32_t& free) {
    parts = a.b_bcast == bcast::row ? 1 : a.parts;
    free = a.b_bcast == bcast::column ? 1 : a.free;
}

const char* name_of(vop op);
const char* name_of(act_fn f);

} // namespace trnsim::ve

// The golden GEMM: the one reference every check in the project uses (TLM runs, scoreboards, RTL co-simulation).
//
// It follows the hardware's order of operations (docs/tensor_engine.md), written independently of the model's
// kernel: C is accumulated over K in groups of `k_group` (the contraction one MATMUL covers); within a group the
// products are summed from +0.0 in k order with separate FP32 multiply and add roundings; the group sums are added
// to C in group order. So C must match the simulator bit for bit. fp64_reference gives the exact-ish value to
// quote the error of the FP32 accumulation itself.
#pragma once
#include <cstdint>
#include <vector>

namespace trnsim::tb {

// at: K x M (A transposed), b: K x N, decoded FP32 values; returns C: M x N. Uses `threads` host threads.
std::vector<float> golden_gemm(const std::vector<float>& at, const std::vector<float>& b, uint64_t m, uint64_t k,
                               uint64_t n, uint64_t k_group, unsigned threads = 2, double progress_after_s = 0);

// Double-precision dot products of the elements `idx` (row-major indices i * n + j into C), each summed in k order:
// one pass over K for all of them (the operands' rows stay in cache), the same values as one element at a time.
std::vector<double> fp64_reference(const std::vector<float>& at, const std::vector<float>& b, uint64_t m, uint64_t k,
                                   uint64_t n, const std::vector<uint64_t>& idx);

} // namespace trnsim::tb

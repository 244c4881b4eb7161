// The arithmetic of the systolic array (docs/tensor_engine.md), computed at host speed. Plain C++.
//
// Y[c][j] = sum over kk = 0..k-1, in that order, of S[kk][c] * X[kk][j], starting from +0.0, where every step is
// psum = fl32(psum + fl32(w * x)) exactly as the PE chain does it; NaN results are canonical.
// The loop nest vectorises over j (independent outputs) and keeps the kk order of every output.
#pragma once
#include <cstdint>

namespace trnsim::te {

// S: k x m (row stride m), X: k x n (row stride n), Y: m x n (row stride n). FP32 operands (already decoded).
void pe_array_compute(const float* S, const float* X, uint32_t k, uint32_t m, uint32_t n, float* Y);

} // namespace trnsim::te

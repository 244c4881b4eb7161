// The operands of one MATMUL instruction, as the core's instruction stream gives them to the Tensor Engine.
// Plain C++ (instruction streams are read and checked without a SystemC kernel).
#pragma once
#include <cstdint>

#include "models/numerics/dtype.h"

namespace trnsim::te {

// Operand and result locations (core-local addresses). Row r (0 <= r < k) of the stationary tile S lives at
// s_addr + (r % plane_rows) * s_stride + (r / plane_rows) * s_plane: one SBUF partition per row, and when k exceeds
// the partitions (FP8 double row) the further rows in a second plane of the free dimension. Likewise X.
struct matmul_args {
    numerics::dtype in_type = numerics::dtype::bf16;
    uint32_t k = 0, m = 0, n = 0;
    uint32_t plane_rows = 128;
    uint64_t s_addr = 0, s_stride = 0, s_plane = 0;  // stationary [k][m]
    uint64_t x_addr = 0, x_stride = 0, x_plane = 0;  // moving [k][n]
    uint64_t y_addr = 0, y_stride = 0;  // PSUM [m][n] FP32
    bool accumulate = false;
    uint64_t tag = 0;
};

} // namespace trnsim::te

// One MATMUL handed by the Tensor Engine to its compute back end (the C++ model or the Verilated RTL).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>

#include "models/numerics/dtype.h"

namespace trnsim::te {

struct te_job {
    uint64_t id = 0;                  // instruction / tile id (for traces and the co-sim scoreboard)
    numerics::dtype in_type = numerics::dtype::bf16;
    uint32_t k = 0, m = 0, n = 0;     // S is [k][m], X is [k][n], Y is [m][n]
    std::vector<uint8_t> stationary;  // k*m raw elements, row-major (row = k), packed little-endian
    std::vector<uint8_t> moving;      // k*n raw elements, row-major (row = k)
    std::vector<float> out;           // m*n FP32 results Y (filled by the back end; NaNs canonical)
    // Cycle stamps (Tensor Engine cycles since the back end's time zero), filled by the back end.
    uint64_t load_start = 0, stream_start = 0, done = 0;
    // Called by the back end from a SystemC process at simulated time `done`.
    std::function<void(te_job&)> on_done;
};

} // namespace trnsim::te

// The GEMM workload: C[M][N] = A[M][K] * B[K][N], operands in the input dtype, all row-major in HBM. By default A is
// stored transposed (A^T, K x M) and B as K x N: the layouts the Tensor Engine reads, the contraction on SBUF
// partitions. An operand stored the other way (A as M x K, B as B^T, N x K: a token-major activation, a weight used
// transposed) is loaded tile by tile as it is and turned on the Vector Engine (vop::transpose) before its MATMULs.
// C is FP32 (the PSUM accumulators stored as they are) or, with c_type, the input dtype: the Scalar Engine copies
// each accumulator out of PSUM with the cast (round to nearest even) into SBUF, from where it is stored.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/instruction.h"
#include "models/numerics/dtype.h"
#include "platforms/config/platform_config.h"

namespace trnsim::tb {

struct gemm_spec {
    uint64_t m = 1024, k = 1024, n = 1024;
    numerics::dtype dtype = numerics::dtype::bf16;
    uint64_t seed = 1;
    bool a_rows = false;   // A stored M x K (not A^T)
    bool b_cols = false;   // B stored N x K (B^T, not B)
    numerics::dtype c_type = numerics::dtype::fp32;  // FP32 or the input dtype
    // C += A B: every store of C is an accumulating DMA copy (dma_descriptor::reduce: dst := dst + src in c_type,
    // FP32 arithmetic rounded once), reading C's old value as it writes the new one, as a weight gradient is summed
    // over micro-batches in place.
    bool c_accumulate = false;
    uint64_t a_pitch() const { return a_rows ? k : m; }  // elements per stored row
    uint64_t b_pitch() const { return b_cols ? k : n; }
};

struct gemm_layout {
    uint64_t a_addr = 0, b_addr = 0, c_addr = 0;  // chip-global
    uint64_t a_bytes = 0, b_bytes = 0, c_bytes = 0;
    // Elements from one stored row of an operand to the next (0: dense, the stored row's length): an operand or C
    // that is a block of columns of a wider tensor (a head's columns of Q, K or V; a head's output in O).
    uint64_t a_ld = 0, b_ld = 0, c_ld = 0;
};

// Where the operands go in HBM; throws std::invalid_argument for zero dims or operands that do not fit.
gemm_layout plan_layout(const gemm_spec& g, const platform::chip_config& chip);

// How the compiler tiles the problem (for reports and tests).
struct gemm_tiling {
    uint32_t kt = 0, mt = 0, nt = 0;     // tile sizes: contraction per MATMUL, stationary columns, moving free size
    uint64_t k_tiles = 0, m_tiles = 0, n_tiles = 0;
    uint32_t block_m = 0, block_n = 0;   // output tiles accumulated together in PSUM
    uint64_t blocks = 0;
    uint64_t matmuls = 0, dmas = 0;
};
gemm_tiling plan_tiling(const gemm_spec& g, const platform::chip_config& chip);

// Compiles the GEMM into one program per core: output blocks of block_m x block_n tiles are dealt to cores; for
// each block, K is walked in tiles whose A^T and B tiles are DMA'd HBM -> SBUF into one of up to four buffers (so loads of
// later steps overlap the matmuls of step i), multiplied into PSUM accumulators, and finally DMA'd PSUM -> HBM.
// `sbuf_bytes` (0: all of it): the bytes of every SBUF partition the GEMM may use, from the partition's start (the
// rest is left to a program running beside it). `first_core`: the core that gets the first block (the others follow
// in turn), so that several small GEMMs run side by side spread over the cores.
std::vector<core::core_program> compile_gemm(const gemm_spec& g, const gemm_layout& l, const platform::chip_config& chip,
                                             uint64_t sbuf_bytes = 0, uint32_t first_core = 0);

// The chip's dense peak (all cores' Tensor Engines) for GEMMs with inputs of type t, TFLOP/s.
double chip_peak_tflops(const platform::chip_config& chip, numerics::dtype t);

} // namespace trnsim::tb

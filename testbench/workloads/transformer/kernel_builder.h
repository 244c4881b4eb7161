// A small compiler back end for one NeuronCore: allocates tiles in SBUF and PSUM, emits DMA, MATMUL, VECTOR and
// SCALAR instructions into the core's queues, and derives every semaphore wait from the data each instruction reads
// and writes (read-after-write, write-after-read and write-after-write on overlapping byte ranges of a memory).
//
// Semaphores: one counting semaphore per in-order queue (Tensor Engine, Vector, Scalar: instruction i of the queue
// brings it to i + 1) and one per DMA instruction (DMA instructions of a queue overlap and may finish out of order).
// Instructions of the Vector or Scalar queue run one after another, and Tensor Engine instructions keep their order
// through the array and PSUM, so hazards inside one of those queues need no wait.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/instruction.h"
#include "models/vector_engine/vec_args.h"
#include "platforms/config/platform_config.h"

namespace trnsim::tb {

enum class mem : uint8_t { sbuf, psum, hbm };

// A parts x free FP32 (or `type`) tile: element (p, f) at addr + p * stride + f * size_of(type). For SBUF and PSUM
// the address is core-local; for HBM it is chip-global.
struct tile {
    mem where = mem::sbuf;
    uint64_t addr = 0, stride = 0;
    uint32_t parts = 0, free = 0;
    numerics::dtype type = numerics::dtype::fp32;
    std::string name;
    // A view of partitions [p0, p0 + n) / columns [f0, f0 + n) of this tile.
    tile rows(uint32_t p0, uint32_t n) const;
    tile cols(uint32_t f0, uint32_t n) const;
};

class kernel_builder {
public:
    kernel_builder(const platform::chip_config& chip, uint32_t core);

    // Allocation. SBUF: bump allocation of `free` elements in every partition (throws std::invalid_argument naming
    // the tile when SBUF is full). PSUM: a ring of banks of n_max FP32 each; reuse is safe because the hazard
    // tracking sees the overlap with the bank's earlier users.
    tile sbuf(uint32_t parts, uint32_t free, const std::string& name, numerics::dtype t = numerics::dtype::fp32);
    tile psum(uint32_t parts, uint32_t free, const std::string& name);
    // A PSUM bank taken out of the ring until release(): for a result that many instructions build up (heads
    // writing their rows) while other PSUM tiles come and go.
    tile psum_pinned(uint32_t parts, uint32_t free, const std::string& name);
    void release(const tile& pinned);
    // A row-major rows x cols tensor in HBM at `addr` (chip-global).
    static tile hbm(uint64_t addr, uint32_t rows, uint32_t cols, const std::string& name,
                    numerics::dtype t = numerics::dtype::fp32);

    // DMA between HBM and SBUF (either direction; same shape and dtype). accumulate: dst (in HBM) := dst + src, an
    // accumulating DMA copy (dma_descriptor::reduce) that reads dst as it writes it.
    void copy(const tile& dst, const tile& src, bool accumulate = false);
    // y = s^T x (s: k x m, x: k x n, both SBUF; y: m x n PSUM FP32); accumulate adds into y.
    void matmul(const tile& y, const tile& s, const tile& x, bool accumulate);
    // One VECTOR (scalar_engine = false) or SCALAR instruction: out = op(a [, b]).
    void vec(bool scalar_engine, ve::vop op, const tile& out, const tile& a, const tile* b = nullptr,
             ve::bcast bc = ve::bcast::none, float scale = 1.0f, float bias = 0.0f, ve::act_fn fn = ve::act_fn::identity);

    // Conveniences over vec().
    void act(const tile& out, const tile& a, ve::act_fn fn, float scale = 1.0f, float bias = 0.0f) {  // Scalar Engine
        vec(true, ve::vop::act, out, a, nullptr, ve::bcast::none, scale, bias, fn);
    }
    void binary(ve::vop op, const tile& out, const tile& a, const tile& b, ve::bcast bc = ve::bcast::none,
                float scale = 1.0f, float bias = 0.0f) {
        vec(false, op, out, a, &b, bc, scale, bias);
    }
    void unary(ve::vop op, const tile& out, const tile& a, float scale = 1.0f, float bias = 0.0f) {  // Vector Engine
        vec(false, op, out, a, nullptr, ve::bcast::none, scale, bias);
    }

    core::core_program finish();
    uint64_t sbuf_used() const { return m_sbuf_next; }
    uint64_t instructions() const { return m_instructions; }

private:
    enum class queue : uint8_t { te, vector, scalar, dma };
    struct token {
        uint32_t sem;
        uint64_t value;
        queue q;
    };
    struct access {
        mem where;
        uint64_t p0, p1, b0, b1;  // partitions [p0, p1), bytes [b0, b1) within a partition (HBM: p = 0, absolute bytes)
        bool write;
        token done;
    };
    void extents(const tile& t, access& a) const;
    // Waits for every earlier access that conflicts with the reads and writes of a new instruction on queue q.
    std::vector<core::sem_wait> deps(queue q, const std::vector<access>& acc) const;
    void record(std::vector<access>& acc, const token& t);

    const platform::chip_config& m_chip;
    uint32_t m_core;
    core::core_program m_prog;
    uint64_t m_sbuf_next = 0;
    uint32_t m_psum_next = 0, m_psum_banks = 0;
    uint64_t m_psum_bank_bytes = 0;
    std::vector<bool> m_pinned;
    tile psum_tile(uint32_t parts, uint32_t free, const std::string& name, bool pin);
    uint64_t m_count[3] = {};  // te, vector, scalar instructions emitted
    uint64_t m_instructions = 0;
    std::vector<access> m_history;
    static constexpr uint32_t SEM_TE = 0, SEM_VECTOR = 1, SEM_SCALAR = 2, SEM_DMA0 = 3;
};

// Kernel sequences shared by the transformer workloads (transformer.cpp) and the training phases
// (train/phase_kernel.cpp); the caller gives every tile (so it decides the SBUF layout), these emit the math.
//
// RMS norm of a token-major x (rows x H) scaled by the gain row g: sq = x^2, ss = sum(sq), r = 1 / sqrt(ss / H +
// eps) (per row), xn = x r, h = xn g.
void emit_rmsnorm(kernel_builder& kb, const tile& h, const tile& xn, const tile& r, const tile& sq, const tile& ss,
                  const tile& x, const tile& g, float eps);
// The core of its backward from dh (given xn and r): dxn = dh g, u = dxn xn, c = sum(u) (per row),
// w = xn c, v = dxn - w / H (then dx = v r). u, w and v may be one tile.
void emit_rmsnorm_backward_core(kernel_builder& kb, const tile& v, const tile& w, const tile& u, const tile& c,
                                const tile& dxn, const tile& dh, const tile& g, const tile& xn);
// One Adam step on a tile (bias corrections c1, c2 of the step): m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
// p -= lr m / c1 / (sqrt(v / c2) + eps). g2, den and upd are scratch tiles (upd may be den).
struct adam_params {
    float beta1, beta2, lr, eps, c1, c2;
};
void emit_adam(kernel_builder& kb, const tile& p, const tile& m, const tile& v, const tile& g, const tile& g2,
               const tile& den, const tile& upd, const adam_params& a);

} // namespace trnsim::tb

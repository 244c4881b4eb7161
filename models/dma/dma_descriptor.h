// DMA descriptors (1D/2D/3D strided copies) and their split into bursts. Plain C++.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/numerics/dtype.h"

namespace trnsim::dma {

// Copies planes x rows x row_bytes: byte b of row r of plane p moves from
// src + p*src_plane_stride + r*src_stride + b  to  dst + p*dst_plane_stride + r*dst_stride + b.
struct dma_descriptor {
    uint64_t src = 0, dst = 0;
    uint64_t row_bytes = 0;
    uint32_t rows = 1, planes = 1;
    int64_t src_stride = 0, dst_stride = 0;
    int64_t src_plane_stride = 0, dst_plane_stride = 0;
    // End-to-end check: the checksum (checksum_of) the data must have. The engines verify the data they read
    // against it and the data that landed at the destination against what they read.
    std::optional<uint64_t> checksum;
    // An accumulating copy (the DMA engines' collective compute): dst := dst + src element by element in this type
    // (numerics::accumulate: FP32 arithmetic, rounded once). The engine reads both operands and writes the sum, so
    // it moves at half its copy rate. Addresses, lengths and strides are whole elements; no checksum (the
    // destination's data changes).
    std::optional<numerics::dtype> reduce;
    // A control write (a semaphore-register write that releases another engine or chip): at most CONTROL_BYTES, no
    // accumulation. An engine serves it at its next burst, ahead of the data movement queued before it (dma_engine.h).
    bool control = false;
    uint64_t total_bytes() const { return row_bytes * rows * planes; }
};

// The address of row `r` of plane `p` from `base`, in wrapping 64-bit arithmetic: a valid descriptor's addresses
// all lie in [0, 2^64), but a partial sum such as p * plane_stride can exceed the int64 range (which would be
// undefined behaviour in signed arithmetic).
inline uint64_t row_address(uint64_t base, uint64_t p, int64_t plane_stride, uint64_t r, int64_t row_stride) {
    return base + p * uint64_t(plane_stride) + r * uint64_t(row_stride);
}

// Limits of one descriptor.
constexpr uint64_t MAX_TOTAL_ROWS = 1ull << 32;  // rows x planes
constexpr uint64_t CONTROL_BYTES = 64;           // a control write's most bytes

// Empty if the descriptor is well-formed, else what is wrong with it: zero length, more than MAX_TOTAL_ROWS rows,
// an address, length or stride that is not a multiple of `align`, address arithmetic that wraps around 2^64, two
// destination rows (of any planes) overlapping, or a contiguous source overlapping a contiguous destination.
std::string validate(const dma_descriptor& d, uint64_t align = 1);

// Calls fn(src, dst, len) for each burst, in order: every row is cut at multiples of max_burst of its destination
// address, so no burst crosses a max_burst-aligned boundary at the destination.
void for_each_burst(const dma_descriptor& d, uint64_t max_burst,
                    const std::function<void(uint64_t src, uint64_t dst, uint64_t len)>& fn);
uint64_t burst_count(const dma_descriptor& d, uint64_t max_burst);

// Splits a descriptor across `engines` engines: rows are dealt round-robin (row r to engine r % engines, each engine's
// share a strided descriptor of its own); a single-row 1D copy is cut into up to `engines` contiguous pieces of
// whole `granule`s. Returns one descriptor per engine that has work (index = engine).
std::vector<std::pair<uint32_t, dma_descriptor>> split_across_engines(const dma_descriptor& d, uint32_t engines,
                                                                      uint64_t granule);

std::string to_string(const dma_descriptor& d);

} // namespace trnsim::dma

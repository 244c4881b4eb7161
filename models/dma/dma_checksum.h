// End-to-end checksum of DMA data: a position-weighted sum over every byte b at destination address a,
//     sum over bytes of (b + 1) * (2a + 1) * K   (mod 2^64, K odd),
// so any single corrupted byte changes it (the weight is odd, the change below 256), and so does data landing at
// the wrong place. Additive: the parts of a descriptor computed by different engines, burst by burst in any order,
// add up to the descriptor's checksum. Plain C++.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "models/dma/dma_descriptor.h"

namespace trnsim::dma {

// Adds `len` bytes of `data` that belong at destination addresses [dst, dst + len) to `acc`.
inline uint64_t checksum_update(uint64_t acc, uint64_t dst, const uint8_t* data, uint64_t len) {
    constexpr uint64_t K = 0x9E3779B97F4A7C15ull;
    // sum (b_i + 1)(2(dst + i) + 1) = (2 dst + 1) B0 + 2 B1 + len (2 dst + len), B0 = sum b_i, B1 = sum i b_i.
    uint64_t b0 = 0, b1 = 0;
    for (uint64_t i = 0; i < len; ++i) {
        b0 += data[i];
        b1 += i * data[i];
    }
    return acc + K * ((2 * dst + 1) * b0 + 2 * b1 + len * (2 * dst + len));
}

// The checksum of what `d` moves, reading the source through `read(src, buf, len)` (the host's view of memory).
inline uint64_t checksum_of(const dma_descriptor& d, const std::function<void(uint64_t, uint8_t*, uint64_t)>& read) {
    uint64_t acc = 0;
    std::vector<uint8_t> buf;
    for_each_burst(d, uint64_t(1) << 20, [&](uint64_t s, uint64_t t, uint64_t n) {
        buf.resize(n);
        read(s, buf.data(), n);
        acc = checksum_update(acc, t, buf.data(), n);
    });
    return acc;
}

// Running sums of one descriptor (shared by the engines that move its parts).
struct checksum_state {
    uint64_t source = 0;       // of the data as read
    uint64_t destination = 0;  // of the data found at the destination after each write
    uint64_t bytes = 0;
    bool unverifiable = false; // a destination had no debug access to read it back
};

} // namespace trnsim::dma

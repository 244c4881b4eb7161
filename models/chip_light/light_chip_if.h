// What a collective executor needs from a chip of a multi-chip platform: its DMA pushes bytes from its own memory to
// any fabric address, its reduction engine reduces two regions of its own memory, and a host backdoor loads and reads
// its memory. The light chip (light_chip.h) implements it (the full chip model, platforms/single_chip, does not).
// Every call happens at the current simulated time from one SystemC thread and returns at once with the absolute
// time (ps) at which the operation completes; nothing waits.
#pragma once
#include <cstdint>

#include "models/numerics/dtype.h"
#include "tlm/stats.h"

namespace trnsim::chip_light {

class light_chip_if {
public:
    virtual ~light_chip_if() = default;
    virtual uint32_t id() const = 0;
    // The chip-local address of the memory collective buffers live in, and its size.
    virtual uint64_t buffer_base() const = 0;
    virtual uint64_t buffer_bytes() const = 0;
    // DMA: `bytes` from local address src to fabric address dst (link::global_address of any chip, this one too).
    virtual uint64_t copy(uint64_t src_local, uint64_t dst_global, uint64_t bytes) = 0;
    // Reduction engine: dst := dst (+) src elementwise in dtype t (both local addresses).
    virtual uint64_t reduce(uint64_t dst_local, uint64_t src_local, uint64_t bytes, numerics::dtype t) = 0;
    // How long after one of this chip's steps ends a step that depends on it can start (ps): a step on this chip, or
    // (remote) on another chip.
    virtual uint64_t signal_ps(bool remote) const = 0;
    // Host backdoor (zero time). Timing-only chips ignore writes and read zeros.
    virtual void load(uint64_t local, const void* data, uint64_t bytes) = 0;
    virtual void dump(uint64_t local, void* data, uint64_t bytes) = 0;
    virtual stats::group& stats() = 0;
};

}  // namespace trnsim::chip_light

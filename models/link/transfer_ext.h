// Payload extension of a coarse transfer crossing links and network ports: when its last byte is available (the
// head is the transaction's own time, sc_time_stamp() + delay), and the hops it has taken. A transaction without
// it (a DMA burst) is treated as fully available at its time; the fabric router adds one for the trip.
#pragma once
#include <cstdint>

#include <tlm>

namespace trnsim::link {

struct transfer_ext : tlm::tlm_extension<transfer_ext> {
    uint64_t tail_ps = 0;
    uint32_t hops = 0;
    tlm::tlm_extension_base* clone() const override { return new transfer_ext(*this); }
    void copy_from(const tlm::tlm_extension_base& o) override { *this = static_cast<const transfer_ext&>(o); }
};

} // namespace trnsim::link

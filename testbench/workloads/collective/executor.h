// Runs a collective::schedule on a multi-chip platform: every copy step is a DMA transfer of its source chip to the
// destination's global address (over the links / network the fabric routers pick), every reduce step runs on its
// chip's reduction engine. A step is issued the moment its last dependency completes; independent steps run
// concurrently (they only meet in the resources they share: DMA, link directions, NIC and switch ports, reduction
// engines). One SystemC thread, no event per step: it waits only for the next completion time.
//
// Buffers: each chip's input, output and scratch live in its memory at buffer_base() + 0, + align(input),
// + align(input) + align(output) (4 KiB alignment).
#pragma once
#include <cstdint>
#include <vector>

#include <systemc>

#include "models/collective/schedule.h"
#include "platforms/cluster/cluster.h"

namespace trnsim::tb {

class collective_executor : public sc_core::sc_module {
public:
    // s must outlive the executor. Throws std::invalid_argument if the schedule does not fit the platform (chip
    // count, buffer sizes).
    collective_executor(sc_core::sc_module_name name, platform::multichip_platform& plat,
                        const collective::schedule& s);

    // The chip-local address of a region (offset included), and its buffer's base.
    uint64_t local_address(const collective::region& r) const;
    uint64_t buffer_address(uint32_t chip, collective::buffer b) const;

    bool finished() const { return m_done == m_s.steps.size(); }
    uint64_t completed() const { return m_done; }
    uint64_t issued() const { return m_issued; }
    uint64_t start_ps() const { return m_start_ps; }
    uint64_t end_ps() const { return m_end_ps; }   // the last step's completion

private:
    void run();
    uint64_t issue(uint32_t step);

    uint32_t chip_of(uint32_t step) const;  // the chip that runs it: a copy's source, a reduce's destination
    platform::multichip_platform& m_plat;
    const collective::schedule& m_s;
    uint64_t m_in_off = 0, m_out_off = 0, m_scratch_off = 0;
    std::vector<uint32_t> m_pending;                    // unfinished dependencies per step
    std::vector<uint32_t> m_dep_begin, m_dependents;    // CSR: steps waiting for step i
    uint64_t m_done = 0, m_issued = 0, m_start_ps = 0, m_end_ps = 0;
};

}  // namespace trnsim::tb

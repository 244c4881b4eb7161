// The light chip: a chip that only sources and sinks collective traffic, for platforms of thousands of chips. Same
// external interfaces as the full chip (a fabric router with link ports and a NIC port, global addresses), with
//   memory     one flat memory (the chip's HBM) at local address 0, sparse pages, fixed write latency; in
//              timing-only mode no byte is stored (reads give zeros, writes are dropped)
//   DMA        the chip's DMA engines as one reservation timeline (dma_gbps, dma_latency_ns per transfer: the fixed
//              cost of a DMA descriptor); a copy streams out of it into the fabric router (cut-through)
//   reduction  the vector engines doing collective reductions, as a timed delay: rate = min(ve_clock_ghz * lanes(dtype)
//              * reduce_engines * element size, hbm_gbps / 3 (two reads and one write per element)), FCFS; the data
//              are really added (collective::reduce_into, the reference arithmetic) in functional mode
#pragma once
#include <cmath>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/chip_light/light_chip_if.h"
#include "models/chip_light/light_chip_config.h"
#include "models/link/fabric_router.h"
#include "models/link/link_timing.h"
#include "tlm/bw_port.h"
#include "tlm/sparse_store.h"

namespace trnsim::chip_light {

// The chip's memory as a TLM target of its fabric router's local port.
class fabric_memory : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<fabric_memory> in;
    fabric_memory(sc_core::sc_module_name name, uint64_t size, double write_latency_ns, bool functional);
    tlmx::sparse_store& store() { return m_store; }
    bool functional() const { return m_functional; }
    uint64_t bytes_written() const { return m_written; }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    tlmx::sparse_store m_store;
    sc_core::sc_time m_write_latency, m_read_latency;
    bool m_functional;
    uint64_t m_written = 0;
};

class light_chip : public sc_core::sc_module, public light_chip_if {
public:
    link::fabric_router router;
    fabric_memory mem;
    tlm_utils::simple_initiator_socket<light_chip> dma_out;  // bound to router.in by the constructor

    // `chip`, `first_chip`, `shape`, `total`: as fabric_router.
    light_chip(sc_core::sc_module_name name, const light_chip_config& p, uint32_t chip, uint32_t first_chip,
               const link::torus_shape& shape, uint32_t total);

    uint32_t id() const override { return m_id; }
    uint64_t buffer_base() const override { return 0; }
    uint64_t buffer_bytes() const override { return m_p.hbm_bytes; }
    uint64_t copy(uint64_t src_local, uint64_t dst_global, uint64_t bytes) override;
    uint64_t reduce(uint64_t dst_local, uint64_t src_local, uint64_t bytes, numerics::dtype t) override;
    uint64_t signal_ps(bool remote) const override {
        return uint64_t(std::llround((remote ? m_p.remote_signal_ns : m_p.signal_ns) * 1000.0));
    }
    void load(uint64_t local, const void* data, uint64_t bytes) override;
    void dump(uint64_t local, void* data, uint64_t bytes) override;
    stats::group& stats() override { return m_stats; }
    const link::direction_timeline& dma_timeline() const { return m_dma; }
    const tlmx::bw_port& reduce_port() const { return m_reduce; }

private:
    light_chip_config m_p;
    uint32_t m_id;
    link::direction_timeline m_dma;
    tlmx::bw_port m_reduce;
    uint64_t m_reduce_lat_ps;
    tlm::tlm_generic_payload m_gp;
    stats::group m_stats;
    stats::counter m_copies{"copies", "count", "DMA transfers"};
    stats::counter m_copy_bytes{"copy_bytes", "B", "bytes sent by DMA"};
    stats::counter m_reduces{"reduces", "count", "reduce steps"};
    stats::counter m_reduce_bytes{"reduce_bytes", "B", "bytes reduced"};
    stats::formula m_reduce_busy{"reduce_busy_ns", "ns", "reduction engine busy time",
                                 [this] { return double(m_reduce.busy_ps()) / 1000.0; }};
    stats::formula m_dma_busy{"dma_busy_ns", "ns", "DMA busy time", [this] { return double(m_dma.busy_ps()) / 1000.0; }};
};

}  // namespace trnsim::chip_light

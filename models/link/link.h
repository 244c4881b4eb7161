// One NeuronLink-style chip-to-chip link: two independent directions (a2b, b2a), each a reservation timeline with
// the bandwidth, latency, packetisation and credit flow control of link_timing.h. A transaction entering a direction
// is forwarded to the far end's fabric router with its head delay and tail time (transfer_ext) advanced; the link
// never waits, so it may be called from methods and threads alike.
#pragma once
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/link/link_timing.h"
#include "tlm/observer.h"
#include "tlm/stats.h"

namespace trnsim::link {

// One transfer as an observer sees it: the interval it held the direction, its bytes and global address.
struct link_event {
    uint64_t begin_ps, end_ps, bytes, address;
    bool write;
};

class link_direction : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<link_direction> in;
    tlm_utils::simple_initiator_socket<link_direction> out;

    link_direction(sc_core::sc_module_name name, const link_config& p);
    const direction_timeline& timeline() const { return m_tl; }
    stats::group& stats() { return m_stats; }
    void observe(tlmx::observer_list<link_event>::callback cb) { m_observers.add(std::move(cb)); }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);

    direction_timeline m_tl;
    tlmx::observer_list<link_event> m_observers;
    stats::group m_stats;
    stats::formula m_bytes{"bytes", "B", "payload bytes carried", [this] { return double(m_tl.bytes()); }};
    stats::formula m_wire{"wire_bytes", "B", "bytes on the wire (payload + packet overhead)",
                          [this] { return double(m_tl.wire_bytes()); }};
    stats::formula m_transfers{"transfers", "count", "transfers", [this] { return double(m_tl.transfers()); }};
    stats::formula m_busy{"busy_ns", "ns", "occupancy", [this] { return double(m_tl.busy_ps()) / 1000.0; }};
    stats::formula m_wait{"wait_ns", "ns", "time transfers queued for this direction",
                          [this] { return double(m_tl.wait_ps()) / 1000.0; }};
};

class link : public sc_core::sc_module {
public:
    link_direction a2b, b2a;
    link(sc_core::sc_module_name name, const link_config& p) : link(name, p, p) {}
    // Directions with their own parameters (a degraded direction, docs/RELIABILITY.md "Link faults").
    link(sc_core::sc_module_name name, const link_config& a2b_p, const link_config& b2a_p);
    stats::group& stats() { return m_stats; }

private:
    stats::group m_stats;
};

} // namespace trnsim::link

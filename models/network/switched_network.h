// The switched network between the servers of a cluster: one EFA-style NIC port per chip and a leaf-spine switch
// fabric with oversubscription, as coarse transfers over reservation timelines (the same mechanism as the
// chip-to-chip links, models/link/link_timing.h). Nothing is simulated per packet.
//
// A transfer from chip s to chip d (in different servers) crosses, in order:
//   tx[s]        s's NIC sending port: nic.gbps per direction, nic.latency_ns (NIC + cable), MTU-sized packets with
//                nic.overhead_bytes of headers each, credits (the NIC's send window)
//   same leaf:   the leaf switch (switch_latency_ns)
//   other leaf:  up[leaf(s)]   leaf(s)'s uplinks to the spines, one timeline of the aggregate uplink bandwidth
//                              (downlink bandwidth / oversubscription), switch_latency_ns (leaf)
//                down[leaf(d)] the spines' downlinks into leaf(d), same bandwidth, 2 * switch_latency_ns (spine, leaf)
//   rx[d]        d's NIC receiving port (nic.gbps, nic.latency_ns: the receiving NIC's pipeline and DMA to memory)
// and is then handed to chip d's fabric router, which delivers it locally. Each timeline is FCFS in the order
// transfers reach it (queueing: wait_ps); cut-through between them (link_timing.h). Uplinks are modelled as one
// pool per leaf (ideal ECMP spreading over the spines), which is what oversubscription limits.
// Leaves: servers_per_leaf servers share one leaf (its downlinks are the NIC ports of their chips).
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "models/link/link_timing.h"
#include "models/network/network_config.h"
#include "tlm/stats.h"

namespace trnsim::network {

class switched_network : public sc_core::sc_module {
public:
    // in: bind chip i's fabric router NIC output as the i-th binding; out: bind the i-th binding to chip i's router.
    tlm_utils::multi_passthrough_target_socket<switched_network> in;
    tlm_utils::multi_passthrough_initiator_socket<switched_network> out;

    switched_network(sc_core::sc_module_name name, const network_config& p, uint32_t servers,
                     uint32_t chips_per_server);
    uint32_t leaves() const { return m_leaves; }
    uint32_t leaf_of_chip(uint32_t chip) const { return chip / m_cps / m_p.servers_per_leaf; }
    // The timelines, for utilisation reports.
    const std::deque<link::direction_timeline>& tx() const { return m_tx; }
    const std::deque<link::direction_timeline>& rx() const { return m_rx; }
    const std::deque<link::direction_timeline>& up() const { return m_up; }
    const std::deque<link::direction_timeline>& down() const { return m_down; }
    stats::group& stats() { return m_stats; }

private:
    void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(int id, tlm::tlm_generic_payload& gp);

    network_config m_p;
    uint32_t m_servers, m_cps, m_leaves;
    uint64_t m_switch_ps;
    std::deque<link::direction_timeline> m_tx, m_rx, m_up, m_down;
    stats::group m_stats;
    stats::counter m_transfers{"transfers", "count", "transfers between servers"};
    stats::counter m_bytes{"bytes", "B", "payload bytes between servers"};
    stats::counter m_spine{"spine_transfers", "count", "transfers that crossed the spine"};
    stats::formula m_wait{"queue_wait_ns", "ns", "total time transfers queued at NIC and switch ports",
                          [this] { return wait_ns(); }};
    double wait_ns() const;
};

} // namespace trnsim::network

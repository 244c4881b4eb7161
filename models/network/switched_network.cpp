#include "models/network/switched_network.h"

#include <cmath>

#include "models/link/global_address.h"
#include "models/link/transfer_ext.h"

namespace trnsim::network {


switched_network::switched_network(sc_core::sc_module_name name, const network_config& p, uint32_t servers,
                                   uint32_t chips_per_server)
    : sc_module(name), in("in"), out("out"), m_p(p), m_servers(servers), m_cps(chips_per_server),
      m_leaves((servers + p.servers_per_leaf - 1) / p.servers_per_leaf),
      m_switch_ps(uint64_t(std::llround(p.switch_latency_ns * 1000.0))), m_stats(basename()) {
    in.register_b_transport(this, &switched_network::b_transport);
    in.register_transport_dbg(this, &switched_network::transport_dbg);
    uint32_t chips = servers * chips_per_server;
    for (uint32_t i = 0; i < chips; ++i) {
        m_tx.emplace_back(p.nic);
        m_rx.emplace_back(p.nic);
    }
    // A leaf's uplink pool: the bandwidth of its downlinks (the NIC ports below it) over the oversubscription;
    // latency: one switch traversal (the leaf) up, two (spine and the far leaf) down. Same packetisation as the NIC.
    link::link_config up = p.nic;
    up.gbps = p.nic.gbps * double(p.servers_per_leaf) * double(chips_per_server) / p.oversubscription;
    up.credits = p.nic.credits * p.servers_per_leaf * chips_per_server;
    up.latency_ns = p.switch_latency_ns;
    link::link_config down = up;
    down.latency_ns = 2 * p.switch_latency_ns;
    for (uint32_t l = 0; l < m_leaves; ++l) {
        m_up.emplace_back(up);
        m_down.emplace_back(down);
        m_up.back().set_shared(true);
        m_down.back().set_shared(true);
    }
    for (auto* s : std::initializer_list<stats::stat*>{&m_transfers, &m_bytes, &m_spine, &m_wait}) m_stats.add(*s);
}

double switched_network::wait_ns() const {
    uint64_t w = 0;
    for (auto* d : {&m_tx, &m_rx, &m_up, &m_down})
        for (const auto& t : *d) w += t.wait_ps();
    return double(w) / 1000.0;
}

void switched_network::b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    auto* ext = gp.get_extension<link::transfer_ext>();
    uint32_t src = uint32_t(id), dst = link::chip_of(gp.get_address() & ~link::GLOBAL_BIT);
    if (!ext || dst >= m_tx.size() || src >= m_tx.size() || dst / m_cps == src / m_cps) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    uint64_t now = sc_core::sc_time_stamp().value();
    uint64_t bytes = gp.get_data_length();
    link::flight f{now + delay.value(), std::max<uint64_t>(ext->tail_ps, now + delay.value())};
    uint32_t ls = leaf_of_chip(src), ld = leaf_of_chip(dst);
    for (auto* t : {&m_tx[src], &m_up[ls], &m_down[ld], &m_rx[dst]}) t->forget_before(now);
    f = m_tx[src].reserve(f, bytes);
    if (ls == ld) {
        f.head_ps += m_switch_ps;
        f.tail_ps += m_switch_ps;
        ext->hops += 1;
    } else {
        f = m_up[ls].reserve(f, bytes);
        f = m_down[ld].reserve(f, bytes);
        ext->hops += 3;
        ++m_spine;
    }
    f = m_rx[dst].reserve(f, bytes);
    ++m_transfers;
    m_bytes += double(bytes);
    delay = sc_core::sc_time::from_value(f.head_ps - now);
    ext->tail_ps = f.tail_ps;
    out[dst]->b_transport(gp, delay);
}

unsigned switched_network::transport_dbg(int, tlm::tlm_generic_payload& gp) {
    uint32_t dst = link::chip_of(gp.get_address() & ~link::GLOBAL_BIT);
    if (dst >= m_tx.size()) return 0;
    return out[dst]->transport_dbg(gp);
}

} // namespace trnsim::network

#include "models/link/fabric_router.h"

#include "models/link/global_address.h"
#include "models/link/transfer_ext.h"

namespace trnsim::link {

using sc_core::sc_time;

fabric_router::fabric_router(sc_core::sc_module_name name, uint32_t chip, uint32_t first_chip, const torus_shape& shape,
                             uint32_t total_chips)
    : sc_module(name), in("in"), out("out"), m_chip(chip), m_first(first_chip), m_total(total_chips), m_shape(shape),
      m_stats(basename()) {
    m_port.fill(-1);
    in.register_b_transport(this, &fabric_router::b_transport);
    in.register_transport_dbg(this, &fabric_router::transport_dbg);
    m_stats.add(m_local_tx);
    m_stats.add(m_forwarded);
    m_stats.add(m_errors);
}

void fabric_router::bind_local(target_socket& t) {
    sc_assert(m_local < 0);
    out.bind(t);
    m_local = m_bound++;
}

void fabric_router::bind_port(int port, target_socket& t) {
    sc_assert(port >= 0 && port < PORTS && m_port[size_t(port)] < 0);
    out.bind(t);
    m_port[size_t(port)] = m_bound++;
}

void fabric_router::bind_nic(target_socket& t) {
    sc_assert(m_port[NIC] < 0);
    out.bind(t);
    m_port[NIC] = m_bound++;
}

int fabric_router::decide(uint64_t a) const {
    uint32_t dst = chip_of(a);
    if (dst == m_chip) return LOCAL;
    if (dst >= m_total) return BLOCKED;
    uint32_t per = m_shape.chips();
    if (dst < m_first || dst >= m_first + per) return NIC;
    return m_shape.next_port(m_chip - m_first, dst - m_first);
}

void fabric_router::b_transport(int, tlm::tlm_generic_payload& gp, sc_time& delay) {
    uint64_t a = gp.get_address() & ~GLOBAL_BIT;
    int where = decide(a);
    int idx = where == BLOCKED ? -1 : out_index(where);
    if (idx < 0) {
        ++m_errors;
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    // Our own extension for a transfer that came without one (removed again before returning).
    transfer_ext* ext = gp.get_extension<transfer_ext>();
    transfer_ext own;
    uint64_t now = sc_core::sc_time_stamp().value();
    if (!ext) {
        own.tail_ps = now + delay.value();
        gp.set_extension(&own);
        ext = &own;
    }
    if (where == LOCAL) {
        ++m_local_tx;
        // The chip sees its local address once the last byte has arrived.
        if (ext->tail_ps > now + delay.value()) delay = sc_time::from_value(ext->tail_ps - now);
        gp.set_address(local_of(a));
        out[size_t(idx)]->b_transport(gp, delay);
        gp.set_address(a | GLOBAL_BIT);
    } else {
        ++m_forwarded;
        out[size_t(idx)]->b_transport(gp, delay);
    }
    if (ext == &own) gp.clear_extension(&own);
}

unsigned fabric_router::transport_dbg(int, tlm::tlm_generic_payload& gp) {
    uint64_t a = gp.get_address() & ~GLOBAL_BIT;
    int where = decide(a);
    int idx = where == BLOCKED ? -1 : out_index(where);
    if (idx < 0) return 0;
    if (where != LOCAL) return out[size_t(idx)]->transport_dbg(gp);
    gp.set_address(local_of(a));
    unsigned n = out[size_t(idx)]->transport_dbg(gp);
    gp.set_address(a | GLOBAL_BIT);
    return n;
}

} // namespace trnsim::link

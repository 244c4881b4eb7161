#include "models/link/link.h"

#include "models/link/transfer_ext.h"

namespace trnsim::link {

using sc_core::sc_time;

link_direction::link_direction(sc_core::sc_module_name name, const link_config& p)
    : sc_module(name), in("in"), out("out"), m_tl(p), m_stats(basename()) {
    in.register_b_transport(this, &link_direction::b_transport);
    in.register_transport_dbg(this, &link_direction::transport_dbg);
    for (stats::stat* s : std::initializer_list<stats::stat*>{&m_bytes, &m_wire, &m_transfers, &m_busy, &m_wait})
        m_stats.add(*s);
}

void link_direction::b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    auto* ext = gp.get_extension<transfer_ext>();
    sc_assert(ext && "a fabric router attaches transfer_ext before a link");
    uint64_t now = sc_core::sc_time_stamp().value();  // ps (the kernel's resolution is 1 ps)
    flight in{now + delay.value(), std::max<uint64_t>(ext->tail_ps, now + delay.value())};
    flight held;
    m_tl.forget_before(now);
    flight o = m_tl.reserve(in, gp.get_data_length(), &held);
    if (!m_observers.empty())
        m_observers.notify({held.head_ps, held.tail_ps, gp.get_data_length(), gp.get_address(), gp.is_write()});
    delay = sc_time::from_value(o.head_ps - now);
    ext->tail_ps = o.tail_ps;
    ++ext->hops;
    out->b_transport(gp, delay);
}

unsigned link_direction::transport_dbg(tlm::tlm_generic_payload& gp) { return out->transport_dbg(gp); }

link::link(sc_core::sc_module_name name, const link_config& a2b_p, const link_config& b2a_p)
    : sc_module(name), a2b("a2b", a2b_p), b2a("b2a", b2a_p), m_stats(basename()) {
    m_stats.add(a2b.stats());
    m_stats.add(b2a.stats());
}

} // namespace trnsim::link

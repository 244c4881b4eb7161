#include "tlm/router.h"

#include "tlm/ext_error.h"
#include "tlm/ext_strided.h"
#include "tlm/time.h"
#include "tlm/transport.h"

namespace trnsim::tlmx {

router::router(sc_core::sc_module_name name, sc_core::sc_time hop_latency)
    : sc_module(name), in("in"), out("out"), m_hop(hop_latency), m_stats(basename()) {
    in.register_b_transport(this, &router::b_transport);
    in.register_transport_dbg(this, &router::transport_dbg);
    in.register_get_direct_mem_ptr(this, &router::get_direct_mem_ptr);
    out.register_invalidate_direct_mem_ptr(this, &router::invalidate_direct_mem_ptr);
    m_stats.add(m_transactions);
    m_stats.add(m_bytes);
    m_stats.add(m_errors);
}

void router::map(uint64_t base, uint64_t size, size_t port, const std::string& target_name) {
    m_map.add(base, size, port, target_name);
}

void router::limit_port(size_t port, double bytes_per_ns) {
    if (m_port_bw.size() <= port) m_port_bw.resize(port + 1);
    m_port_bw[port] = std::make_unique<gap_port>(bytes_per_ns);
}

const address_range* router::decode(tlm::tlm_generic_payload& gp) {
    uint64_t extent = gp.get_data_length();
    if (auto* st = gp.get_extension<ext_strided>()) extent = st->extent(extent);
    const address_range* r = m_map.decode(gp.get_address(), extent);
    if (!r || r->port >= size_t(out.size())) {
        m_last_error = std::string(name()) + ": no target for " + describe(gp);
        ++m_errors;
        set_error(gp, tlm::TLM_ADDRESS_ERROR_RESPONSE, m_last_error);
        return nullptr;
    }
    return r;
}

void router::b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    sc_core::sc_time begin = sc_core::sc_time_stamp() + delay;
    const address_range* r = decode(gp);
    if (r) {
        ++m_transactions;
        m_bytes += gp.get_data_length();
        delay += m_hop;
        if (r->port < m_port_bw.size() && m_port_bw[r->port]) {
            uint64_t now = to_ps(sc_core::sc_time_stamp() + delay);
            m_port_bw[r->port]->forget_before(to_ps(sc_core::sc_time_stamp()));
            uint64_t done = m_port_bw[r->port]->reserve(now, gp.get_data_length());
            delay += from_ps(done - now);
        }
        gp.set_address(gp.get_address() - r->base);
        out[int(r->port)]->b_transport(gp, delay);
        gp.set_address(gp.get_address() + r->base);
    }
    if (!m_observers.empty()) {
        tx_event ev{name(), r, &gp, begin, sc_core::sc_time_stamp() + delay};
        for (auto& o : m_observers) o(ev);
    }
}

unsigned router::transport_dbg(int, tlm::tlm_generic_payload& gp) {
    const address_range* r = decode(gp);
    if (!r) return 0;
    gp.set_address(gp.get_address() - r->base);
    unsigned n = out[int(r->port)]->transport_dbg(gp);
    gp.set_address(gp.get_address() + r->base);
    return n;
}

bool router::get_direct_mem_ptr(int, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
    const address_range* r = m_map.decode(gp.get_address(), 1);
    if (!r || r->port >= size_t(out.size())) return false;
    gp.set_address(gp.get_address() - r->base);
    bool ok = out[int(r->port)]->get_direct_mem_ptr(gp, dmi);
    gp.set_address(gp.get_address() + r->base);
    // Translate the granted window back to this router's address space, clipped to the range.
    uint64_t start = dmi.get_start_address() + r->base;
    uint64_t end = std::min<uint64_t>(dmi.get_end_address(), r->size - 1) + r->base;
    dmi.set_start_address(start);
    dmi.set_end_address(end);
    return ok;
}

void router::invalidate_direct_mem_ptr(int port, sc_dt::uint64 start, sc_dt::uint64 end) {
    for (const auto& r : m_map.ranges()) {
        if (r.port != size_t(port)) continue;
        uint64_t s = r.base + start, e = r.base + std::min<uint64_t>(end, r.size - 1);
        for (int i = 0; i < int(in.size()); ++i) in[i]->invalidate_direct_mem_ptr(s, e);
    }
}

} // namespace trnsim::tlmx

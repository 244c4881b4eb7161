#include "tlm/memory.h"

#include "tlm/time.h"
#include "tlm/transport.h"

namespace trnsim::tlmx {

memory::memory(sc_core::sc_module_name name, const memory_config& cfg)
    : sc_module(name), in("in"), m_cfg(cfg), m_store(cfg.size), m_port(cfg.bytes_per_ns, 0), m_stats(basename()) {
    in.register_b_transport(this, &memory::b_transport);
    in.register_transport_dbg(this, &memory::transport_dbg);
    in.register_get_direct_mem_ptr(this, &memory::get_direct_mem_ptr);
    for (auto* s : {&m_reads, &m_writes, &m_bytes_read, &m_bytes_written}) m_stats.add(*s);
}

void memory::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (!check_payload(gp, m_store.size())) return;
    uint64_t n = gp.get_data_length();
    if (gp.is_read()) {
        m_store.read(gp.get_address(), gp.get_data_ptr(), n);
        ++m_reads;
        m_bytes_read += double(n);
        delay += m_cfg.read_latency;
    } else {
        m_store.write(gp.get_address(), gp.get_data_ptr(), n);
        ++m_writes;
        m_bytes_written += double(n);
        delay += m_cfg.write_latency;
    }
    if (m_cfg.bytes_per_ns > 0) {
        uint64_t now = to_ps(sc_core::sc_time_stamp() + delay);
        delay += from_ps(m_port.reserve(now, n) - now);
    }
    gp.set_dmi_allowed(m_cfg.dmi);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned memory::transport_dbg(tlm::tlm_generic_payload& gp) { return serve_debug(m_store, gp); }

bool memory::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
    uint64_t a = gp.get_address();
    if (!m_cfg.dmi || a >= m_store.size()) return false;
    uint64_t left = 0;
    uint8_t* p = m_store.page_ptr(a, left);
    uint64_t page_base = a - (sparse_store::PAGE_SIZE - left);
    dmi.set_dmi_ptr(p - (a - page_base));
    dmi.set_start_address(page_base);
    dmi.set_end_address(std::min(page_base + sparse_store::PAGE_SIZE, m_store.size()) - 1);
    dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_READ_WRITE);
    dmi.set_read_latency(m_cfg.read_latency);
    dmi.set_write_latency(m_cfg.write_latency);
    return true;
}

} // namespace trnsim::tlmx

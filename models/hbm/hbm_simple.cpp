#include "models/hbm/hbm_simple.h"

#include "tlm/time.h"
#include "tlm/transport.h"

namespace trnsim::hbm {

hbm_simple::hbm_simple(sc_core::sc_module_name name, const hbm_config& cfg)
    : sc_module(name), in("in"), m_cfg(cfg), m_store(cfg.capacity_bytes), m_stats(basename()) {
    m_channels.resize(cfg.channels(), tlmx::bw_port(cfg.bandwidth_gbps / cfg.channels(), 0));
    in.register_b_transport(this, &hbm_simple::b_transport);
    in.register_transport_dbg(this, &hbm_simple::transport_dbg);
    m_stats.add(m_bytes_read);
    m_stats.add(m_bytes_written);
    m_stats.add(m_requests);
    m_stats.add(m_busy);
    m_stats.add(m_latency);
}

void hbm_simple::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (!tlmx::check_payload(gp, m_store.size())) return;
    uint64_t a = gp.get_address(), n = gp.get_data_length();
    if (gp.is_read()) {
        if (m_cfg.functional) m_store.read(a, gp.get_data_ptr(), n);
        m_bytes_read += double(n);
    } else {
        if (m_cfg.functional) m_store.write(a, gp.get_data_ptr(), n);
        m_bytes_written += double(n);
    }
    ++m_requests;
    // Each interleave block goes to its channel; the transaction completes when its last block does.
    uint64_t now = tlmx::to_ps(sc_core::sc_time_stamp() + delay);
    uint64_t done = now;
    const uint64_t blk = m_cfg.interleave_bytes;
    for (uint64_t off = 0; off < n;) {
        uint64_t addr = a + off, len = std::min(n - off, blk - addr % blk);
        const size_t ci = channel_of(addr / blk);
        auto& ch = m_channels[ci];
        const uint64_t begin = std::max(now, ch.free_at_ps());
        const uint64_t end = ch.reserve(now, len);
        done = std::max(done, end);
        off += len;
        if (!m_observers.empty()) m_observers.notify({uint32_t(ci), addr, len, gp.is_read(), begin, end});
    }
    done += uint64_t(m_cfg.latency_ns * 1000);
    m_latency.sample(double(done - now) / 1000.0);
    delay += tlmx::from_ps(done - now);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

size_t hbm_simple::channel_of(uint64_t block) const {
    const uint64_t n = m_channels.size();
    if (!m_cfg.channel_hash) return size_t(block % n);
    // Fold every group of log2(n) bits above the channel bits onto them (n a power of two), else plain modulo.
    if (n & (n - 1)) return size_t((block ^ (block / n) ^ (block / n / n)) % n);
    uint64_t h = 0;
    for (uint64_t b = block; b; b /= n) h ^= b % n;
    return size_t(h);
}

unsigned hbm_simple::transport_dbg(tlm::tlm_generic_payload& gp) { return tlmx::serve_debug(m_store, gp); }

} // namespace trnsim::hbm

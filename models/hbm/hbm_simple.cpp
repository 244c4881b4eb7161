#include "models/hbm/hbm_simple.h"

#include <algorithm>

#include "tlm/ext_error.h"
#include "tlm/time.h"
#include "tlm/transport.h"

namespace trnsim::hbm {

hbm_simple::hbm_simple(sc_core::sc_module_name name, const hbm_config& cfg)
    : hbm_model(name, cfg.functional, cfg.faults, cfg.channels()), m_cfg(cfg), m_store(cfg.capacity_bytes),
      m_stats(basename()) {
    m_channels.resize(cfg.channels(), tlmx::gap_port(cfg.bandwidth_gbps / cfg.channels()));
    const uint64_t n = m_channels.size();
    if (n > 1 && (n & (n - 1)) == 0)
        while ((uint64_t(1) << m_channel_bits) < n) ++m_channel_bits;
    m_stats.add(m_bytes_read);
    m_stats.add(m_bytes_written);
    m_stats.add(m_requests);
    m_stats.add(m_busy);
    m_stats.add(m_latency);
    m_faults.add_stats(m_stats);
}

void hbm_simple::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (!tlmx::check_payload(gp, m_store.size())) return;
    uint64_t a = gp.get_address(), n = gp.get_data_length();
    uint64_t now = tlmx::to_ps(sc_core::sc_time_stamp() + delay);
    const double now_ns = double(now) / 1000.0;
    const uint64_t blk = m_cfg.interleave_bytes;
    // The channel of each interleave block (after disable/remap faults).
    std::vector<size_t>& touched = m_touched;
    touched.clear();
    for (uint64_t off = 0; off < n;) {
        uint64_t addr = a + off, len = std::min(n - off, blk - addr % blk);
        size_t ch = channel_of(addr / blk);
        if (!m_faults.empty()) {
            std::string why;
            ch = m_faults.serving_channel(ch, addr / blk, now_ns, why);
            if (ch == hbm_faults::NONE) {
                tlmx::set_error(gp, tlm::TLM_GENERIC_ERROR_RESPONSE, why);
                return;
            }
        }
        touched.push_back(ch);
        off += len;
    }
    if (gp.is_read()) {
        if (m_functional) m_store.read(a, gp.get_data_ptr(), n);
        m_bytes_read += double(n);
    } else {
        if (m_functional) m_store.write(a, gp.get_data_ptr(), n);
        m_bytes_written += double(n);
    }
    if (!m_faults.empty() && m_functional) m_faults.corrupt(gp, touched, blk, m_store, now_ns);
    ++m_requests;
    // Each interleave block goes to its channel; the transaction completes when its last block does.
    uint64_t done = now;
    const uint64_t horizon = tlmx::to_ps(sc_core::sc_time_stamp());  // no later call reserves before this
    for (uint64_t off = 0, i = 0; off < n; ++i) {
        uint64_t addr = a + off, len = std::min(n - off, blk - addr % blk);
        const size_t ci = touched[i];  // the serving channel (after remap faults)
        auto& ch = m_channels[ci];
        ch.forget_before(horizon);
        uint64_t begin = 0;
        const uint64_t end = ch.reserve(now, len, &begin);
        done = std::max(done, end);
        off += len;
        if (!m_observers.empty()) m_observers.notify({uint32_t(ci), addr, len, gp.is_read(), begin, end});
    }
    done += uint64_t(m_cfg.latency_ns * 1000);
    if (!m_faults.empty()) done += m_faults.added_latency_ps(touched, now_ns);
    m_latency.sample(double(done - now) / 1000.0);
    delay += tlmx::from_ps(done - now);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

size_t hbm_simple::channel_of(uint64_t block) const {
    const uint64_t n = m_channels.size();
    if (!m_cfg.channel_hash) return size_t(block % n);
    // Fold every group of log2(n) bits above the channel bits onto them (n a power of two), else plain modulo.
    if (n & (n - 1)) return size_t((block ^ (block / n) ^ (block / n / n)) % n);
    if (n == 1) return 0;
    uint64_t h = 0;
    for (uint64_t b = block; b; b >>= m_channel_bits) h ^= b & (n - 1);  // shifts: no 64-bit division per group
    return size_t(h);
}

unsigned hbm_simple::transport_dbg(tlm::tlm_generic_payload& gp) { return tlmx::serve_debug(m_store, gp); }

} // namespace trnsim::hbm

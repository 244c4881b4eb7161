#include "models/hbm/hbm_simple.h"

#include <algorithm>

#include "tlm/ext_error.h"
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
    for (auto* c : {&m_fault_errors, &m_remapped, &m_slowed, &m_corrupted}) m_stats.add(*c);
    for (const auto& f : cfg.faults) {
        // Targets were validated by the platform: "" or "channelN".
        size_t ch = f.target.empty() ? ALL : size_t(std::stoul(f.target.substr(7)));
        m_faults.push_back({ch, tlmx::fault_trigger(f)});
    }
}

size_t hbm_simple::serving_channel(size_t ch, uint64_t block, double now_ns, std::string& why) {
    auto disabled = [&](size_t c) -> const channel_fault* {
        for (const auto& f : m_faults)
            if (f.trigger.spec().kind == "disable" && (f.channel == c || f.channel == ALL) && f.trigger.active(now_ns))
                return &f;
        return nullptr;
    };
    const channel_fault* f = disabled(ch);
    if (!f) return ch;
    if (f->trigger.spec().policy == "remap") {
        // Spread the disabled channel's blocks over the enabled channels (by block address), so no single spare
        // takes all of its traffic.
        size_t enabled = 0;
        for (size_t c = 0; c < m_channels.size(); ++c) enabled += disabled(c) ? 0 : 1;
        if (enabled) {
            size_t k = size_t(block % enabled);
            for (size_t c = 0; c < m_channels.size(); ++c)
                if (!disabled(c) && k-- == 0) {
                    ++m_remapped;
                    return c;
                }
        }
        why = std::string(name()) + ": channel " + std::to_string(ch) + " is disabled and no channel is left to remap it to (" +
              f->trigger.spec().label + ")";
        return ALL;
    }
    why = std::string(name()) + ": channel " + std::to_string(ch) + " is disabled (" + f->trigger.spec().label + ")";
    return ALL;
}

void hbm_simple::corrupt(tlm::tlm_generic_payload& gp, const std::vector<size_t>& touched, double now_ns) {
    const std::string on = gp.is_read() ? "read" : "write";
    const uint64_t blk = m_cfg.interleave_bytes, a = gp.get_address();
    for (auto& f : m_faults) {
        if (f.trigger.spec().kind != "corrupt" || f.trigger.spec().on != on) continue;
        // The first byte of the transaction on the fault's channel (any channel for a whole-HBM fault).
        for (size_t i = 0; i < touched.size(); ++i) {
            if (f.channel != ALL && touched[i] != f.channel) continue;
            if (!f.trigger.hit(now_ns)) break;
            uint64_t off = i == 0 ? 0 : (blk - a % blk) + (i - 1) * blk;
            if (gp.is_read()) {
                gp.get_data_ptr()[off] ^= 0x01;
            } else {
                uint8_t b;
                m_store.read(a + off, &b, 1);
                b ^= 0x01;
                m_store.write(a + off, &b, 1);
            }
            ++m_corrupted;
            break;
        }
    }
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
            ch = serving_channel(ch, addr / blk, now_ns, why);
            if (ch == ALL) {
                ++m_fault_errors;
                tlmx::set_error(gp, tlm::TLM_GENERIC_ERROR_RESPONSE, why);
                return;
            }
        }
        touched.push_back(ch);
        off += len;
    }
    if (gp.is_read()) {
        if (m_cfg.functional) m_store.read(a, gp.get_data_ptr(), n);
        m_bytes_read += double(n);
    } else {
        if (m_cfg.functional) m_store.write(a, gp.get_data_ptr(), n);
        m_bytes_written += double(n);
    }
    if (!m_faults.empty() && m_cfg.functional) corrupt(gp, touched, now_ns);
    ++m_requests;
    // Each interleave block goes to its channel; the transaction completes when its last block does.
    uint64_t done = now;
    for (uint64_t off = 0, i = 0; off < n; ++i) {
        uint64_t addr = a + off, len = std::min(n - off, blk - addr % blk);
        const size_t ci = touched[i];  // the serving channel (after remap faults)
        auto& ch = m_channels[ci];
        const uint64_t begin = std::max(now, ch.free_at_ps());
        const uint64_t end = ch.reserve(now, len);
        done = std::max(done, end);
        off += len;
        if (!m_observers.empty()) m_observers.notify({uint32_t(ci), addr, len, gp.is_read(), begin, end});
    }
    done += uint64_t(m_cfg.latency_ns * 1000);
    bool slowed = false;
    for (auto& f : m_faults) {
        if (f.trigger.spec().kind != "slow") continue;
        bool touches = f.channel == ALL || std::find(touched.begin(), touched.end(), f.channel) != touched.end();
        if (touches && f.trigger.hit(now_ns)) {
            done += uint64_t(f.trigger.spec().latency_ns * 1000);
            slowed = true;
        }
    }
    if (slowed) ++m_slowed;
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

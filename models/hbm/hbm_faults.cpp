#include "models/hbm/hbm_faults.h"

#include <algorithm>

namespace trnsim::hbm {

hbm_faults::hbm_faults(const std::vector<tlmx::fault_spec>& faults, std::string owner, size_t channels)
    : m_owner(std::move(owner)), m_channels(channels) {
    for (const auto& f : faults) {
        // Targets were validated by the platform: "" or "channelN".
        size_t ch = f.target.empty() ? NONE : size_t(std::stoul(f.target.substr(7)));
        m_faults.push_back({ch, tlmx::fault_trigger(f)});
    }
}

void hbm_faults::add_stats(stats::group& g) {
    for (auto* c : {&m_fault_errors, &m_remapped, &m_slowed, &m_corrupted}) g.add(*c);
}

const hbm_faults::channel_fault* hbm_faults::disabled(size_t c, double now_ns) const {
    for (const auto& f : m_faults)
        if (f.trigger.spec().kind == "disable" && (f.channel == c || f.channel == NONE) && f.trigger.active(now_ns))
            return &f;
    return nullptr;
}

size_t hbm_faults::serving_channel(size_t ch, uint64_t block, double now_ns, std::string& why) {
    const channel_fault* f = disabled(ch, now_ns);
    if (!f) return ch;
    if (f->trigger.spec().policy == "remap") {
        // Spread the disabled channel's blocks over the enabled channels (by block address), so no single spare
        // takes all of its traffic.
        size_t enabled = 0;
        for (size_t c = 0; c < m_channels; ++c) enabled += disabled(c, now_ns) ? 0 : 1;
        if (enabled) {
            size_t k = size_t(block % enabled);
            for (size_t c = 0; c < m_channels; ++c)
                if (!disabled(c, now_ns) && k-- == 0) {
                    ++m_remapped;
                    return c;
                }
        }
        why = m_owner + ": channel " + std::to_string(ch) + " is disabled and no channel is left to remap it to (" +
              f->trigger.spec().label + ")";
    } else {
        why = m_owner + ": channel " + std::to_string(ch) + " is disabled (" + f->trigger.spec().label + ")";
    }
    ++m_fault_errors;
    return NONE;
}

uint64_t hbm_faults::added_latency_ps(const std::vector<size_t>& touched, double now_ns) {
    uint64_t ps = 0;
    bool slowed = false;
    for (auto& f : m_faults) {
        if (f.trigger.spec().kind != "slow") continue;
        bool touches = f.channel == NONE || std::find(touched.begin(), touched.end(), f.channel) != touched.end();
        if (touches && f.trigger.hit(now_ns)) {
            ps += uint64_t(f.trigger.spec().latency_ns * 1000);
            slowed = true;
        }
    }
    if (slowed) ++m_slowed;
    return ps;
}

void hbm_faults::corrupt(tlm::tlm_generic_payload& gp, const std::vector<size_t>& touched, uint64_t blk,
                         tlmx::sparse_store& store, double now_ns) {
    const std::string on = gp.is_read() ? "read" : "write";
    const uint64_t a = gp.get_address();
    for (auto& f : m_faults) {
        if (f.trigger.spec().kind != "corrupt" || f.trigger.spec().on != on) continue;
        // The first byte of the transaction on the fault's channel (any channel for a whole-HBM fault).
        for (size_t i = 0; i < touched.size(); ++i) {
            if (f.channel != NONE && touched[i] != f.channel) continue;
            if (!f.trigger.hit(now_ns)) break;
            uint64_t off = i == 0 ? 0 : (blk - a % blk) + (i - 1) * blk;
            if (gp.is_read()) {
                gp.get_data_ptr()[off] ^= 0x01;
            } else {
                uint8_t b;
                store.read(a + off, &b, 1);
                b ^= 0x01;
                store.write(a + off, &b, 1);
            }
            ++m_corrupted;
            break;
        }
    }
}

} // namespace trnsim::hbm

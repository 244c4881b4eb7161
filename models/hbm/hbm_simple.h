// First-cut HBM: stacks x channels, each channel a bandwidth/latency-limited port; addresses interleave across
// channels in `interleave_bytes` blocks. Stores real data (sparse pages). Injected faults (hbm_config::faults,
// hbm_faults) disable channels (error response naming the channel, or remap to a spare), slow them down or corrupt
// data.
#pragma once
#include <vector>

#include "models/hbm/hbm_config.h"
#include "models/hbm/hbm_model.h"
#include "tlm/bw_port.h"
#include "tlm/sparse_store.h"
#include "tlm/stats.h"

namespace trnsim::hbm {

class hbm_simple : public hbm_model {
public:
    hbm_simple(sc_core::sc_module_name name, const hbm_config& cfg);
    stats::group& stats() override { return m_stats; }
    double peak_gbps() const override { return m_cfg.bandwidth_gbps; }
    uint32_t channels() const override { return uint32_t(m_channels.size()); }
    uint64_t capacity() const override { return m_store.size(); }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) override;
    unsigned transport_dbg(tlm::tlm_generic_payload& gp) override;
    size_t channel_of(uint64_t block) const;

    hbm_config m_cfg;
    tlmx::sparse_store m_store;
    unsigned m_channel_bits = 0;  // log2 of the channel count when it is a power of two, else 0
    std::vector<tlmx::gap_port> m_channels;  // reservations fill gaps (remote writes arrive out of time order)
    std::vector<size_t> m_touched;  // scratch: channels of the current transaction's blocks
    stats::group m_stats;
    stats::counter m_bytes_read{"bytes_read", "B", "bytes read"};
    stats::counter m_bytes_written{"bytes_written", "B", "bytes written"};
    stats::counter m_requests{"requests", "count", "read and write transactions"};
    stats::formula m_busy{"busy_ns", "ns", "summed channel busy time / channels", [this] {
        double b = 0;
        for (auto& c : m_channels) b += double(c.busy_ps());
        return b / 1000.0 / double(m_channels.size());
    }};
    stats::histogram m_latency{"access_latency", "ns", "latency of each transaction (queueing included)", 10, 400};
};

} // namespace trnsim::hbm

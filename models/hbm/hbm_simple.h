// First-cut HBM: stacks x channels, each channel a bandwidth/latency-limited port; addresses interleave across
// channels in `interleave_bytes` blocks. Stores real data (sparse pages).
#pragma once
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/hbm/hbm_config.h"
#include "tlm/bw_port.h"
#include "tlm/observer.h"
#include "tlm/sparse_store.h"
#include "tlm/stats.h"

namespace trnsim::hbm {

// One channel's share of a transaction: the interleave blocks of one request that went to one channel, with the
// time the channel spent on them (queueing excluded: begin is when the channel started on them).
struct hbm_event {
    uint32_t channel;
    uint64_t addr;   // first byte (HBM-local)
    uint64_t bytes;
    bool read;
    uint64_t begin_ps, end_ps;
};

class hbm_simple : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<hbm_simple> in;

    hbm_simple(sc_core::sc_module_name name, const hbm_config& cfg);
    stats::group& stats() { return m_stats; }
    double peak_gbps() const { return m_cfg.bandwidth_gbps; }
    uint32_t channels() const { return uint32_t(m_channels.size()); }
    void observe(tlmx::observer_list<hbm_event>::callback cb) { m_observers.add(std::move(cb)); }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    size_t channel_of(uint64_t block) const;
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);

    hbm_config m_cfg;
    tlmx::sparse_store m_store;
    std::vector<tlmx::bw_port> m_channels;
    tlmx::observer_list<hbm_event> m_observers;
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

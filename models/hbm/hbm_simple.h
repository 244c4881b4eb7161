// First-cut HBM: stacks x channels, each channel a bandwidth/latency-limited port; addresses interleave across
// channels in `interleave_bytes` blocks. Stores real data (sparse pages). Injected faults (hbm_config::faults)
// disable channels (error response naming the channel, or remap to a spare), slow them down or corrupt data.
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

    struct channel_fault {
        size_t channel;  // or ALL
        tlmx::fault_trigger trigger;
    };
    static constexpr size_t ALL = ~size_t(0);
    // The channel that serves interleave block `block` of channel `ch`: ch itself, or, when a "remap" fault
    // disables ch, one of the enabled channels chosen by the block address. Sets `why` and returns ALL when the
    // channel is disabled with policy "error" (or nothing is left to remap to).
    size_t serving_channel(size_t ch, uint64_t block, double now_ns, std::string& why);
    void corrupt(tlm::tlm_generic_payload& gp, const std::vector<size_t>& touched, double now_ns);

    hbm_config m_cfg;
    tlmx::sparse_store m_store;
    std::vector<tlmx::bw_port> m_channels;
    tlmx::observer_list<hbm_event> m_observers;
    std::vector<channel_fault> m_faults;
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
    stats::counter m_fault_errors{"fault_errors", "count", "transactions failed by a disabled channel"};
    stats::counter m_remapped{"remapped_blocks", "count", "interleave blocks of disabled channels served by others"};
    stats::counter m_slowed{"slowed_requests", "count", "transactions delayed by a slow-channel fault"};
    stats::counter m_corrupted{"corrupted_transfers", "count", "transactions whose data an injected fault corrupted"};
};

} // namespace trnsim::hbm

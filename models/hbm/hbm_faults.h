// The injected HBM faults (hbm_config::faults) of one HBM model, whatever its timing: both models (hbm_simple,
// hbm_dram) split a transaction into blocks (interleave blocks / DRAM bursts), ask this which channel serves each
// block, and apply the slow and corrupt faults to the transaction. Targets are "" (every channel) or "channelN"
// (validated by the platform). Kinds: "disable" (policy "error": a transaction touching the channel fails; "remap":
// the enabled channels serve its blocks, spread by block address), "slow" (latency_ns added to each hit
// transaction), "corrupt" (one bit of the first byte on the channel flips, on read or write data).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <tlm>

#include "tlm/fault.h"
#include "tlm/sparse_store.h"
#include "tlm/stats.h"

namespace trnsim::hbm {

class hbm_faults {
public:
    static constexpr size_t NONE = ~size_t(0);

    // `owner` names the model in messages ("chip0.hbm"); `channels` is the number of channels faults may name.
    hbm_faults(const std::vector<tlmx::fault_spec>& faults, std::string owner, size_t channels);
    bool empty() const { return m_faults.empty(); }
    // fault_errors, remapped_blocks, slowed_requests, corrupted_transfers into the model's statistics.
    void add_stats(stats::group& g);

    // The channel that serves block `block` of channel `ch` at `now_ns`: ch itself, or an enabled one when a
    // "remap" fault disables ch. NONE (and `why` set, fault_errors counted) when the transaction must fail.
    size_t serving_channel(size_t ch, uint64_t block, double now_ns, std::string& why);
    // Latency (ps) the "slow" faults add to a transaction whose blocks went to `touched` (counts slowed_requests).
    uint64_t added_latency_ps(const std::vector<size_t>& touched, double now_ns);
    // Applies the "corrupt" faults to a transaction whose data has just been read into / written from `gp`
    // (`touched`: the channel of each block of `block_bytes`, the first block possibly partial).
    void corrupt(tlm::tlm_generic_payload& gp, const std::vector<size_t>& touched, uint64_t block_bytes,
                 tlmx::sparse_store& store, double now_ns);

private:
    struct channel_fault {
        size_t channel;  // or NONE: every channel
        tlmx::fault_trigger trigger;
    };
    const channel_fault* disabled(size_t ch, double now_ns) const;

    std::vector<channel_fault> m_faults;
    std::string m_owner;
    size_t m_channels;
    stats::counter m_fault_errors{"fault_errors", "count", "transactions failed by a disabled channel"};
    stats::counter m_remapped{"remapped_blocks", "count", "blocks of disabled channels served by others"};
    stats::counter m_slowed{"slowed_requests", "count", "transactions delayed by a slow-channel fault"};
    stats::counter m_corrupted{"corrupted_transfers", "count", "transactions whose data an injected fault corrupted"};
};

} // namespace trnsim::hbm

// Validated runtime configuration of a chip's HBM subsystem, for either model (hbm_model.h): the simple
// bandwidth/latency model reads the figures below, the detailed DRAM model `dram` (the others are derived from it);
// both read functional and faults.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tlm/fault.h"

namespace trnsim::hbm {

struct hbm_dram_config;

struct hbm_config {
    std::string model = "simple";     // "simple" (hbm_simple) or "dram" (hbm_dram: detailed DRAM timing, models/hbm/dram)
    uint32_t stacks = 4;
    uint32_t channels_per_stack = 16; // independent channels per stack (pseudo-channels count as channels here)
    uint64_t capacity_bytes = 96ull << 30;
    double bandwidth_gbps = 2900;     // whole subsystem, GB/s (bytes per ns)
    double latency_ns = 120;          // idle read latency
    uint64_t interleave_bytes = 256;  // consecutive blocks of this size go to consecutive channels
    bool channel_hash = true;         // XOR-fold upper block-address bits into the channel (as controllers do),
                                      // so power-of-two strides do not camp on a few channels
    bool functional = true;           // false: timing only, no data stored or returned
    // model = "dram": the detailed model's validated config (memspec, mapping, scheduler, ...); capacity_bytes and
    // bandwidth_gbps are then derived from it.
    std::shared_ptr<const hbm_dram_config> dram;
    // Injected faults, targets relative to the HBM: "" (every channel) or "channelN". Kinds: "disable" (policy
    // "error": requests touching the channel fail; "remap": the next enabled channel serves them), "slow"
    // (latency_ns added), "corrupt" (one bit of the data read or written flips).
    std::vector<tlmx::fault_spec> faults;
    uint32_t channels() const { return stacks * channels_per_stack; }
};

} // namespace trnsim::hbm

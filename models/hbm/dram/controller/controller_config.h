// Validated configuration of one pseudo-channel controller core (the same for every pseudo-channel of the HBM).
#pragma once
#include <cstdint>

#include "models/hbm/dram/page_policy/page_policy_if.h"
#include "models/hbm/dram/refresh/refresh_if.h"
#include "models/hbm/dram/scheduler/scheduler_if.h"

namespace trnsim::hbm {

struct controller_config {
    static constexpr uint32_t DEFAULT_READ_QUEUE_DEPTH = 32;
    static constexpr uint32_t DEFAULT_WRITE_QUEUE_DEPTH = 32;
    static constexpr uint32_t DEFAULT_WRITE_HIGH_WATERMARK = 24;
    static constexpr uint32_t DEFAULT_WRITE_LOW_WATERMARK = 8;

    scheduler_kind scheduler = scheduler_kind::fr_fcfs;
    page_policy_kind page_policy = page_policy_kind::closed_adaptive;
    refresh_kind refresh = refresh_kind::per_bank;
    uint32_t read_queue_depth = DEFAULT_READ_QUEUE_DEPTH;    // burst requests per pseudo-channel
    uint32_t write_queue_depth = DEFAULT_WRITE_QUEUE_DEPTH;
    // Write drain: switch to writes when this many are queued (or no reads are), back to reads at the low mark.
    uint32_t write_high_watermark = DEFAULT_WRITE_HIGH_WATERMARK;
    uint32_t write_low_watermark = DEFAULT_WRITE_LOW_WATERMARK;
};

} // namespace trnsim::hbm

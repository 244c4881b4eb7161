// First-come first-served: each bank serves its requests strictly in arrival order, and among commands legal in the
// same cycle the one for the oldest request wins (banks still overlap their ACT/PRE with other banks' transfers).
#pragma once
#include "models/hbm/dram/controller/request_queue.h"
#include "models/hbm/dram/scheduler/scheduler_if.h"

namespace trnsim::hbm {

class scheduler_fcfs final : public scheduler_if {
public:
    const char* name() const override { return "fcfs"; }
    int32_t pick(const request_queue& q, unsigned d, uint32_t bank, int64_t) const override { return q.head(d, bank); }
    uint64_t rank(const burst_request& r, bool) const override { return r.seq & ((uint64_t(1) << 54) - 1); }
};

} // namespace trnsim::hbm

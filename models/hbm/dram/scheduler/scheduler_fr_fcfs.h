// First-ready FCFS (Rixner et al., ISCA 2000): a bank with an open row serves the oldest request hitting that row
// before any older miss (so a row is never closed while hits for it are queued), and among commands legal in the
// same cycle column commands (row hits) go before row commands (ACT/PRE), oldest first within each class.
#pragma once
#include "models/hbm/dram/controller/request_queue.h"
#include "models/hbm/dram/scheduler/scheduler_if.h"

namespace trnsim::hbm {

class scheduler_fr_fcfs final : public scheduler_if {
public:
    const char* name() const override { return "fr_fcfs"; }
    int32_t pick(const request_queue& q, unsigned d, uint32_t bank, int64_t open_row) const override {
        int32_t h = q.head(d, bank);
        if (open_row < 0) return h;
        for (int32_t i = h; i >= 0; i = q.at(i).next)
            if (int64_t(q.at(i).row) == open_row) return i;
        return h;
    }
    uint64_t rank(const burst_request& r, bool column) const override {
        return (column ? 0 : uint64_t(1) << 54) | (r.seq & ((uint64_t(1) << 54) - 1));
    }
};

} // namespace trnsim::hbm

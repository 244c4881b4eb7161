#include "models/hbm/dram/scheduler/scheduler_fcfs.h"
#include "models/hbm/dram/scheduler/scheduler_fr_fcfs.h"

namespace trnsim::hbm {

int32_t scheduler_fr_fcfs::pick(const request_queue& q, unsigned d, uint32_t bank, int64_t open_row) const {
    int32_t h = q.head(d, bank);
    if (open_row < 0) return h;
    for (int32_t i = h; i >= 0; i = q.at(i).next)
        if (int64_t(q.at(i).row) == open_row) return i;
    return h;
}

std::unique_ptr<scheduler_if> make_scheduler(scheduler_kind k) {
    if (k == scheduler_kind::fcfs) return std::make_unique<scheduler_fcfs>();
    return std::make_unique<scheduler_fr_fcfs>();
}

const char* name(scheduler_kind k) { return k == scheduler_kind::fcfs ? "fcfs" : "fr_fcfs"; }

} // namespace trnsim::hbm

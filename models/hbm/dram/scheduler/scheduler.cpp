#include "models/hbm/dram/scheduler/scheduler_fcfs.h"
#include "models/hbm/dram/scheduler/scheduler_fr_fcfs.h"

namespace trnsim::hbm {

std::unique_ptr<scheduler_if> make_scheduler(scheduler_kind k) {
    if (k == scheduler_kind::fcfs) return std::make_unique<scheduler_fcfs>();
    return std::make_unique<scheduler_fr_fcfs>();
}

const char* name(scheduler_kind k) { return k == scheduler_kind::fcfs ? "fcfs" : "fr_fcfs"; }

} // namespace trnsim::hbm

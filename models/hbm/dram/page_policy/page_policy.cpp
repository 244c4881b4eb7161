#include "models/hbm/dram/controller/request_queue.h"
#include "models/hbm/dram/page_policy/page_policy_if.h"

namespace trnsim::hbm {

bool page_policy_closed_adaptive::auto_precharge(const request_queue& q, uint32_t bank, uint32_t row, int32_t self) const {
    return !q.other_hit(bank, row, self);
}

} // namespace trnsim::hbm

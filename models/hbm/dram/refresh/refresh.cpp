#include "models/hbm/dram/refresh/refresh_if.h"

#include "models/hbm/dram/controller/request_queue.h"

#include <algorithm>
#include <stdexcept>

namespace trnsim::hbm {

refresh_per_bank::refresh_per_bank(const memspec& m, cycle_t offset)
    : m_trefi(m.tREFI), m_offset(offset), m_banks(m.banks_per_pc()), m_left(m.banks_per_pc()), m_due(offset + cycle_t(uint64_t(m.tREFI) / m.banks_per_pc())) {
    if (!m.has_per_bank_refresh()) throw std::invalid_argument("memspec '" + m.name + "' has no per-bank refresh (tRFCpb)");
    m_todo.set_all(m_banks);
}


uint32_t refresh_per_bank::choose_bank(const bank_fsm&, const request_queue& q, const std::vector<cycle_t>& last_use,
                                       cycle_t now) {
    const cycle_t cold_before = now - m_trefi / 4;
    uint32_t best = 0;
    bool have = false, best_cold = false;
    uint64_t best_queued = 0;
    cycle_t best_use = LONG_AGO;
    auto consider = [&](uint32_t b, uint64_t queued) {
        bool cold = last_use[b] < cold_before;
        bool better = !have || queued < best_queued ||
                      (queued == best_queued && (cold != best_cold ? cold : !cold && last_use[b] > best_use));
        if (better) {
            have = true;
            best = b;
            best_queued = queued;
            best_cold = cold;
            best_use = last_use[b];
        }
    };
    // Banks with nothing queued first (the usual case); only if there are none, the least loaded.
    bank_set idle = m_todo;
    idle -= q.banks_with_requests(READ) | q.banks_with_requests(WRITE);
    if (idle.any()) {
        idle.for_each([&](uint32_t b) { consider(b, 0); });
    } else {
        m_todo.for_each([&](uint32_t b) { consider(b, uint64_t(q.in_bank(READ, b)) + q.in_bank(WRITE, b)); });
    }
    return best;
}

void refresh_per_bank::issued(cycle_t, uint32_t bank) {
    ++m_k;
    m_due = m_offset + cycle_t(m_k * uint64_t(m_trefi) / m_banks);
    if (m_todo.test(bank)) {
        m_todo.clear(bank);
        --m_left;
    }
    if (m_left == 0) {
        m_todo.set_all(m_banks);
        m_left = m_banks;
    }
}

const char* name(refresh_kind k) {
    return k == refresh_kind::none ? "none" : k == refresh_kind::all_bank ? "all_bank" : "per_bank";
}

std::unique_ptr<refresh_if> make_refresh(refresh_kind k, const memspec& m, cycle_t offset) {
    switch (k) {
    case refresh_kind::none: return std::make_unique<refresh_none>();
    case refresh_kind::all_bank: return std::make_unique<refresh_all_bank>(m, offset);
    default: return std::make_unique<refresh_per_bank>(m, offset);
    }
}

} // namespace trnsim::hbm

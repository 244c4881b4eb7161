#include "models/hbm/dram/checker/timing_checker.h"

#include <algorithm>

namespace trnsim::hbm {

timing_checker::timing_checker(const memspec& m)
    : m_spec(m), m_banks(m.banks_per_pc()), m_banks_per_group(m.banks_per_group), m_bank(m.banks_per_pc()),
      m_group(m.groups_per_pc()), m_auto_pre(m.banks_per_pc(), LONG_AGO), m_group_of(m.banks_per_pc()) {
    m_acts.fill(LONG_AGO);
    for (uint32_t b = 0; b < m_banks; ++b) m_group_of[b] = uint16_t(b / m_banks_per_group);
}

bound timing_checker::earliest(command c, uint32_t bank) const {
    cls k = class_of(c);
    bound b = m_pc[k];
    if (c == command::REFAB) return b;
    if (c == command::PREA) {
        for (uint32_t i = 0; i < m_banks; ++i) b.raise(m_bank[i][C_PRE]);
        return b;
    }
    b.raise(m_group[bank_group_of(bank)][k]);
    b.raise(m_bank[bank][k]);
    return b;
}

check_result timing_checker::check(command c, uint32_t bank, cycle_t t, const bank_fsm* states) const {
    check_result r;
    if (states && !states->legal(c, bank)) {
        r.ok = false;
        r.violated = constraint::bank_state;
        r.earliest = NEVER;
        return r;
    }
    bound b = earliest(c, bank);
    r.earliest = b.t;
    r.ok = t >= b.t;
    r.violated = r.ok ? constraint::none : b.why;
    return r;
}

void timing_checker::issue(command c, uint32_t bank, cycle_t t) {
    switch (c) {
    case command::ACT: issue_act(bank, t); break;
    case command::PRE: issue_pre(bank, t); break;
    case command::PREA: issue_prea(t); break;
    case command::RD: issue_rd(bank, t, false); break;
    case command::RDA: issue_rd(bank, t, true); break;
    case command::WR: issue_wr(bank, t, false); break;
    case command::WRA: issue_wr(bank, t, true); break;
    case command::REFAB: issue_refab(t); break;
    case command::REFPB: issue_refpb(bank, t); break;
    default: break;
    }
}

} // namespace trnsim::hbm

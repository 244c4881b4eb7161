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

// The effects of a (possibly implicit) precharge of `bank` at cycle `at`.
void timing_checker::precharged(uint32_t bank, cycle_t at) {
    auto& bk = m_bank[bank];
    bk[C_ACT].raise(at + m_spec.tRP, constraint::tRP);
    bk[C_REFPB].raise(at + m_spec.tRP, constraint::tRP);
    m_pc[C_REFAB].raise(at + m_spec.tRP, constraint::tRP);
}

void timing_checker::issue(command c, uint32_t bank, cycle_t t) {
    const memspec& s = m_spec;
    const cycle_t burst = s.burst_cycles();
    auto row_bus = [&] {
        for (cls k : {C_ACT, C_PRE, C_REFAB, C_REFPB}) m_pc[k].raise(t + 1, constraint::row_bus);
    };
    switch (c) {
    case command::ACT: {
        auto& bk = m_bank[bank];
        bk[C_ACT].raise(t + s.tRC, constraint::tRC);
        bk[C_REFPB].raise(t + s.tRC, constraint::tRC);
        bk[C_PRE].raise(t + s.tRAS, constraint::tRAS);
        bk[C_RD].raise(t + s.tRCD, constraint::tRCD);
        bk[C_WR].raise(t + s.tRCDWR, constraint::tRCDWR);
        m_group[bank_group_of(bank)][C_ACT].raise(t + s.tRRD_L, constraint::tRRD_L);
        m_pc[C_ACT].raise(t + s.tRRD_S, constraint::tRRD_S);
        m_acts[m_act_pos] = t;
        m_act_pos = (m_act_pos + 1) & 3;
        m_pc[C_ACT].raise(m_acts[m_act_pos] + s.tFAW, constraint::tFAW);  // oldest of the last four
        m_pc[C_REFAB].raise(t + s.tRC, constraint::tRC);
        if (s.tRREFD) m_pc[C_REFPB].raise(t + s.tRREFD, constraint::tRREFD);
        row_bus();
        break;
    }
    case command::PRE:
        precharged(bank, t);
        row_bus();
        break;
    case command::PREA:
        for (uint32_t i = 0; i < m_banks; ++i) precharged(i, t);
        row_bus();
        break;
    case command::RD:
    case command::RDA: {
        m_bank[bank][C_PRE].raise(t + s.tRTP, constraint::tRTP);
        m_group[bank_group_of(bank)][C_RD].raise(t + s.tCCD_L, constraint::tCCD_L);
        m_pc[C_RD].raise(t + s.tCCD_S, constraint::tCCD_S);
        m_pc[C_WR].raise(t + s.tRTW, constraint::tRTW);
        if (c == command::RDA) {
            cycle_t p = m_bank[bank][C_PRE].t;  // max(ACT + tRAS, RD + tRTP, write recovery)
            m_auto_pre[bank] = p;
            precharged(bank, p);
        }
        break;
    }
    case command::WR:
    case command::WRA: {
        cycle_t wend = t + s.tWL + burst;
        m_bank[bank][C_PRE].raise(wend + s.tWR, constraint::tWR);
        auto& g = m_group[bank_group_of(bank)];
        g[C_WR].raise(t + s.tCCD_L, constraint::tCCD_L);
        g[C_RD].raise(wend + s.tWTR_L, constraint::tWTR_L);
        m_pc[C_WR].raise(t + s.tCCD_S, constraint::tCCD_S);
        m_pc[C_RD].raise(wend + s.tWTR_S, constraint::tWTR_S);
        if (c == command::WRA) {
            cycle_t p = m_bank[bank][C_PRE].t;
            m_auto_pre[bank] = p;
            precharged(bank, p);
        }
        break;
    }
    case command::REFAB:
        m_pc[C_ACT].raise(t + s.tRFC, constraint::tRFC);
        m_pc[C_REFAB].raise(t + s.tRFC, constraint::tRFC);
        m_pc[C_REFPB].raise(t + s.tRFC, constraint::tRFC);
        row_bus();
        break;
    case command::REFPB: {
        auto& bk = m_bank[bank];
        bk[C_ACT].raise(t + s.tRFCpb, constraint::tRFCpb);
        bk[C_REFPB].raise(t + s.tRFCpb, constraint::tRFCpb);
        m_pc[C_ACT].raise(t + s.tRREFD, constraint::tRREFD);
        m_pc[C_REFPB].raise(t + s.tRREFD, constraint::tRREFD);
        m_pc[C_REFAB].raise(t + s.tRFCpb, constraint::tRFCpb);
        row_bus();
        break;
    }
    default: break;
    }
}

} // namespace trnsim::hbm

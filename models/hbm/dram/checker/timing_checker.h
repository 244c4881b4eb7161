// Timing checker of one HBM pseudo-channel: knows every constraint between commands (see `constraint` in
// command.h and the table in docs/hbm.md), answers the earliest legal cycle of a proposed command and which
// constraint binds it, and records issued commands.
//
// Representation: for each command class (ACT, PRE, RD, WR, REFab, REFpb) the earliest allowed cycle is kept at three
// scopes (bank, bank group, pseudo-channel), each tagged with the constraint that set it. Issuing a command raises
// those bounds ("command B no earlier than A + delay"); a query is the maximum of three lookups. Commands must be
// issued in non-decreasing cycle order. Plain C++ (no SystemC).
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "models/hbm/dram/bank_fsm.h"
#include "models/hbm/dram/command.h"
#include "models/hbm/dram/memspec.h"

namespace trnsim::hbm {

struct bound {
    cycle_t t = LONG_AGO;
    constraint why = constraint::none;
    void raise(cycle_t v, constraint c) {
        if (v > t) {
            t = v;
            why = c;
        }
    }
    void raise(const bound& b) { raise(b.t, b.why); }
};

struct check_result {
    bool ok = true;
    constraint violated = constraint::none;  // the binding constraint when !ok
    cycle_t earliest = LONG_AGO;              // earliest legal cycle (NEVER when the bank state forbids the command)
};

class timing_checker {
public:
    explicit timing_checker(const memspec& m);

    // Earliest cycle at which `c` to bank `bank` satisfies every timing constraint (state not considered), and the
    // constraint that determines it (none if no earlier command restricts it).
    bound earliest(command c, uint32_t bank) const;
    cycle_t earliest_cycle(command c, uint32_t bank) const { return earliest(c, bank).t; }

    // Would `c` to `bank` at cycle `t` be legal? With `states`, a command illegal in the bank state is reported as
    // constraint::bank_state with earliest = NEVER.
    check_result check(command c, uint32_t bank, cycle_t t, const bank_fsm* states = nullptr) const;

    // Records a command issued at cycle t (callers check legality first).
    void issue(command c, uint32_t bank, cycle_t t);
    // The same per command, for callers that already know which one (no second dispatch on the command).
    void issue_act(uint32_t bank, cycle_t t) {
        const memspec& s = m_spec;
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
        row_bus(t);
    }
    void issue_pre(uint32_t bank, cycle_t t) {
        precharged(bank, t);
        row_bus(t);
    }
    void issue_prea(cycle_t t) {
        for (uint32_t i = 0; i < m_banks; ++i) precharged(i, t);
        row_bus(t);
    }
    void issue_rd(uint32_t bank, cycle_t t, bool auto_pre) {
        const memspec& s = m_spec;
        m_bank[bank][C_PRE].raise(t + s.tRTP, constraint::tRTP);
        m_group[bank_group_of(bank)][C_RD].raise(t + s.tCCD_L, constraint::tCCD_L);
        m_pc[C_RD].raise(t + s.tCCD_S, constraint::tCCD_S);
        m_pc[C_WR].raise(t + s.tRTW, constraint::tRTW);
        if (auto_pre) {
            cycle_t p = m_bank[bank][C_PRE].t;  // max(ACT + tRAS, RD + tRTP, write recovery)
            m_auto_pre[bank] = p;
            precharged(bank, p);
        }
    }
    void issue_wr(uint32_t bank, cycle_t t, bool auto_pre) {
        const memspec& s = m_spec;
        cycle_t wend = t + s.tWL + s.burst_cycles();
        m_bank[bank][C_PRE].raise(wend + s.tWR, constraint::tWR);
        auto& g = m_group[bank_group_of(bank)];
        g[C_WR].raise(t + s.tCCD_L, constraint::tCCD_L);
        g[C_RD].raise(wend + s.tWTR_L, constraint::tWTR_L);
        m_pc[C_WR].raise(t + s.tCCD_S, constraint::tCCD_S);
        m_pc[C_RD].raise(wend + s.tWTR_S, constraint::tWTR_S);
        if (auto_pre) {
            cycle_t p = m_bank[bank][C_PRE].t;
            m_auto_pre[bank] = p;
            precharged(bank, p);
        }
    }
    void issue_refab(cycle_t t) {
        const memspec& s = m_spec;
        m_pc[C_ACT].raise(t + s.tRFC, constraint::tRFC);
        m_pc[C_REFAB].raise(t + s.tRFC, constraint::tRFC);
        m_pc[C_REFPB].raise(t + s.tRFC, constraint::tRFC);
        row_bus(t);
    }
    void issue_refpb(uint32_t bank, cycle_t t) {
        const memspec& s = m_spec;
        auto& bk = m_bank[bank];
        bk[C_ACT].raise(t + s.tRFCpb, constraint::tRFCpb);
        bk[C_REFPB].raise(t + s.tRFCpb, constraint::tRFCpb);
        m_pc[C_ACT].raise(t + s.tRREFD, constraint::tRREFD);
        m_pc[C_REFPB].raise(t + s.tRREFD, constraint::tRREFD);
        m_pc[C_REFAB].raise(t + s.tRFCpb, constraint::tRFCpb);
        row_bus(t);
    }

    // Cycle at which the auto-precharge of the last RDA/WRA to `bank` takes place.
    cycle_t auto_precharge_at(uint32_t bank) const { return m_auto_pre[bank]; }

    uint32_t bank_group_of(uint32_t bank) const { return m_group_of[bank]; }

    // Raw bounds for the controller's fast path: the earliest cycle of a command of class `k` is the maximum of the
    // bank, group and pseudo-channel bounds (PREA excepted).
    enum cls : unsigned { C_ACT, C_PRE, C_RD, C_WR, C_REFAB, C_REFPB, NUM_CLS };
    static cls class_of(command c) {
        switch (c) {
        case command::ACT: return C_ACT;
        case command::PRE:
        case command::PREA: return C_PRE;
        case command::RD:
        case command::RDA: return C_RD;
        case command::WR:
        case command::WRA: return C_WR;
        case command::REFAB: return C_REFAB;
        default: return C_REFPB;
        }
    }
    cycle_t bank_bound(cls k, uint32_t bank) const { return m_bank[bank][k].t; }
    cycle_t group_bound(cls k, uint32_t group) const { return m_group[group][k].t; }
    cycle_t pc_bound(cls k) const { return m_pc[k].t; }

private:
    // The effects of a (possibly implicit) precharge of `bank` at cycle `at`.
    void precharged(uint32_t bank, cycle_t at) {
        auto& bk = m_bank[bank];
        bk[C_ACT].raise(at + m_spec.tRP, constraint::tRP);
        bk[C_REFPB].raise(at + m_spec.tRP, constraint::tRP);
        m_pc[C_REFAB].raise(at + m_spec.tRP, constraint::tRP);
    }
    void row_bus(cycle_t t) {
        for (cls k : {C_ACT, C_PRE, C_REFAB, C_REFPB}) m_pc[k].raise(t + 1, constraint::row_bus);
    }

    const memspec& m_spec;
    uint32_t m_banks, m_banks_per_group;
    std::vector<std::array<bound, NUM_CLS>> m_bank, m_group;
    std::array<bound, NUM_CLS> m_pc;
    std::array<cycle_t, 4> m_acts;  // ring of the last four ACT cycles, for tFAW
    unsigned m_act_pos = 0;
    std::vector<cycle_t> m_auto_pre;
    std::vector<uint16_t> m_group_of;  // bank -> bank group (avoids a division per command)
};

} // namespace trnsim::hbm

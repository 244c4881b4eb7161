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
    void precharged(uint32_t bank, cycle_t at);

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

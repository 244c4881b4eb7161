// Refresh manager of a pseudo-channel: says when the next refresh is due and what it is. Due times follow a fixed
// grid (all-bank: one per tREFI; per-bank: banks_per_pc per tREFI), so however late a refresh is issued the average
// rate stays exactly one per tREFI per bank. Once a refresh is due the controller blocks new ACTs to the affected
// banks, precharges them and issues the refresh as soon as it is legal.
// Plain C++ (no SystemC).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "models/hbm/dram/bank_fsm.h"
#include "models/hbm/dram/command.h"
#include "models/hbm/dram/burst_request.h"
#include "models/hbm/dram/memspec.h"

namespace trnsim::hbm {

class refresh_if {
public:
    virtual ~refresh_if() = default;
    virtual const char* name() const = 0;
    virtual cycle_t next_due() const = 0;  // NEVER if refresh is off
    virtual command kind() const = 0;      // REFAB or REFPB
    // For REFPB: called when the due refresh becomes active, returns the bank to refresh.
    // `last_use` is the cycle of the last ACT or column command of each bank; `now` the current cycle.
    virtual uint32_t choose_bank(const bank_fsm& banks, const request_queue& q, const std::vector<cycle_t>& last_use,
                                 cycle_t now) {
        (void)banks, (void)q, (void)last_use, (void)now;
        return 0;
    }
    virtual void issued(cycle_t t, uint32_t bank) = 0;
};

// No refresh (for analytic tests).
class refresh_none final : public refresh_if {
public:
    const char* name() const override { return "none"; }
    cycle_t next_due() const override { return NEVER; }
    command kind() const override { return command::REFAB; }
    void issued(cycle_t, uint32_t) override {}
};

// One REFab every tREFI; `offset` staggers pseudo-channels.
class refresh_all_bank final : public refresh_if {
public:
    refresh_all_bank(const memspec& m, cycle_t offset) : m_trefi(m.tREFI), m_due(offset + m.tREFI) {}
    const char* name() const override { return "all_bank"; }
    cycle_t next_due() const override { return m_due; }
    command kind() const override { return command::REFAB; }
    void issued(cycle_t, uint32_t) override { m_due += m_trefi; }

private:
    cycle_t m_trefi, m_due;
};

// One REFpb every tREFI / banks; every bank is refreshed once per round of banks_per_pc refreshes. The bank is
// chosen among those not yet refreshed in the round: the fewest queued requests first; then a cold bank (unused for
// tREFI / 4), whose refresh costs nothing; then the most recently used one (a bank a stream has just left is the one
// it needs least soon); then the lowest index. HBM lets the controller name the bank of each REFpb.
class refresh_per_bank final : public refresh_if {
public:
    refresh_per_bank(const memspec& m, cycle_t offset);
    const char* name() const override { return "per_bank"; }
    cycle_t next_due() const override { return m_due; }
    command kind() const override { return command::REFPB; }
    uint32_t choose_bank(const bank_fsm& banks, const request_queue& q, const std::vector<cycle_t>& last_use,
                         cycle_t now) override;
    void issued(cycle_t t, uint32_t bank) override;

private:
    cycle_t m_trefi, m_offset;
    uint32_t m_banks;
    uint64_t m_k = 1;  // index of the next refresh on the grid
    bank_set m_todo;  // banks not yet refreshed in this round
    uint32_t m_left;
    cycle_t m_due;
};

enum class refresh_kind { none, all_bank, per_bank };
const char* name(refresh_kind k);
std::unique_ptr<refresh_if> make_refresh(refresh_kind k, const memspec& m, cycle_t offset);

} // namespace trnsim::hbm

// Bank state machine of one pseudo-channel: each bank is either closed (precharged) or has one row open.
// Refresh in progress is a timing matter (tRFC, tRFCpb), enforced by the timing checker, not a state here.
// Plain C++ (no SystemC).
#pragma once
#include <cstdint>
#include <vector>

#include "models/hbm/dram/command.h"

namespace trnsim::hbm {

class bank_fsm {
public:
    static constexpr int64_t CLOSED = -1;

    explicit bank_fsm(uint32_t banks) : m_row(banks, CLOSED) {}

    uint32_t banks() const { return uint32_t(m_row.size()); }
    bool is_open(uint32_t b) const { return m_row[b] != CLOSED; }
    int64_t open_row(uint32_t b) const { return m_row[b]; }
    uint32_t open_count() const { return m_open; }

    // Whether `c` may be issued to bank `b` in the current state (PRE to a closed bank is a legal no-op, as in JEDEC).
    bool legal(command c, uint32_t b) const {
        switch (c) {
        case command::ACT: return !is_open(b);
        case command::RD:
        case command::WR:
        case command::RDA:
        case command::WRA: return is_open(b);
        case command::REFAB: return m_open == 0;
        case command::REFPB: return !is_open(b);
        default: return true;
        }
    }

    void apply(command c, uint32_t b, uint32_t row = 0) {
        switch (c) {
        case command::ACT:
            if (!is_open(b)) ++m_open;
            m_row[b] = row;
            break;
        case command::PRE:
        case command::RDA:
        case command::WRA:
            if (is_open(b)) --m_open;
            m_row[b] = CLOSED;
            break;
        case command::PREA:
            for (auto& r : m_row) r = CLOSED;
            m_open = 0;
            break;
        default: break;
        }
    }

private:
    std::vector<int64_t> m_row;
    uint32_t m_open = 0;
};

} // namespace trnsim::hbm

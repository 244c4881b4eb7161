// DRAM commands and timing constraints of one HBM pseudo-channel, with their names for messages and traces.
// Plain C++ (no SystemC).
#pragma once
#include <cstdint>
#include <limits>

namespace trnsim::hbm {

// Time inside the DRAM model is counted in command-clock cycles (tCK) as a signed 64-bit integer.
using cycle_t = int64_t;
constexpr cycle_t NEVER = std::numeric_limits<cycle_t>::max() / 4;
constexpr cycle_t LONG_AGO = std::numeric_limits<cycle_t>::min() / 4;

enum class command : uint8_t {
    ACT,    // activate a row
    PRE,    // precharge one bank
    PREA,   // precharge all banks
    RD,     // read burst
    WR,     // write burst
    RDA,    // read burst with auto-precharge
    WRA,    // write burst with auto-precharge
    REFAB,  // all-bank refresh
    REFPB,  // per-bank refresh (HBM2 "REFSB", HBM3 "REFpb")
    count_
};
constexpr unsigned NUM_COMMANDS = unsigned(command::count_);

inline const char* name(command c) {
    switch (c) {
    case command::ACT: return "ACT";
    case command::PRE: return "PRE";
    case command::PREA: return "PREA";
    case command::RD: return "RD";
    case command::WR: return "WR";
    case command::RDA: return "RDA";
    case command::WRA: return "WRA";
    case command::REFAB: return "REFab";
    case command::REFPB: return "REFpb";
    default: return "?";
    }
}
inline bool is_column(command c) { return c == command::RD || c == command::WR || c == command::RDA || c == command::WRA; }
inline bool is_read(command c) { return c == command::RD || c == command::RDA; }
inline bool is_write(command c) { return c == command::WR || c == command::WRA; }

// Every rule the timing checker enforces. `bank_state` means the command is illegal in the bank's current state
// (read to a closed bank, activate of an open bank, refresh with a row open); `row_bus` is the one-command-per-cycle
// limit of the row command bus. (The column command bus has the same limit, but it is implied by tCCD_S >= 1,
// tRTW >= 1 and tWTR: two column commands never share a cycle.)
enum class constraint : uint8_t {
    none,
    bank_state,
    row_bus,
    tRCD,    // ACT -> RD, same bank
    tRCDWR,  // ACT -> WR, same bank
    tRP,     // PRE (explicit or auto) -> ACT/REF, same bank
    tRAS,    // ACT -> PRE, same bank
    tRC,     // ACT -> ACT/REF, same bank
    tRTP,    // RD -> PRE, same bank
    tWR,     // end of write data -> PRE, same bank
    tCCD_S,  // column -> column of the same kind, different bank group
    tCCD_L,  // column -> column of the same kind, same bank group
    tRRD_S,  // ACT -> ACT, different bank group
    tRRD_L,  // ACT -> ACT, same bank group
    tFAW,    // at most four ACT in any tFAW window
    tWTR_S,  // end of write data -> RD, different bank group
    tWTR_L,  // end of write data -> RD, same bank group
    tRTW,    // RD -> WR (data-bus turnaround)
    tRFC,    // REFab -> any ACT/REF
    tRFCpb,  // REFpb -> ACT/REF of that bank, and -> REFab
    tRREFD,  // REFpb <-> ACT/REFpb of another bank
    count_
};
constexpr unsigned NUM_CONSTRAINTS = unsigned(constraint::count_);

inline const char* name(constraint c) {
    static const char* const n[] = {"none",   "bank_state", "row_bus", "tRCD",   "tRCDWR", "tRP",    "tRAS",
                                    "tRC",    "tRTP",       "tWR",     "tCCD_S", "tCCD_L", "tRRD_S", "tRRD_L",
                                    "tFAW",   "tWTR_S",     "tWTR_L",  "tRTW",   "tRFC",   "tRFCpb", "tRREFD"};
    return unsigned(c) < NUM_CONSTRAINTS ? n[unsigned(c)] : "?";
}

} // namespace trnsim::hbm

// Memory specification of one HBM stack: organisation, clock and timing, all timing in command-clock cycles (tCK).
// See docs/hbm.md for the meaning of every field and configs/memspecs/*.json for the presets and their sources.
// Plain C++ (no SystemC).
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "tlm/config/config_node.h"

namespace trnsim::hbm {

struct memspec {
    std::string name;

    // Organisation of one stack.
    uint32_t channels = 0;          // independent channels per stack
    uint32_t pseudo_channels = 0;   // pseudo-channels per channel (each has its own controller core and data bus)
    uint32_t sids = 1;              // stack IDs (ranks of stacked dies) per pseudo-channel; banks per PC = sids*bg*ba
    uint32_t bank_groups = 0;       // bank groups per SID
    uint32_t banks_per_group = 0;
    uint32_t rows = 0;              // rows per bank
    uint32_t columns = 0;           // column addresses per row, one column = bus_width bits (one data beat)
    uint32_t bus_width = 0;         // data bits per pseudo-channel
    uint32_t burst_length = 0;      // beats per burst (BL)
    uint32_t data_rate = 0;         // data beats per tCK (2 = DDR to CK, 4 = HBM3-style WDQS at twice CK)
    double tck_ns = 0;              // command-clock period

    // Timing, in tCK.
    uint32_t tRCD = 0, tRCDWR = 0, tRP = 0, tRAS = 0, tRC = 0;
    uint32_t tRL = 0, tWL = 0, tWR = 0, tRTP = 0;
    uint32_t tCCD_S = 0, tCCD_L = 0, tRRD_S = 0, tRRD_L = 0, tFAW = 0;
    uint32_t tWTR_S = 0, tWTR_L = 0, tRTW = 0;
    uint32_t tRFC = 0, tREFI = 0;
    uint32_t tRFCpb = 0, tRREFD = 0;  // per-bank refresh; tRFCpb == 0 means the part has none

    // Derived quantities.
    uint32_t burst_cycles() const { return burst_length / data_rate; }
    uint32_t burst_bytes() const { return burst_length * bus_width / 8; }
    uint32_t bursts_per_row() const { return columns / burst_length; }
    uint32_t groups_per_pc() const { return sids * bank_groups; }  // SIDs act as further bank groups for timing
    uint32_t banks_per_pc() const { return sids * bank_groups * banks_per_group; }
    uint32_t pcs_per_stack() const { return channels * pseudo_channels; }
    uint64_t row_bytes() const { return uint64_t(columns) * bus_width / 8; }
    uint64_t pc_bytes() const { return uint64_t(banks_per_pc()) * rows * row_bytes(); }
    uint64_t stack_bytes() const { return pc_bytes() * pcs_per_stack(); }
    // Peak data bandwidth in GB/s (= bytes per ns).
    double pc_peak_gbps() const { return double(burst_bytes()) / (burst_cycles() * tck_ns); }
    double stack_peak_gbps() const { return pc_peak_gbps() * pcs_per_stack(); }
    bool has_per_bank_refresh() const { return tRFCpb != 0; }
    double ns(int64_t cycles) const { return double(cycles) * tck_ns; }
};

// Reads a memspec object (see configs/memspecs/hbm3.json for the layout). Timing values may be given in
// "timing_ns" (converted with ceil(t / tck_ns)) and/or "timing_ck"; if both are given the larger wins, which is the
// JEDEC "max(n nCK, t ns)" form. Every error names the full key path; consistency (tRC >= tRAS + tRP, ...) is checked.
memspec parse_memspec(const config::node& n);

// Checks an already filled memspec (the same rules parse_memspec applies); throws config::config_error naming `where`.
void validate_memspec(const memspec& m, const std::string& where);
// The same, with the key path of each timing value (e.g. "tRC" -> "timing_ns.tRC") for messages.
void validate_memspec(const memspec& m, const std::string& where, const std::map<std::string, std::string>& located);

} // namespace trnsim::hbm

// The energy model: per-operation energies (energy_config) times the activity a run's statistics report, plus
// static power over the elapsed time. Plain C++, no SystemC: a run's driver fills an `activity` from the models'
// stats after the simulation (testbench/observe/energy_activity.h), so models know nothing of energy.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "models/energy/energy_config.h"

namespace trnsim::energy {

// What one chip did in one run.
struct activity {
    std::array<double, DTYPES> macs{};  // useful MACs by input dtype
    double sbuf_read_bytes = 0, sbuf_write_bytes = 0;
    double psum_read_bytes = 0, psum_write_bytes = 0;
    double psum_accumulate_bytes = 0;   // bytes of near-memory accumulate writes (also counted in psum_write_bytes)
    double hbm_bytes = 0;               // read + written
    double dma_bytes = 0;
    double noc_bytes = 0;
    double link_bytes = 0;
    double seconds = 0;                 // elapsed (static energy accrues over it)
    unsigned cores = 0;
    double pes = 0;                     // Tensor Engine processing elements (rows x cols x cores): the area proxy
    // Adds another chip's activity (multi-chip runs: elapsed time is the longest, cores add up).
    activity& operator+=(const activity& o);
};

struct component {
    std::string name;  // "mac.bf16", "sbuf.read", "hbm", "static.cores", ...
    double joules = 0;
};

struct breakdown {
    std::vector<component> parts;  // every term, in a fixed order (zero terms included)
    double dynamic_j = 0, static_j = 0, total_j = 0;
    double seconds = 0;
    double avg_power_w() const { return seconds > 0 ? total_j / seconds : 0; }
    double joules(const std::string& name) const;  // a part by name (0 if absent)
};

// `chips` scales the per-chip static power (a multi-chip run passes the number of chips).
breakdown estimate(const energy_config& cfg, const activity& a, unsigned chips = 1);

} // namespace trnsim::energy

// Running a loaded platform to completion: time slices with a progress line on long runs, deadlock detection
// (no events left but queues unfinished: names what each waits for), and a wall-clock watchdog.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <systemc>

namespace trnsim::tb {

struct sim_options {
    double progress_after_s = 3.0;   // print progress to stderr once a run takes longer than this (0 = never)
    double wall_limit_s = 0;         // stop with a diagnostic after this much wall time (0 = no limit)
    double stall_limit_us = 0;       // stop if simulated time advances this far with no progress (0 = no limit)
    sc_core::sc_time slice = sc_core::sc_time(20, sc_core::SC_US);
};

struct sim_probe {
    std::function<bool()> finished;                  // all work done
    std::function<std::vector<std::string>()> stuck; // what is still waiting (for the deadlock report)
    std::function<uint64_t()> progress;              // a monotonically growing work counter
    std::function<std::string()> progress_text;      // "TE 1234/8192 MATMULs"
};

// Runs until probe.finished(); throws std::runtime_error on deadlock, watchdog or stall, with the report.
// Returns the wall seconds taken.
double run_to_completion(const sim_probe& probe, const sim_options& opt);

} // namespace trnsim::tb

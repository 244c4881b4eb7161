// Running a loaded platform to completion: time slices with a progress line on long runs (redrawn in place on a
// terminal, a plain line every few seconds in a log or pipe; simulated time in us as the reports print it),
// deadlock detection (no events left but queues unfinished: names what each waits for), a stall watchdog (simulated
// time goes on but no work completes) and a wall-clock watchdog (a host thread that also catches a run stuck inside
// one slice).
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>

namespace trnsim::tb {

// A run that cannot finish: deadlock, stall or wall-clock watchdog (the CLI exits 3). what() is the report.
struct sim_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct sim_options {
    double progress_after_s = 3.0;   // print progress to stderr once a run takes longer than this (0 = never)
    double progress_log_every_s = 5.0;  // not a terminal: one progress line this often (a terminal redraws one line)
    double wall_limit_s = 0;         // stop with a diagnostic after this much wall time (0 = no limit)
    double stall_limit_us = 0;       // stop if simulated time advances this far with no progress (0 = no limit)
    sc_core::sc_time slice = sc_core::sc_time(20, sc_core::SC_US);
    // Wall seconds the wall watchdog waits, after the limit, for the run loop to notice it before it calls
    // on_hang (the run is stuck inside one time slice: a zero-time livelock or a host-code loop).
    double hang_grace_s = 5.0;
    // Wall seconds a single time slice may take before the run is reported stuck (a model looping in zero
    // simulated time or in host code), with or without --wall-limit: every run ends (0 = no such watchdog).
    double hang_limit_s = 300;
    // Called from the watchdog thread with the diagnostic when the run loop does not come back; must not return
    // into the simulation. Default: print it to stderr and _Exit(3) (no output files have been written).
    std::function<void(const std::string&)> on_hang;
};

struct sim_probe {
    std::function<bool()> finished;                  // all work done
    std::function<std::vector<std::string>()> stuck; // what is still waiting (for the deadlock report)
    std::function<uint64_t()> progress;              // a monotonically growing work counter
    std::function<std::string()> progress_text;      // "TE 1234/8192 MATMULs"
};

// The latest simulated time a run may reach (2^62 ps, about 53 days): an event beyond it comes from a timing value
// out of all proportion (a bandwidth of almost nothing, an overhead of years) and is reported as an overflow before
// time could wrap around 2^64 ps.
constexpr uint64_t max_sim_ps = 1ull << 62;

// Before elaboration ends (the first sc_start): throws std::invalid_argument if the SystemC threads built so far,
// with `to_spawn` more that loading programs will spawn (neuron_core::threads_for), cannot get their stacks. Each thread's stack is a mapping plus a guard page, about 2 memory mappings a thread with
// what the run allocates around them (1.74 measured on 16 full chips), and the host allows vm.max_map_count mappings
// per process (65530 by default): 256 full trn2 chips ask for more, and SystemC failed with "E518 stack setup
// failed" or EAGAIN. `what` names the platform in the message.
void check_thread_stacks(const std::string& what, size_t to_spawn = 0);

// Runs until probe.finished(); throws sim_error on deadlock, watchdog, stall or simulated-time overflow, with the
// report. Idle simulated time (no event in whole time slices) is crossed in one step.
// Returns the wall seconds taken.
double run_to_completion(const sim_probe& probe, const sim_options& opt);

} // namespace trnsim::tb

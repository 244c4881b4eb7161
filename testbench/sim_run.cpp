#include "testbench/sim_run.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

namespace trnsim::tb {

namespace {
std::string report(const char* what, const sim_probe& p) {
    std::string s = std::string(what) + " at simulated time " + sc_core::sc_time_stamp().to_string() + ":";
    for (auto& line : p.stuck()) s += "\n  " + line;
    return s;
}
} // namespace

double run_to_completion(const sim_probe& probe, const sim_options& opt) {
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    bool printed = false;
    uint64_t last_progress = probe.progress ? probe.progress() : 0;
    sc_core::sc_time last_progress_time = sc_core::sc_time_stamp();
    while (!probe.finished()) {
        if (!sc_core::sc_pending_activity()) throw std::runtime_error(report("deadlock: no events left", probe));
        sc_core::sc_start(opt.slice);
        double wall = std::chrono::duration<double>(clock::now() - t0).count();
        if (opt.wall_limit_s > 0 && wall > opt.wall_limit_s)
            throw std::runtime_error(report(("watchdog: wall-clock limit of " + std::to_string(opt.wall_limit_s) +
                                             " s exceeded").c_str(), probe));
        if (probe.progress) {
            uint64_t p = probe.progress();
            if (p != last_progress) {
                last_progress = p;
                last_progress_time = sc_core::sc_time_stamp();
            } else if (opt.stall_limit_us > 0 &&
                       (sc_core::sc_time_stamp() - last_progress_time).to_seconds() * 1e6 > opt.stall_limit_us) {
                throw std::runtime_error(report("watchdog: no progress", probe));
            }
        }
        if (opt.progress_after_s > 0 && wall > opt.progress_after_s) {
            std::fprintf(stderr, "\r[%6.1f s wall] simulated %s  %s   ", wall, sc_core::sc_time_stamp().to_string().c_str(),
                         probe.progress_text ? probe.progress_text().c_str() : "");
            printed = true;
        }
    }
    if (printed) std::fprintf(stderr, "\n");
    return std::chrono::duration<double>(clock::now() - t0).count();
}

} // namespace trnsim::tb

// A run stuck inside one time slice: a process that re-triggers itself in zero simulated time forever (a delta-cycle
// livelock), so sc_start never returns to the run loop. The wall watchdog's thread must notice, print its
// diagnostic and exit with status 3 (run by the robustness/watchdog_hang_in_slice test).
#include <cstdlib>

#include <systemc>

#include "testbench/sim_run.h"

namespace {
struct livelock : sc_core::sc_module {
    sc_core::sc_event ev;
    uint64_t spins = 0;
    explicit livelock(sc_core::sc_module_name n) : sc_module(n) {
        SC_HAS_PROCESS(livelock);
        SC_THREAD(start);
        SC_METHOD(spin);
        sensitive << ev;
        dont_initialize();
    }
    void start() {
        sc_core::wait(1, sc_core::SC_US);  // an ordinary first microsecond, then the livelock
        ev.notify(sc_core::SC_ZERO_TIME);
    }
    void spin() {
        ++spins;
        ev.notify(sc_core::SC_ZERO_TIME);
    }
};
} // namespace

int sc_main(int, char**) {
    livelock l("livelock");
    trnsim::tb::sim_probe probe;
    probe.finished = [] { return false; };
    probe.stuck = [] { return std::vector<std::string>{}; };
    trnsim::tb::sim_options opt;
    opt.progress_after_s = 0;
    opt.wall_limit_s = 0.3;
    opt.hang_grace_s = 0.3;
    trnsim::tb::run_to_completion(probe, opt);
    return 0;  // not reached
}

int main(int argc, char** argv) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    return sc_core::sc_elab_and_sim(argc, argv);
}

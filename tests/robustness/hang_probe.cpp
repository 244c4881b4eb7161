// The run loop's watchdogs and time steps on models made for them (tests robustness/watchdog_*):
//   hang_probe wall      a run stuck inside one time slice (a process that re-triggers itself in zero simulated
//                        time forever, so sc_start never returns): with --wall-limit 0.3 the watchdog thread must
//                        notice after its grace, print its diagnostic and exit with status 3;
//   hang_probe hang      the same livelock without a wall limit: the hang limit (0.5 s here) must end it, status 3;
//   hang_probe overflow  an event 2^63 ps away (a timing value out of all proportion): a simulated-time overflow
//                        error, not a run that never ends;
//   hang_probe far       one event 2^61 ps away (about 27 days), then done: idle slices are crossed at once, so the
//                        run ends at once and prints the time (slice by slice it would take hours).
#include <cstdlib>
#include <cstring>
#include <iostream>

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

struct far_event : sc_core::sc_module {
    bool done = false;
    uint64_t ps;
    far_event(sc_core::sc_module_name n, uint64_t at_ps) : sc_module(n), ps(at_ps) {
        SC_HAS_PROCESS(far_event);
        SC_THREAD(run);
    }
    void run() {
        sc_core::wait(sc_core::sc_time::from_value(ps));
        done = true;
    }
};
} // namespace

int sc_main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "wall";
    trnsim::tb::sim_options opt;
    opt.progress_after_s = 0;
    trnsim::tb::sim_probe probe;
    probe.stuck = [] { return std::vector<std::string>{"(the probe's model)"}; };
    if (mode == "wall" || mode == "hang") {
        static livelock l("livelock");
        probe.finished = [] { return false; };
        if (mode == "wall") {
            opt.wall_limit_s = 0.3;
            opt.hang_grace_s = 0.3;
        } else {
            opt.hang_limit_s = 0.5;
        }
    } else if (mode == "overflow" || mode == "far") {
        static far_event f("far", mode == "far" ? 1ull << 61 : 1ull << 63);
        probe.finished = [] { return f.done; };
    } else {
        std::cerr << "hang_probe: unknown mode " << mode << "\n";
        return 2;
    }
    try {
        trnsim::tb::run_to_completion(probe, opt);
    } catch (const trnsim::tb::sim_error& e) {
        std::cout << "simulation error: " << e.what() << "\n";
        return 3;
    }
    std::cout << "done at " << sc_core::sc_time_stamp().value() << " ps\n";
    return 0;
}

int main(int argc, char** argv) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    return sc_core::sc_elab_and_sim(argc, argv);
}

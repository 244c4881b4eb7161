#include "testbench/sim_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include "tlm/time.h"
#include "tlm/time_text.h"

namespace trnsim::tb {

namespace {
// "12.345 us" (or "0 us"): one unit for every time in the reports, easy to compare.
std::string us(const sc_core::sc_time& t) { return tlmx::time_text(t.to_seconds() * 1e9); }

// The progress line of a long run on stderr. On a terminal it is redrawn in place (carriage return) at most a few
// times a second; in a log or a pipe a plain line is written every `log_every_s` seconds (no carriage returns).
class progress_line {
public:
    progress_line(double after_s, double log_every_s)
        : m_after(after_s), m_every(log_every_s), m_tty(isatty(fileno(stderr)) != 0) {}
    ~progress_line() {
        if (m_drawn) std::fprintf(stderr, "\n");
    }
    void update(double wall, const sim_probe& p) {
        if (m_after <= 0 || wall <= m_after || wall < m_next) return;
        m_next = wall + (m_tty ? 0.2 : m_every);
        const std::string what = p.progress_text ? p.progress_text() : "";
        const std::string now = us(sc_core::sc_time_stamp());
        if (m_tty) std::fprintf(stderr, "\r[%6.1f s wall] simulated %s  %s   ", wall, now.c_str(), what.c_str());
        else std::fprintf(stderr, "[%.1f s wall] simulated %s  %s\n", wall, now.c_str(), what.c_str());
        std::fflush(stderr);
        m_drawn = m_tty;
    }

private:
    double m_after, m_every, m_next = 0;
    bool m_tty, m_drawn = false;
};

std::string report(const std::string& what, const sim_probe& p) {
    std::string s = what + " at simulated time " + us(sc_core::sc_time_stamp()) + ":";
    for (auto& line : p.stuck()) s += "\n  " + line;
    return s;
}

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return buf;
}

// A host thread with two watches. The wall limit (--wall-limit) raises a flag the run loop polls between time
// slices; if the loop does not notice within the grace period (the kernel is stuck inside a slice), the thread
// calls on_hang. The hang limit calls on_hang when no time slice has returned for that long, limit or not.
class wall_watchdog {
public:
    wall_watchdog(double limit_s, double grace_s, double hang_s, std::function<void(const std::string&)> on_hang)
        : m_limit(limit_s), m_grace(grace_s), m_hang(hang_s), m_on_hang(std::move(on_hang)) {
        if (m_limit > 0 || m_hang > 0) m_thread = std::thread([this] { watch(); });
    }
    ~wall_watchdog() {
        {
            std::lock_guard<std::mutex> l(m_mutex);
            m_done = true;
        }
        m_cv.notify_all();
        if (m_thread.joinable()) m_thread.join();
    }
    bool expired() const { return m_expired.load(); }
    // Noticed by the run loop: it reports and unwinds itself.
    void acknowledge() {
        {
            std::lock_guard<std::mutex> l(m_mutex);
            m_acknowledged = true;
        }
        m_cv.notify_all();
    }
    // A slice has returned; what the run loop last saw, for the diagnostic printed if it never comes back.
    void seen(uint64_t sim_ps, uint64_t progress) {
        m_sim_ps.store(sim_ps);
        m_progress.store(progress);
        ++m_beats;
    }

private:
    void watch() {
        using clock = std::chrono::steady_clock;
        using std::chrono::duration;
        std::unique_lock<std::mutex> l(m_mutex);
        const auto start = clock::now();
        auto last_beat = start, expired_at = start;
        uint64_t beats = m_beats.load();
        while (!m_cv.wait_for(l, duration<double>(0.05), [this] { return m_done; })) {
            const auto now = clock::now();
            if (const uint64_t b = m_beats.load(); b != beats) {
                beats = b;
                last_beat = now;
            }
            if (m_limit > 0 && !m_expired && duration<double>(now - start).count() >= m_limit) {
                m_expired = true;
                expired_at = now;
            }
            if (m_expired && !m_acknowledged && duration<double>(now - expired_at).count() >= m_grace) {
                hang(l, "watchdog: wall-clock limit of " + seconds(m_limit) +
                            " s exceeded and the simulation has not returned from its time slice for a further " +
                            seconds(m_grace) + " s (a model loops in zero simulated time or in host code)");
                return;
            }
            if (m_hang > 0 && !m_acknowledged && duration<double>(now - last_beat).count() >= m_hang) {
                hang(l, "watchdog: the simulation has not returned from its time slice for " + seconds(m_hang) +
                            " s of wall time (a model loops in zero simulated time or in host code)");
                return;
            }
        }
    }
    void hang(std::unique_lock<std::mutex>& l, const std::string& what) {
        const std::string msg = what + "; last seen at simulated time " +
                                us(sc_core::sc_time(double(m_sim_ps.load()), sc_core::SC_PS)) + ", progress count " +
                                std::to_string(m_progress.load());
        if (m_on_hang) {
            l.unlock();
            m_on_hang(msg);
            return;
        }
        std::fprintf(stderr, "trnsim: simulation error: %s\n", msg.c_str());
        std::fflush(stderr);
        std::_Exit(3);
    }
    double m_limit, m_grace, m_hang;
    std::function<void(const std::string&)> m_on_hang;
    std::atomic<bool> m_expired{false};
    std::atomic<uint64_t> m_sim_ps{0}, m_progress{0}, m_beats{0};
    bool m_done = false, m_acknowledged = false;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::thread m_thread;
};
} // namespace

namespace {
size_t count_threads(const std::vector<sc_core::sc_object*>& objs) {
    size_t n = 0;
    for (const auto* o : objs) {
        const std::string kind = o->kind();
        if (kind == "sc_thread_process" || kind == "sc_cthread_process") ++n;
        n += count_threads(o->get_child_objects());
    }
    return n;
}
size_t file_lines(const char* path) {
    FILE* f = std::fopen(path, "r");
    if (!f) return 0;
    size_t n = 0;
    for (int c; (c = std::fgetc(f)) != EOF;) n += c == '\n';
    std::fclose(f);
    return n;
}
} // namespace

void check_thread_stacks(const std::string& what, size_t to_spawn) {
    uint64_t limit = 0;
    if (FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
        unsigned long long v = 0;
        if (std::fscanf(f, "%llu", &v) == 1) limit = v;
        std::fclose(f);
    }
    if (limit == 0) return;  // not Linux, or not readable: nothing to estimate against
    const size_t threads = count_threads(sc_core::sc_get_top_level_objects()) + to_spawn;
    const size_t in_use = file_lines("/proc/self/maps");
    // Measured: at most 8807 mappings for the 4592 threads of a collective on 16 full trn2 chips (1.74 a thread
    // beyond the 820 before elaboration: the stack, its guard page and what the run allocates around them);
    // estimated as 2 a thread. 64 chips (18368 threads) run at the default 65530, 256 do not.
    const uint64_t need = 2 * uint64_t(threads) + in_use;
    if (need <= limit) return;
    throw std::invalid_argument(what + " has " + std::to_string(threads) +
                                " SystemC threads: their stacks need about " + std::to_string(2 * threads) +
                                " memory mappings beside the " + std::to_string(in_use) + " in use, over the host's " +
                                "vm.max_map_count of " + std::to_string(limit) + " (fewer full chips: chips.full, or the "
                                "light model; or raise the limit: sysctl -w vm.max_map_count=" +
                                std::to_string(((need * 5 / 4) / 65536 + 1) * 65536) + ")");
}

double run_to_completion(const sim_probe& probe, const sim_options& opt) {
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    progress_line progress(opt.progress_after_s, opt.progress_log_every_s);
    uint64_t last_progress = probe.progress ? probe.progress() : 0;
    sc_core::sc_time last_progress_time = sc_core::sc_time_stamp();
    // The stall limit is checked at slice ends: slices no longer than half of it keep the check timely.
    sc_core::sc_time slice = opt.slice;
    if (opt.stall_limit_us > 0) slice = std::min(slice, sc_core::sc_time(opt.stall_limit_us / 2, sc_core::SC_US));
    wall_watchdog dog(opt.wall_limit_s, opt.hang_grace_s, opt.hang_limit_s, opt.on_hang);
    bool started = sc_core::sc_get_status() != sc_core::SC_ELABORATION;  // no activity is known before the first start
    while (!probe.finished()) {
        if (started && !sc_core::sc_pending_activity()) throw sim_error(report("deadlock: no events left", probe));
        // With events inside the slice, stop after the last one if nothing follows (time stays at it, for the
        // deadlock report); with none, advance to the slice's end (exiting on starvation would not advance time).
        const sc_core::sc_time next = started ? sc_core::sc_time_to_pending_activity() : sc_core::SC_ZERO_TIME;
        if (started && tlmx::to_ps(next) >= max_sim_ps - std::min(max_sim_ps, tlmx::now_ps()))
            throw sim_error(report("simulated time overflow: the next event is " + us(next) +
                                       " away, beyond 2^62 ps (about 53 days) of simulated time; a timing value is "
                                       "out of proportion (a bandwidth of almost nothing, a huge latency or overhead "
                                       "in the config)",
                                   probe));
        if (started && next <= slice) {
            sc_core::sc_start(slice, sc_core::SC_EXIT_ON_STARVATION);
        } else if (started && opt.stall_limit_us <= 0 && next > slice + slice) {
            // Whole slices with no event in them, crossed at once (the same as one slice after another: nothing
            // happens in between); the slice holding the event runs as usual.
            const uint64_t n = (tlmx::to_ps(next) - 1) / tlmx::to_ps(slice);
            sc_core::sc_start(tlmx::from_ps(n * tlmx::to_ps(slice)));
        } else {
            sc_core::sc_start(slice);
        }
        started = true;
        double wall = std::chrono::duration<double>(clock::now() - t0).count();
        uint64_t p = probe.progress ? probe.progress() : 0;
        dog.seen(uint64_t(sc_core::sc_time_stamp().to_seconds() * 1e12), p);
        if (dog.expired() || (opt.wall_limit_s > 0 && wall > opt.wall_limit_s)) {
            dog.acknowledge();
            throw sim_error(report("watchdog: wall-clock limit of " + seconds(opt.wall_limit_s) +
                                       " s exceeded (--wall-limit)", probe));
        }
        if (probe.progress) {
            if (p != last_progress) {
                last_progress = p;
                last_progress_time = sc_core::sc_time_stamp();
            } else if (opt.stall_limit_us > 0 &&
                       (sc_core::sc_time_stamp() - last_progress_time).to_seconds() * 1e6 >= opt.stall_limit_us) {
                throw sim_error(report("watchdog: no progress for " + seconds(opt.stall_limit_us) +
                                           " us of simulated time (--stall-limit-us; last progress at " +
                                           us(last_progress_time) + ")",
                                       probe));
            }
        }
        progress.update(wall, probe);
    }
    return std::chrono::duration<double>(clock::now() - t0).count();
}

} // namespace trnsim::tb

// The Tensor Engine RTL back end (te_backend_rtl: sc_clock + Verilated SystemC model + transactor) against the
// golden PE arithmetic and te_timing::schedule(): random jobs are submitted from a SystemC thread, and each job's
// out, cycle stamps and on_done time are checked.
//   te_backend_rtl_test --size 16x16 [--mode b2b|gaps] [--seed S] [--jobs N] [--wave file.fst]
#include <chrono>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <systemc>

#include "models/tensor_engine/te_backend_rtl.h"
#include "models/tensor_engine/te_timing.h"
#include "models/tensor_engine/me_rtl_adapter.h"
#include "testbench/verification/cosim/me_golden.h"

using namespace trnsim;
using namespace trnsim::cosim;

namespace {

struct options {
    uint32_t rows = 16, cols = 16, jobs = 100;
    uint64_t seed = std::random_device{}();
    std::string mode = "b2b", wave;
};

class driver : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(driver);
    driver(const sc_core::sc_module_name& name, const options& opt, const te::te_config& cfg,
           te::te_backend_if& be)
        : sc_core::sc_module(name), m_opt(opt), m_cfg(cfg), m_be(be), m_timing(cfg), m_stim(opt.seed),
          m_ghz(cfg.clock_ghz) {
        const std::vector<dtype> types = rtl::me_rtl_build_params().dtypes;
        uint64_t ready = 0;
        te::te_timing t(cfg);
        for (uint32_t i = 0; i < opt.jobs; i++) {
            tile x = m_stim.random_tile(types, cfg.rows, cfg.cols, cfg.n_max, cfg.min_ii, cfg.ls_rows_per_cycle);
            if (opt.mode == "gaps" && i > 0 && !m_stim.chance(0.3))
                ready += m_stim.uniform(0, 3 * uint32_t(t.weight_load_cycles(x.type, x.k) +
                                                        t.stream_cycles(x.type, x.n) + t.drain_cycles()));
            x.ready = ready;
            m_tiles.push_back(std::move(x));
        }
        SC_THREAD(run);
    }

    uint64_t errors = 0, completed = 0;

private:
    template <class... A> void fail(const char* fmt, A... args) {
        if (++errors <= 20) {
            std::printf("%s: ", sc_core::sc_time_stamp().to_string().c_str());
            std::printf(fmt, args...);
            std::printf("\n");
        }
    }

    void run() {
        for (size_t i = 0; i < m_tiles.size(); i++) {
            const tile& x = m_tiles[i];
            const sc_core::sc_time at = time_of(x.ready);
            if (sc_core::sc_time_stamp() < at) wait(at - sc_core::sc_time_stamp());
            // operands ready from the first cycle that starts at or after now
            const uint64_t ready = cycle_at_or_after(sc_core::sc_time_stamp());
            m_expect.push_back(m_timing.schedule(x.type, x.k, x.n, ready));
            te::te_job job;
            job.id = i;
            job.in_type = x.type;
            job.k = x.k;
            job.m = x.m;
            job.n = x.n;
            job.stationary = pack_operand(x.s, x.type);
            job.moving = pack_operand(x.x, x.type);
            job.on_done = [this](te::te_job& j) { check(j); };
            m_be.submit(std::move(job));
            // submit() returns in the cycle the RTL accepts the command, as the C++ back end does
            if (sc_core::sc_time_stamp() != time_of(m_expect.back().load_start))
                fail("job %zu: submit() returned at %s, expected load_start %" PRIu64, i,
                     sc_core::sc_time_stamp().to_string().c_str(), m_expect.back().load_start);
        }
    }

    // The Tensor Engine's cycle times (te_clock of the C++ back end).
    uint64_t cycle_at_or_after(const sc_core::sc_time& t) const {
        return uint64_t(std::ceil(t.to_seconds() * m_ghz * 1e9 - 1e-6));
    }
    sc_core::sc_time time_of(uint64_t c) const {
        return sc_core::sc_time(std::round(double(c) * 1000.0 / m_ghz), sc_core::SC_PS);
    }

    void check(te::te_job& j) {
        const tile& x = m_tiles[j.id];
        const te::te_schedule& e = m_expect[j.id];
        if (std::getenv("TE_RTL_DEBUG"))
            std::printf("job %" PRIu64 " k=%u n=%u ready %" PRIu64 ": %" PRIu64 "/%" PRIu64 "/%" PRIu64
                        " schedule %" PRIu64 "/%" PRIu64 "/%" PRIu64 "\n", j.id, x.k, x.n, x.ready, j.load_start,
                        j.stream_start, j.done, e.load_start, e.stream_start, e.done);
        if (j.id != completed) fail("job %" PRIu64 " completed out of order", j.id);
        completed++;
        for (uint32_t c = 0; c < x.m; c++)
            for (uint32_t n = 0; n < x.n; n++) {
                const uint32_t got = f2u(j.out[size_t(c) * x.n + n]), want = x.golden[size_t(c) * x.n + n];
                if (got != want)
                    fail("job %" PRIu64 " (%s k=%u m=%u n=%u) Y[%u][%u] = %08x, expected %08x", j.id,
                         type_name(x.type), x.k, x.m, x.n, c, n, got, want);
            }
        if (j.load_start != e.load_start || j.stream_start != e.stream_start || j.done != e.done)
            fail("job %" PRIu64 " (k=%u n=%u): load_start/stream_start/done = %" PRIu64 "/%" PRIu64 "/%" PRIu64
                 ", schedule %" PRIu64 "/%" PRIu64 "/%" PRIu64, j.id, x.k, x.n, j.load_start, j.stream_start,
                 j.done, e.load_start, e.stream_start, e.done);
        if (sc_core::sc_time_stamp() != time_of(j.done))
            fail("job %" PRIu64 ": on_done at %s, expected cycle %" PRIu64, j.id,
                 sc_core::sc_time_stamp().to_string().c_str(), j.done);
        if (completed == m_tiles.size() || errors >= 20) sc_core::sc_stop();
    }

    const options& m_opt;
    const te::te_config& m_cfg;
    te::te_backend_if& m_be;
    te::te_timing m_timing;
    stimulus m_stim;
    double m_ghz;
    std::vector<tile> m_tiles;
    std::vector<te::te_schedule> m_expect;
};

} // namespace

int sc_main(int argc, char** argv) {
    options opt;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--size" && i + 1 < argc) {
            if (std::sscanf(argv[++i], "%ux%u", &opt.rows, &opt.cols) != 2) return 2;
        } else if (a == "--seed" && i + 1 < argc) opt.seed = std::strtoull(argv[++i], nullptr, 0);
        else if (a == "--jobs" && i + 1 < argc) opt.jobs = uint32_t(std::strtoul(argv[++i], nullptr, 0));
        else if (a == "--mode" && i + 1 < argc) opt.mode = argv[++i];
        else if (a == "--wave" && i + 1 < argc) opt.wave = argv[++i];
        else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
    }
    // Any SystemC warning fails the test.
    sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DISPLAY | sc_core::SC_THROW);

    const rtl::me_rtl_build& b = rtl::me_rtl_build_params();
    te::te_config cfg;
    cfg.rows = opt.rows;
    cfg.cols = opt.cols;
    cfg.ls_rows_per_cycle = b.ls_rows_per_cycle;
    cfg.min_ii = b.min_ii;
    cfg.n_max = b.n_max;
    cfg.pipeline_latency = b.pipeline_latency;
    cfg.impl = te::te_impl::rtl;
    cfg.wave_file = opt.wave;
    std::printf("te_backend_rtl_test %ux%u: mode %s, seed %" PRIu64 ", %u jobs (RTL sizes built: %s)\n", cfg.rows,
                cfg.cols, opt.mode.c_str(), opt.seed, opt.jobs, rtl::me_rtl_sizes_string().c_str());

    te::te_backend_rtl be("te_rtl", cfg);
    driver drv("driver", opt, cfg, be);
    const auto t0 = std::chrono::steady_clock::now();
    sc_core::sc_start();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (drv.completed != opt.jobs && drv.errors == 0) {
        std::printf("only %" PRIu64 " of %u jobs completed\n", drv.completed, opt.jobs);
        drv.errors++;
    }
    std::printf("te_backend_rtl_test: %s: %" PRIu64 " jobs, %" PRIu64 " cycles in %.2f s (%.0f cycles/s), %" PRIu64
                " errors\n", drv.errors ? "FAILED" : "passed", drv.completed, be.cycles(), secs,
                double(be.cycles()) / secs, drv.errors);
    return drv.errors ? 1 : 0;
}

// Controller cores and dram_system: latencies, refresh rate, bandwidth of sequential and closed-page random reads
// against the analytic figures of docs/hbm.md, schedulers, write drain.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>

#include "models/hbm/dram/controller/pc_controller.h"
#include "models/hbm/dram/dram_system.h"
#include "testbench/tools/hbm_trace.h"
#include "tests/models/hbm_test_support.h"

using namespace trnsim;
using namespace trnsim::hbm;

namespace {

struct recorder final : completion_listener {
    std::map<uint64_t, cycle_t> done;
    void burst_done(uint64_t tag, bool, cycle_t, cycle_t at) override { done[tag] = at; }
};

controller_config no_refresh() {
    controller_config c;
    c.refresh = refresh_kind::none;
    return c;
}

controller_config open_page() {
    controller_config c = no_refresh();
    c.page_policy = page_policy_kind::open;
    return c;
}

// Closed-page random-read bound (docs/hbm.md): every burst needs its own ACT, so the data bus carries one burst per
// max(burst, tRRD_S, tFAW / 4, tRC / banks) cycles.
double closed_random_bound(const memspec& m) {
    double per_act = std::max({double(m.burst_cycles()), double(m.tRRD_S), m.tFAW / 4.0, double(m.tRC) / m.banks_per_pc()});
    return m.burst_cycles() / per_act;
}

} // namespace

TEST_CASE("idle read and write latency: ACT, then the column command after tRCD, data after tRL/tWL", "[hbm][controller]") {
    memspec m = test::small_spec();
    pc_controller c(m, open_page(), 0, 0);
    recorder r;
    c.set_listener(&r);
    std::vector<command_record> cmds;
    c.set_observer([&](const command_record& x) { cmds.push_back(x); });
    c.enqueue(1, false, 3, 7, 0, 0);
    c.advance(NEVER);
    REQUIRE(cmds.size() == 2);
    CHECK(cmds[0].cmd == command::ACT);
    CHECK(cmds[0].cycle == 0);
    CHECK(cmds[1].cmd == command::RD);
    CHECK(cmds[1].cycle == m.tRCD);
    CHECK(r.done[1] == m.tRCD + m.tRL + m.burst_cycles());

    // A second read to the open row is a hit: no ACT, column command right away.
    c.enqueue(2, false, 3, 7, 1, 100);
    c.advance(NEVER);
    CHECK(cmds.back().cmd == command::RD);
    CHECK(cmds.back().cycle == 100);
    CHECK(r.done[2] == 100 + m.tRL + m.burst_cycles());

    // A write to another bank of the same group.
    c.enqueue(3, true, 2, 5, 0, 200);
    c.advance(NEVER);
    CHECK(r.done[3] == 200 + m.tRCDWR + m.tWL + m.burst_cycles());
    CHECK(c.counters().row_hits == 1);
    CHECK(c.counters().row_misses == 2);
}

TEST_CASE("open page: a row conflict costs PRE + ACT", "[hbm][controller]") {
    memspec m = test::small_spec();
    pc_controller c(m, open_page(), 0, 0);
    recorder r;
    c.set_listener(&r);
    c.enqueue(1, false, 0, 1, 0, 0);
    c.enqueue(2, false, 0, 2, 0, 0);
    c.advance(NEVER);
    // RD(row 1) at tRCD; PRE at tRAS (25 > tRCD + tRTP); ACT(row 2) at max(PRE + tRP, tRC); RD after tRCD.
    cycle_t act2 = std::max<cycle_t>(m.tRAS + m.tRP, m.tRC);
    CHECK(r.done[2] == act2 + m.tRCD + m.tRL + m.burst_cycles());
    CHECK(c.counters().row_conflicts == 1);
}

TEST_CASE("page policies: closed auto-precharges, closed_adaptive keeps a row open for queued hits", "[hbm][controller]") {
    memspec m = test::small_spec();
    auto run = [&](page_policy_kind k) {
        controller_config cfg = no_refresh();
        cfg.page_policy = k;
        pc_controller c(m, cfg, 0, 0);
        c.enqueue(1, false, 0, 1, 0, 0);
        c.enqueue(2, false, 0, 1, 1, 0);
        c.enqueue(3, false, 0, 2, 0, 0);
        c.advance(NEVER);
        return c.counters();
    };
    auto open = run(page_policy_kind::open), closed = run(page_policy_kind::closed),
         adaptive = run(page_policy_kind::closed_adaptive);
    CHECK(open.row_hits == 1);
    CHECK(open.row_conflicts == 1);
    CHECK(open.commands[unsigned(command::PRE)] == 1);
    CHECK(closed.row_hits == 0);
    CHECK(closed.commands[unsigned(command::RDA)] == 3);
    CHECK(closed.commands[unsigned(command::ACT)] == 3);
    CHECK(adaptive.row_hits == 1);
    CHECK(adaptive.row_conflicts == 0);
    CHECK(adaptive.commands[unsigned(command::RD)] == 1);
    CHECK(adaptive.commands[unsigned(command::RDA)] == 2);
    CHECK(adaptive.commands[unsigned(command::PRE)] == 0);
}

TEST_CASE("all-bank refresh occurs once per tREFI on average", "[hbm][refresh]") {
    auto cfg = test::config_for(test::preset("hbm3"));
    cfg.ctrl.refresh = refresh_kind::all_bank;
    dram_system sys(cfg);
    // Random traffic for a while, then idle; refreshes are caught up to the end.
    auto reqs = tb::make_hbm_pattern({tb::hbm_pattern_kind::random, 50000, 64, 0, 0, 1, 0, 3}, sys.capacity());
    cycle_t t = 0;
    for (size_t i = 0; i < reqs.size(); ++i) sys.submit(i, false, reqs[i].addr, reqs[i].size, t += 3);
    const cycle_t end = 200 * cycle_t(cfg.spec.tREFI);
    sys.finish(end);
    uint64_t total = 0;
    for (uint32_t p = 0; p < sys.num_pcs(); ++p) {
        // pseudo-channel p's first refresh is due at offset + tREFI, offset = p * tREFI / n
        cycle_t offset = cycle_t(uint64_t(p) * cfg.spec.tREFI / sys.num_pcs());
        uint64_t expected = uint64_t((end - offset) / cfg.spec.tREFI);
        uint64_t got = sys.pc(p).counters().commands[unsigned(command::REFAB)];
        CHECK(got + 1 >= expected);
        CHECK(got <= expected);
        total += got;
    }
    CHECK(double(total) / sys.num_pcs() == Approx(200.0).margin(1.0));
}

TEST_CASE("per-bank refresh refreshes every bank once per tREFI", "[hbm][refresh]") {
    auto cfg = test::config_for(test::preset("hbm3"));
    REQUIRE(cfg.ctrl.refresh == refresh_kind::per_bank);
    dram_system sys(cfg);
    std::vector<uint64_t> per_bank(cfg.spec.banks_per_pc(), 0);
    std::vector<cycle_t> ref_times;
    sys.set_observer([&](const command_record& r) {
        if (r.cmd == command::REFPB && r.pc == 5) {
            ++per_bank[r.bank];
            ref_times.push_back(r.cycle);
        }
    });
    auto reqs = tb::make_hbm_pattern({tb::hbm_pattern_kind::sequential, 100000, 64, 0, 0, 1, 0, 1}, sys.capacity());
    for (size_t i = 0; i < reqs.size(); ++i) sys.submit(i, false, reqs[i].addr, reqs[i].size, cycle_t(i / 8));
    const uint64_t rounds = 50;
    sys.finish(cycle_t(rounds * cfg.spec.tREFI));
    auto [lo, hi] = std::minmax_element(per_bank.begin(), per_bank.end());
    CHECK(*lo >= rounds - 1);
    CHECK(*hi <= rounds);
    // Average interval tREFI / banks.
    double avg = double(ref_times.back() - ref_times.front()) / double(ref_times.size() - 1);
    CHECK(avg == Approx(double(cfg.spec.tREFI) / cfg.spec.banks_per_pc()).epsilon(0.01));
}

TEST_CASE("sequential reads reach more than 90% of peak (HBM3, default controller)", "[hbm][bandwidth]") {
    auto cfg = test::config_for(test::preset("hbm3"));
    auto reqs = tb::make_hbm_pattern({tb::hbm_pattern_kind::sequential, 100000, 64, 0, 0, 1, 0, 1},
                                     cfg.spec.stack_bytes());
    auto r = tb::run_hbm_requests(cfg, reqs);
    INFO("efficiency " << r.efficiency_pct << " %, row hits " << r.row_hit_rate_pct << " %");
    CHECK(r.efficiency_pct > 90.0);
    CHECK(r.row_hit_rate_pct > 90.0);
}

TEST_CASE("sequential reads on HBM2E and HBM3E also exceed 90%", "[hbm][bandwidth]") {
    for (const char* p : {"hbm2e", "hbm3e"}) {
        auto cfg = test::config_for(test::preset(p));
        // At 2.4 GHz a row switch (tRP + tRCD + 3 tRRD_S = 98 tCK) needs more look-ahead than 32 bursts (64 tCK).
        if (std::string(p) == "hbm3e") cfg.ctrl.read_queue_depth = 64;
        auto reqs = tb::make_hbm_pattern({tb::hbm_pattern_kind::sequential, 60000, 64, 0, 0, 1, 0, 1},
                                         cfg.spec.stack_bytes());
        auto r = tb::run_hbm_requests(cfg, reqs);
        INFO(p << ": efficiency " << r.efficiency_pct << " %");
        CHECK(r.efficiency_pct > 90.0);
    }
}

TEST_CASE("closed-page random reads match the analytic activate-rate bound", "[hbm][bandwidth]") {
    for (const char* p : {"hbm3", "hbm2e", "hbm3e"}) {
        auto cfg = test::config_for(test::preset(p));
        cfg.ctrl.page_policy = page_policy_kind::closed;
        cfg.ctrl.refresh = refresh_kind::none;
        auto reqs = tb::make_hbm_pattern({tb::hbm_pattern_kind::random, 60000, 32, 0, 0, 1, 0, 11},
                                         cfg.spec.stack_bytes());
        auto r = tb::run_hbm_requests(cfg, reqs);
        double bound = 100.0 * closed_random_bound(cfg.spec);
        INFO(p << ": measured " << r.efficiency_pct << " %, bound " << bound << " %");
        CHECK(r.efficiency_pct <= bound * 1.001);
        CHECK(r.efficiency_pct >= bound * 0.95);
        CHECK(r.row_hit_rate_pct == 0.0);
    }
}

TEST_CASE("FR-FCFS serves row hits first and FCFS does not reorder", "[hbm][scheduler]") {
    // Two streams interleaved in one bank: rows 1 and 2 alternate, columns ascending.
    memspec m = test::small_spec();
    auto run = [&](scheduler_kind k) {
        controller_config cfg = open_page();
        cfg.scheduler = k;
        pc_controller c(m, cfg, 0, 0);
        recorder r;
        c.set_listener(&r);
        for (uint32_t i = 0; i < 32; ++i) c.enqueue(i, false, 0, 1 + (i & 1), i / 2, 0);
        c.advance(NEVER);
        return std::make_pair(c.counters().row_hits, r.done[31]);
    };
    auto [fr_hits, fr_end] = run(scheduler_kind::fr_fcfs);
    auto [fc_hits, fc_end] = run(scheduler_kind::fcfs);
    CHECK(fc_hits == 0);
    CHECK(fr_hits >= 28);
    CHECK(fr_end < fc_end / 4);
}

TEST_CASE("write drain: writes are served in batches between the watermarks", "[hbm][controller]") {
    auto cfg = test::config_for(test::preset("hbm3"));
    std::vector<bool> dirs;  // column commands of pseudo-channel 0 in order (true = write)
    dram_system sys(cfg);
    sys.set_observer([&](const command_record& r) {
        if (r.pc == 0 && is_column(r.cmd)) dirs.push_back(is_write(r.cmd));
    });
    auto reqs = tb::make_hbm_pattern({tb::hbm_pattern_kind::random, 60000, 32, 0, 0, 2, 1, 5}, sys.capacity());
    for (size_t i = 0; i < reqs.size(); ++i) sys.submit(i, reqs[i].write, reqs[i].addr, reqs[i].size, 0);
    sys.finish();
    size_t runs = 0, writes = 0;
    for (size_t i = 0; i < dirs.size(); ++i) {
        writes += dirs[i];
        if (dirs[i] && (i == 0 || !dirs[i - 1])) ++runs;
    }
    REQUIRE(runs > 0);
    double avg_run = double(writes) / double(runs);
    INFO("writes " << writes << " in " << runs << " runs");
    CHECK(avg_run >= cfg.ctrl.write_high_watermark - cfg.ctrl.write_low_watermark - 1);
}

TEST_CASE("every burst of every transaction completes once", "[hbm][controller]") {
    auto cfg = test::config_for(test::preset("hbm2e"));
    cfg.stacks = 2;
    dram_system sys(cfg);
    struct sink_t final : dram_system::sink {
        std::map<uint64_t, int> done, acc;
        void accepted(uint64_t tag, cycle_t) override { ++acc[tag]; }
        void completed(uint64_t tag, cycle_t) override { ++done[tag]; }
    } s;
    sys.set_sink(&s);
    std::mt19937_64 rng(9);
    for (uint64_t i = 0; i < 5000; ++i) {
        uint64_t size = 1 + rng() % 4096, addr = rng() % (sys.capacity() - size);
        sys.submit(i, rng() & 1, addr, size, cycle_t(i * 2));
    }
    sys.finish();
    CHECK(s.done.size() == 5000);
    CHECK(s.acc.size() == 5000);
    for (auto& [tag, n] : s.done) REQUIRE(n == 1);
    CHECK(sys.outstanding() == 0);
}

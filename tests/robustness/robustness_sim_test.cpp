// Robustness with the SystemC kernel: HBM fault behaviour at the model, and the run driver's reports for
// deadlocks, stalls and checksum mismatches through the library API (exception texts). One kernel per test case.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include "models/hbm/hbm_simple.h"
#include "platforms/config/platform_config.h"
#include "testbench/workloads/gemm/gemm_run.h"
#include "testbench/workloads/program/program.h"
#include "tests/support/testbench_thread.h"
#include "tlm/ext_error.h"
#include "tlm/ext_strided.h"
#include "tlm/time_text.h"

using namespace trnsim;
using Catch::Contains;
using sc_core::sc_time;

namespace {
// 4 channels, plain modulo interleave of 256-byte blocks: block b is on channel b % 4.
hbm::hbm_config small_hbm(std::vector<tlmx::fault_spec> faults) {
    hbm::hbm_config c;
    c.stacks = 1;
    c.channels_per_stack = 4;
    c.capacity_bytes = 1 << 20;
    c.bandwidth_gbps = 400;
    c.latency_ns = 100;
    c.interleave_bytes = 256;
    c.channel_hash = false;
    for (auto& f : faults) f.label = "test fault";
    c.faults = std::move(faults);
    return c;
}
tlmx::fault_spec spec(const std::string& target, const std::string& kind) {
    tlmx::fault_spec f;
    f.target = target;
    f.kind = kind;
    return f;
}
// Reads len bytes at addr through a pooled payload; returns the status and the target's reason.
std::pair<tlm::tlm_response_status, std::string> read(test::stimulus& s, uint64_t addr, uint8_t* buf, uint64_t len,
                                                      sc_time& delay) {
    auto* gp = s.pool.acquire(len);
    gp->set_command(tlm::TLM_READ_COMMAND);
    gp->set_address(addr);
    s.out->b_transport(*gp, delay);
    auto st = gp->get_response_status();
    std::string why = tlmx::error_text(*gp);
    if (st == tlm::TLM_OK_RESPONSE) std::memcpy(buf, gp->get_data_ptr(), len);
    gp->release();
    return {st, why};
}
tb::sim_options quiet() {
    tb::sim_options o;
    o.progress_after_s = 0;
    return o;
}
} // namespace

TEST_CASE("HBM: a disabled channel fails the requests that touch it, with its number", "[hbm][faults]") {
    hbm::hbm_simple h("hbm", small_hbm({spec("channel1", "disable")}));
    test::stimulus s("stim", [&](test::stimulus& t) {
        uint8_t buf[512];
        sc_time d = sc_core::SC_ZERO_TIME;
        REQUIRE(read(t, 0, buf, 256, d).first == tlm::TLM_OK_RESPONSE);  // block 0: channel 0
        auto [st, why] = read(t, 128, buf, 256, d);                      // blocks 0 and 1
        REQUIRE(st == tlm::TLM_GENERIC_ERROR_RESPONSE);
        REQUIRE_THAT(why, Catch::Equals("TLM_GENERIC_ERROR_RESPONSE: hbm: channel 1 is disabled (test fault)"));
    });
    s.out.bind(h.in);
    s.run();
    REQUIRE(h.stats().value("fault_errors") == 1);
}

TEST_CASE("HBM: a remapped channel's blocks are served by a spare, data intact, bandwidth shared", "[hbm][faults]") {
    auto f = spec("channel1", "disable");
    f.policy = "remap";
    hbm::hbm_simple h("hbm", small_hbm({f}));
    test::stimulus s("stim", [&](test::stimulus& t) {
        std::vector<uint8_t> w(1024), r(1024);
        for (size_t i = 0; i < w.size(); ++i) w[i] = uint8_t(i * 7 + 1);
        sc_time d = sc_core::SC_ZERO_TIME;
        REQUIRE(t.write(0, w.data(), w.size(), d) == tlm::TLM_OK_RESPONSE);
        wait(sc_time(1, sc_core::SC_US));  // channels idle again
        sc_time d2 = sc_core::SC_ZERO_TIME;
        REQUIRE(read(t, 0, r.data(), r.size(), d2).first == tlm::TLM_OK_RESPONSE);
        REQUIRE(r == w);
        // Channel 2 now carries blocks 1 and 2 (512 B at 100 GB/s) instead of 256 B: the read takes longer
        // than the 256 B-per-channel case (2.56 ns + 100 ns).
        REQUIRE(d2.to_seconds() * 1e9 == Approx(100 + 512 / 100.0).margin(0.01));
    });
    s.out.bind(h.in);
    s.run();
    REQUIRE(h.stats().value("remapped_blocks") == 2);
}

TEST_CASE("HBM: every channel disabled with remap has nowhere to go", "[hbm][faults]") {
    auto f = spec("", "disable");
    f.policy = "remap";
    hbm::hbm_simple h("hbm", small_hbm({f}));
    test::stimulus s("stim", [&](test::stimulus& t) {
        uint8_t buf[16];
        sc_time d = sc_core::SC_ZERO_TIME;
        REQUIRE_THAT(read(t, 0, buf, 16, d).second, Contains("channel 0 is disabled and no channel is left to remap it to"));
    });
    s.out.bind(h.in);
    s.run();
}

TEST_CASE("HBM: a corrupt fault flips exactly one bit of one read, a slow fault adds latency in its window", "[hbm][faults]") {
    auto c = spec("channel0", "corrupt");
    c.after = 1;
    c.count = 1;
    auto sl = spec("", "slow");
    sl.latency_ns = 1000;
    sl.until_ns = 50;
    hbm::hbm_simple h("hbm", small_hbm({c, sl}));
    test::stimulus s("stim", [&](test::stimulus& t) {
        std::vector<uint8_t> w(256, 0xA5), r(256);
        sc_time d = sc_core::SC_ZERO_TIME;
        REQUIRE(t.write(0, w.data(), w.size(), d) == tlm::TLM_OK_RESPONSE);
        REQUIRE(d.to_seconds() * 1e9 == Approx(100 + 2.56 + 1000).margin(0.01));  // slow: at time 0, in the window
        wait(sc_time(100, sc_core::SC_NS));                                      // past the slow window
        int flipped[3] = {0, 0, 0};
        for (int i = 0; i < 3; ++i) {
            sc_time dr = sc_core::SC_ZERO_TIME;
            REQUIRE(read(t, 0, r.data(), r.size(), dr).first == tlm::TLM_OK_RESPONSE);
            REQUIRE(dr.to_seconds() * 1e9 == Approx(100 + 2.56).margin(0.01));
            for (size_t k = 0; k < r.size(); ++k) flipped[i] += __builtin_popcount(unsigned(r[k] ^ w[k]));
            wait(sc_time(10, sc_core::SC_NS));
        }
        REQUIRE(flipped[0] == 0);  // after = 1: the first read passes
        REQUIRE(flipped[1] == 1);
        REQUIRE(flipped[2] == 0);  // count = 1
    });
    s.out.bind(h.in);
    s.run();
    REQUIRE(h.stats().value("corrupted_transfers") == 1);
    REQUIRE(h.stats().value("slowed_requests") == 1);
}

TEST_CASE("a semaphore nobody signals: sim_error naming the waiting queues and the time", "[deadlock]") {
    auto cfg = platform::load_platform("trn2", {"chip.cores=1"});
    auto p = tb::load_program("programs/semaphore_never_signalled.json", cfg.chip);
    REQUIRE_THROWS_AS(tb::run_program(cfg, p, quiet()), tb::sim_error);
}

TEST_CASE("the deadlock report's text", "[deadlock]") {
    auto cfg = platform::load_platform("trn2", {"chip.cores=1"});
    auto p = tb::load_program("programs/circular_wait.json", cfg.chip);
    REQUIRE_THROWS_WITH(tb::run_program(cfg, p, quiet()),
                        Catch::Equals("deadlock: no events left at simulated time 0 us:\n"
                                      "  chip0.core0.dma_queue0 stopped at instruction #0 of 1, waiting for semaphore 1 >= 1 (it is 0)\n"
                                      "  chip0.core0.dma_queue1 stopped at instruction #0 of 1, waiting for semaphore 0 >= 1 (it is 0)"));
}

TEST_CASE("the stall watchdog stops a run whose DMAs never land", "[watchdog]") {
    auto cfg = platform::load_platform("trn2", {"chip.cores=1"}, std::vector<std::string>{"hbm:slow,latency_ns=1e9"});
    auto p = tb::load_program("programs/copy_roundtrip.json", cfg.chip);
    auto o = quiet();
    o.stall_limit_us = 10;
    REQUIRE_THROWS_WITH(tb::run_program(cfg, p, o),
                        Contains("watchdog: no progress for 10 us of simulated time") &&
                            Contains("chip0.core0.dma_queue1 stopped at instruction #0 of 1, waiting for semaphore 0 >= 1 (it is 0)") &&
                            Contains("bursts in flight, the next lands at 1000000"));
}

TEST_CASE("a corrupted HBM read is caught by the descriptor's checksum, not passed on", "[checksum][faults]") {
    auto cfg = platform::load_platform("trn2", {"chip.cores=1", "chip.core.dma.checksum=true"},
                                       std::vector<std::string>{"hbm:corrupt,after=3,count=1"});
    tb::gemm_spec g;
    g.m = g.k = g.n = 64;
    tb::gemm_options o;
    o.sim = quiet();
    REQUIRE_THROWS_WITH(tb::run_gemm(cfg, g, o), Contains("chip0.core0") && Contains("checksum mismatch at the source"));
}

TEST_CASE("checksums on a clean run verify every DMA instruction and change no result or time", "[checksum]") {
    tb::gemm_spec g;
    g.m = 100;
    g.k = 200;
    g.n = 300;
    g.dtype = numerics::dtype::fp16;
    tb::gemm_options o;
    o.sim = quiet();
    auto with = tb::run_gemm(platform::load_platform("trn1", {"chip.core.dma.checksum=true"}), g, o);
    REQUIRE(with.pass);
    double verified = 0;
    for (const auto& [k, v] : with.stats)
        if (k.find("checksums_verified") != std::string::npos) verified += v;
    REQUIRE(verified == double(with.tiling.dmas));
}

TEST_CASE("strided extents saturate instead of wrapping", "[tlm]") {
    tlmx::ext_strided s(3, ~0ull / 2);
    REQUIRE(s.extent(30) == ~0ull);
    tlmx::ext_strided ok(4, 100);
    REQUIRE(ok.extent(40) == 310);
}

namespace {
// A run that takes about 0.5 s of wall time: 250 steps of 1 us simulated time, each 2 ms of host time.
struct slow_counter : sc_core::sc_module {
    uint64_t done = 0;
    SC_HAS_PROCESS(slow_counter);
    explicit slow_counter(sc_core::sc_module_name n) : sc_core::sc_module(n) { SC_THREAD(run); }
    void run() {
        for (; done < 250; ++done) {
            wait(sc_time(1, sc_core::SC_US));
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }
};
} // namespace

TEST_CASE("the progress line in a log: plain lines every few seconds, no carriage returns, times in us", "[progress]") {
    slow_counter c("counter");
    tb::sim_probe p;
    p.finished = [&] { return c.done >= 250; };
    p.stuck = [] { return std::vector<std::string>{}; };
    p.progress = [&] { return c.done; };
    p.progress_text = [&] { return "step " + std::to_string(c.done) + "/250"; };
    tb::sim_options o;
    o.progress_after_s = 0.05;
    o.progress_log_every_s = 0.1;
    // stderr to a file: not a terminal, as in a log or a pipe.
    const std::string file = "progress_line_test.txt";
    std::fflush(stderr);
    const int saved = dup(2);
    const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    dup2(fd, 2);
    close(fd);
    tb::run_to_completion(p, o);
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::remove(file.c_str());
    INFO(text);
    CHECK(text.find('\r') == std::string::npos);
    REQUIRE(!text.empty());
    CHECK(text.back() == '\n');
    // Every line: "[0.1 s wall] simulated 51.000 us  step 51/250"; at most one per 0.1 s of the ~0.5 s run.
    std::istringstream lines(text);
    size_t n = 0;
    for (std::string line; std::getline(lines, line); ++n)
        CHECK(std::regex_match(line, std::regex(R"(\[[0-9]+\.[0-9] s wall\] simulated [0-9]+\.[0-9]{3} us  step [0-9]+/250)")));
    CHECK(n >= 2);
    CHECK(n <= 8);
}

TEST_CASE("simulated times print in one unit: microseconds with three decimals", "[progress]") {
    CHECK(tlmx::time_text(0) == "0 us");
    CHECK(tlmx::time_text(1818551.038) == "1818.551 us");  // was "1818551038 ps" in the progress line
    CHECK(tlmx::time_text(1838550) == "1838.550 us");      // was "1838550 ns"
    CHECK(tlmx::time_text(0.6) == "0.001 us");
}

// Both HBM models (chip.hbm.model "simple" and "dram") behind the one interface (models/hbm/hbm_model.h), tested
// through it alone: every fault kind, the observer events, timing-only (sim.functional=false), the config keys each
// model reads, and the chip timeline's HBM tracks. Each case runs once per model; one kernel per test case.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "platforms/config/platform_config.h"
#include "platforms/single_chip/chip.h"
#include "platforms/single_chip/factories.h"
#include "testbench/workloads/gemm/gemm_run.h"
#include "testbench/observe/chip_timeline.h"
#include "tests/support/testbench_thread.h"
#include "tlm/ext_error.h"

using namespace trnsim;
using Catch::Contains;
using sc_core::sc_time;
using sc_core::SC_NS;

namespace {
const char* preset_of(const std::string& model) { return model == "dram" ? "trn2-dram" : "trn2"; }

// trn2's HBM with the given model, faults and functional flag. Address 0 is on channel 0 in both models (the simple
// model's hash of block 0 and the DRAM model's default mapping of address 0).
std::unique_ptr<hbm::hbm_model> make(const std::string& model, std::vector<tlmx::fault_spec> faults = {},
                                     bool functional = true, const std::string& name = "hbm") {
    hbm::hbm_config c = platform::load_platform(preset_of(model), {}).chip.hbm;
    REQUIRE(c.model == model);
    for (auto& f : faults) f.label = "test fault";
    c.faults = std::move(faults);
    c.functional = functional;
    return platform::make_hbm(name, c);
}
tlmx::fault_spec fault(const std::string& target, const std::string& kind) {
    tlmx::fault_spec f;
    f.target = target;
    f.kind = kind;
    return f;
}
struct result {
    tlm::tlm_response_status status;
    std::string why;
    sc_time took;  // simulated time of the blocking call, annotated delay included
};
// One blocking transaction as an LT initiator sees it (the DRAM model waits inside b_transport).
result access(test::stimulus& s, tlm::tlm_command cmd, uint64_t addr, uint8_t* buf, uint64_t len) {
    auto* gp = s.pool.acquire(len);
    gp->set_command(cmd);
    gp->set_address(addr);
    std::memcpy(gp->get_data_ptr(), buf, len);  // a read that stores nothing leaves the buffer as it was
    sc_time d = sc_core::SC_ZERO_TIME;
    const sc_time t0 = sc_core::sc_time_stamp();
    s.out->b_transport(*gp, d);
    result r{gp->get_response_status(), tlmx::error_text(*gp), sc_core::sc_time_stamp() - t0 + d};
    if (cmd == tlm::TLM_READ_COMMAND && r.status == tlm::TLM_OK_RESPONSE) std::memcpy(buf, gp->get_data_ptr(), len);
    gp->release();
    wait(d);
    return r;
}
result rd(test::stimulus& s, uint64_t a, std::vector<uint8_t>& b) { return access(s, tlm::TLM_READ_COMMAND, a, b.data(), b.size()); }
result wr(test::stimulus& s, uint64_t a, std::vector<uint8_t>& b) { return access(s, tlm::TLM_WRITE_COMMAND, a, b.data(), b.size()); }
std::vector<uint8_t> pattern(size_t n) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * 7 + 1);
    return v;
}
int bits_differing(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    int n = 0;
    for (size_t i = 0; i < a.size(); ++i) n += __builtin_popcount(unsigned(a[i] ^ b[i]));
    return n;
}
double stat(hbm::hbm_model& h, const std::string& k) { return h.stats().value(k); }

// Runs `body` against `h` (stops when it ends).
void drive(hbm::hbm_model& h, std::function<void(test::stimulus&)> body) {
    test::stimulus s("stim", std::move(body));
    s.out.bind(h.in);
    s.run();
}

void disable_fails_requests(const std::string& model) {
    auto h = make(model, {fault("channel0", "disable")});
    uint64_t other = 0;
    drive(*h, [&](test::stimulus& s) {
        std::vector<uint8_t> b(32);
        auto r = rd(s, 0, b);
        REQUIRE(r.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
        REQUIRE_THAT(r.why, Contains("hbm: channel 0 is disabled (test fault)"));
        // Some other 32-byte block is on an enabled channel and is served.
        for (other = 4096; other < (64u << 20); other += 4096)
            if (rd(s, other, b).status == tlm::TLM_OK_RESPONSE) break;
    });
    REQUIRE(other < (64u << 20));
    REQUIRE(stat(*h, "fault_errors") >= 1);
}

void remap_keeps_data(const std::string& model) {
    auto f = fault("channel0", "disable");
    f.policy = "remap";
    auto h = make(model, {f});
    std::vector<uint32_t> channels;
    h->observe([&](const hbm::hbm_event& e) { channels.push_back(e.channel); });
    drive(*h, [&](test::stimulus& s) {
        auto w = pattern(256), r = std::vector<uint8_t>(256);
        REQUIRE(wr(s, 0, w).status == tlm::TLM_OK_RESPONSE);
        REQUIRE(rd(s, 0, r).status == tlm::TLM_OK_RESPONSE);
        REQUIRE(r == w);
    });
    REQUIRE(stat(*h, "remapped_blocks") >= 2);  // the block(s) of address 0, written and read
    REQUIRE(!channels.empty());
    for (uint32_t c : channels) REQUIRE(c != 0);  // nothing went to the disabled channel
}

void remap_with_nothing_left(const std::string& model) {
    auto f = fault("", "disable");
    f.policy = "remap";
    auto h = make(model, {f});
    drive(*h, [&](test::stimulus& s) {
        std::vector<uint8_t> b(32);
        REQUIRE_THAT(rd(s, 0, b).why, Contains("channel 0 is disabled and no channel is left to remap it to"));
    });
}

// Two identical HBMs, one with the fault: the same transaction takes latency_ns longer on it, in the window only.
void slow_adds_latency(const std::string& model) {
    auto sl = fault("channel0", "slow");
    sl.latency_ns = 1000;
    sl.until_ns = 5000;
    auto slow = make(model, {sl}, true, "slow");
    auto ref = make(model, {}, true, "ref");
    sc_time slow_t[2], ref_t[2];
    auto scenario = [](sc_time* out) {
        return [out](test::stimulus& s) {
            std::vector<uint8_t> b(64);
            out[0] = rd(s, 0, b).took;  // at 0: in the window
            wait(sc_time(10000, SC_NS));
            out[1] = rd(s, 0, b).took;  // past it
        };
    };
    test::stimulus a("a", scenario(slow_t), false), b("b", scenario(ref_t), false);
    a.out.bind(slow->in);
    b.out.bind(ref->in);
    sc_core::sc_start();
    REQUIRE(a.done);
    REQUIRE(b.done);
    REQUIRE((slow_t[0] - ref_t[0]).to_seconds() * 1e9 == Approx(1000).margin(1e-3));
    REQUIRE(slow_t[1] == ref_t[1]);
    REQUIRE(stat(*slow, "slowed_requests") == 1);
}

void corrupt_flips_one_bit(const std::string& model, const std::string& on) {
    auto c = fault("channel0", "corrupt");
    c.on = on;
    c.after = 1;  // the second transaction of that direction on channel 0
    c.count = 1;
    auto h = make(model, {c});
    int flipped[3] = {0, 0, 0};
    drive(*h, [&](test::stimulus& s) {
        auto w = pattern(64);
        for (int i = 0; i < 3; ++i) {
            std::vector<uint8_t> r(64);
            REQUIRE(wr(s, 0, w).status == tlm::TLM_OK_RESPONSE);
            REQUIRE(rd(s, 0, r).status == tlm::TLM_OK_RESPONSE);
            flipped[i] = bits_differing(r, w);
        }
    });
    REQUIRE(flipped[0] == 0);
    REQUIRE(flipped[1] == 1);
    REQUIRE(flipped[2] == 0);  // a corrupt read leaves the stored data intact; a corrupt write is overwritten
    REQUIRE(stat(*h, "corrupted_transfers") == 1);
}

// Observer events: every byte of every transaction, on valid channels, within the transaction's time.
void observer_covers_every_byte(const std::string& model) {
    auto h = make(model);
    uint64_t bytes[2] = {0, 0};
    uint64_t last_end = 0;
    bool valid = true;
    h->observe([&](const hbm::hbm_event& e) {
        bytes[e.read ? 1 : 0] += e.bytes;
        last_end = std::max(last_end, e.end_ps);
        valid = valid && e.channel < h->channels() && e.begin_ps <= e.end_ps && e.bytes > 0;
    });
    uint64_t end_ps = 0;
    drive(*h, [&](test::stimulus& s) {
        auto w = pattern(5000);
        REQUIRE(wr(s, 100, w).status == tlm::TLM_OK_RESPONSE);
        std::vector<uint8_t> r(5000);
        REQUIRE(rd(s, 100, r).status == tlm::TLM_OK_RESPONSE);
        REQUIRE(r == w);
        end_ps = uint64_t(sc_core::sc_time_stamp().to_seconds() * 1e12 + 0.5);
    });
    REQUIRE(valid);
    REQUIRE(bytes[0] == 5000);
    REQUIRE(bytes[1] == 5000);
    REQUIRE(last_end <= end_ps);
    REQUIRE(last_end > 0);
}

// Timing only: the same timing as a functional HBM, nothing stored (reads return what the initiator had).
void timing_only_stores_nothing(const std::string& model) {
    auto fn = make(model, {}, true, "functional");
    auto to = make(model, {}, false, "timing_only");
    REQUIRE(fn->functional());
    REQUIRE(!to->functional());
    sc_time t_fn[2], t_to[2];
    std::vector<uint8_t> got_fn(4096), got_to(4096);
    auto scenario = [](sc_time* t, std::vector<uint8_t>& got) {
        return [t, &got](test::stimulus& s) {
            auto w = pattern(4096);
            t[0] = wr(s, 8192, w).took;
            std::fill(got.begin(), got.end(), 0xEE);
            t[1] = rd(s, 8192, got).took;
        };
    };
    test::stimulus a("a", scenario(t_fn, got_fn), false), b("b", scenario(t_to, got_to), false);
    a.out.bind(fn->in);
    b.out.bind(to->in);
    sc_core::sc_start();
    REQUIRE(a.done);
    REQUIRE(b.done);
    REQUIRE(t_fn[0] == t_to[0]);
    REQUIRE(t_fn[1] == t_to[1]);
    REQUIRE(got_fn == pattern(4096));
    REQUIRE(got_to == std::vector<uint8_t>(4096, 0xEE));
    REQUIRE(stat(*to, "bytes_read") == stat(*fn, "bytes_read"));
}

// A small GEMM on the chip: the timeline has events on the HBM channel tracks, the run passes.
void timeline_has_hbm_tracks(const std::string& model) {
    auto cfg = platform::load_platform(preset_of(model), {"chip.cores=1"});
    tb::timeline_options to;
    tb::chip_timeline tl(to);
    tb::gemm_options opt;
    opt.sim.progress_after_s = 0;
    opt.on_built = [&](platform::chip& c) { tl.attach(c); };
    tb::gemm_spec g;
    g.m = g.k = g.n = 128;
    auto r = tb::run_gemm(cfg, g, opt);
    REQUIRE(r.pass);
    std::ostringstream os;
    tl.write(os);
    auto doc = nlohmann::json::parse(os.str());
    uint64_t hbm_bytes = 0;
    for (const auto& e : doc.at("traceEvents"))
        if (e.at("ph") == "X" && e.at("cat") == "hbm") hbm_bytes += e.at("args").at("bytes").get<uint64_t>();
    REQUIRE(double(hbm_bytes) == Approx(r.hbm_bytes));
    REQUIRE(hbm_bytes >= (128 * 128 * 2) * 2 + 128 * 128 * 4);
}
} // namespace

#define BOTH_MODELS(title, ...)                                                                                      \
    TEST_CASE("hbm simple: " title, "[hbm][simple]") { __VA_ARGS__("simple"); }                                     \
    TEST_CASE("hbm dram: " title, "[hbm][dram]") { __VA_ARGS__("dram"); }

BOTH_MODELS("a disabled channel fails the requests that touch it, naming it", disable_fails_requests)
BOTH_MODELS("a remapped channel's blocks go to enabled channels, data intact", remap_keeps_data)
BOTH_MODELS("remap with every channel disabled fails", remap_with_nothing_left)
BOTH_MODELS("a slow fault adds its latency in its window only", slow_adds_latency)
BOTH_MODELS("a corrupt-read fault flips one bit of one read", [](const std::string& m) { corrupt_flips_one_bit(m, "read"); })
BOTH_MODELS("a corrupt-write fault flips one bit of one write", [](const std::string& m) { corrupt_flips_one_bit(m, "write"); })
BOTH_MODELS("observer events cover every byte on valid channels", observer_covers_every_byte)
BOTH_MODELS("timing-only has the same timing and stores nothing", timing_only_stores_nothing)
BOTH_MODELS("the chip timeline records the HBM channel traffic of a GEMM", timeline_has_hbm_tracks)

TEST_CASE("hbm config: a key the chosen model does not read is an error naming it", "[hbm][config]") {
    using platform::load_platform;
    REQUIRE_THROWS_WITH(load_platform("trn2-dram", {"chip.hbm.bandwidth_gbps=100"}),
                        Contains("chip.hbm.bandwidth_gbps: a setting of chip.hbm.model \"simple\", which model \"dram\" does not use"));
    REQUIRE_THROWS_WITH(load_platform("trn2-dram", {"chip.hbm.latency_ns=10"}), Contains("chip.hbm.latency_ns: a setting of"));
    REQUIRE_THROWS_WITH(load_platform("trn2", {"chip.hbm.model=dram"}), Contains("chip.hbm.channels_per_stack: a setting of"));
    REQUIRE_THROWS_WITH(load_platform("trn2", {"chip.hbm.memspec=hbm3"}),
                        Contains("chip.hbm.memspec: a setting of chip.hbm.model \"dram\", which model \"simple\" does not use"));
    REQUIRE_THROWS_WITH(load_platform("trn2", {"chip.hbm.scheduler=fcfs"}), Contains("chip.hbm.scheduler: a setting of"));
    // The fault targets follow the chosen model's channels (pseudo-channels for "dram").
    auto d = load_platform("trn2-dram", {});
    REQUIRE(d.chip.hbm.channels() == 4 * 32);
    REQUIRE_NOTHROW(load_platform("trn2-dram", {}, std::vector<std::string>{"hbm.channel127:disable"}));
    REQUIRE_THROWS_WITH(load_platform("trn2-dram", {}, std::vector<std::string>{"hbm.channel128:disable"}), Contains("the HBM has 128 channels"));
    // The DRAM model's figures follow from its memspec: switching the model changes the bandwidth the chip reports.
    REQUIRE(d.chip.hbm.bandwidth_gbps == Approx(2867.2));
}

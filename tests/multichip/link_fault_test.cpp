// Link faults (docs/RELIABILITY.md "Link faults"): degraded link directions slow a collective as the alpha-beta model
// of the slowest link predicts; down ones are routed around (ring direction, the other way round a torus
// dimension) with every output byte checked against the reference; where nothing can avoid them the run fails
// before simulating, naming the link and the algorithm.
#include <catch2/catch.hpp>

#include <string>

#include "models/link/torus_routing.h"
#include "platforms/config/platform_config.h"
#include "testbench/workloads/collective/collective_run.h"

using namespace trnsim;

namespace {

platform::platform_config load(const std::string& preset, std::vector<std::string> sets, bool functional) {
    sets.push_back(std::string("sim.functional=") + (functional ? "true" : "false"));
    auto cfg = platform::load_platform(preset, sets, TRNSIM_CONFIG_DIR);
    cfg.preset = preset;
    return cfg;
}

tb::collective_result run(const platform::platform_config& cfg, collective::algo a, uint64_t bytes,
                          collective::op o = collective::op::allreduce) {
    collective::params p;
    p.o = o;
    p.a = a;
    p.bytes = bytes;
    tb::collective_options opt;
    opt.check = cfg.functional;
    opt.sim.progress_after_s = 0;
    return tb::run_collective(cfg, p, opt);
}

std::string fault_json(const std::string& body) { return "server.faults.links=[" + body + "]"; }

}  // namespace

// Ring allreduce of B on n chips, unpipelined (tests/multichip/collective_matrix.sh derives it for ring-8):
// 2(n-1)(alpha + B/(n beta)) + (n-1)(remote signal + reduce latency + B/(n gamma) + signal) + (n-2) remote signal:
// alpha = DMA cost + one burst + link latency + one packet + memory latency, beta = the effective rate of the
// slowest link direction, gamma = the reduction rate (a step books its busiest core's bytes times the cores that
// reduce: light_chip_config); every reduce-scatter step is a copy, the remote signal that
// releases the reduce on the next chip, the reduce, and the signal to that chip's next copy; the all-gather's copies
// are released by remote signals.
double ring_allreduce_ns(uint64_t B, uint32_t n, const platform::platform_config& cfg) {
    const link::link_config& lp = cfg.multichip.links[0];
    const auto& c = cfg.multichip.light;
    double alpha = c.dma_latency_ns + 4096 / c.dma_gbps + lp.latency_ns + lp.packet_ns() + c.hbm_latency_ns;
    double gamma = c.reduce_gbps(numerics::dtype::fp32);
    return 2.0 * (n - 1) * (alpha + double(B) / n / lp.effective_gbps()) +
           (n - 1) * (c.remote_signal_ns + c.reduce_latency_ns +
                      double(c.reduce_booked_bytes(B / n, numerics::dtype::fp32)) / gamma + c.signal_ns) +
           (n - 2) * c.remote_signal_ns;
}

TEST_CASE("link faults: a degraded link bottlenecks a ring allreduce as alpha-beta with its bandwidth predicts",
          "[multichip][faults]") {
    const uint64_t B = 64ull << 20;
    auto cfg = load("ring-8", {fault_json(R"({"from":3,"to":4,"state":"degraded","bandwidth_factor":0.25})")}, false);
    REQUIRE(cfg.multichip.faults.size() == 1);
    link::link_config slow = cfg.multichip.faults[0].apply(cfg.multichip.links[0]);
    REQUIRE(slow.effective_gbps() < 0.3 * cfg.multichip.links[0].effective_gbps());
    auto r = run(cfg, collective::algo::ring, B);
    // The slow direction carries 2(n-1) blocks of B/n back to back and everything else hides behind it (its
    // latencies, the reductions, the healthy links): the beta term of alpha-beta with the slow link's bandwidth.
    CHECK(r.sim_ns == Approx(2.0 * 7 * double(B) / 8 / slow.effective_gbps()).epsilon(0.02));
    // Far slower than the healthy ring's formula: the fault is what sets the pace.
    CHECK(r.sim_ns > 3 * ring_allreduce_ns(B, 8, cfg));
}

TEST_CASE("link faults: extra latency on a degraded link adds to the ring steps that cross it",
          "[multichip][faults]") {
    const uint64_t B = 64 * 1024;
    auto cfg = load("ring-8", {fault_json(R"({"from":2,"to":3,"state":"degraded","extra_latency_ns":10000})")}, false);
    link::link_config slow = cfg.multichip.faults[0].apply(cfg.multichip.links[0]);
    REQUIRE(slow.latency_ns == Approx(cfg.multichip.links[0].latency_ns + 10000));
    auto r = run(cfg, collective::algo::ring, B);
    // The critical path of the 14 dependent ring steps goes 1.75 times round the ring of 8: it crosses the slow
    // hop twice (small message: the credit limit of the longer round trip does not matter).
    CHECK(r.sim_ns == Approx(ring_allreduce_ns(B, 8, cfg) + 2 * 10000.0).epsilon(0.03));
}

TEST_CASE("link faults: a ring with one direction down runs the other way round and stays bit-exact",
          "[multichip][faults]") {
    const uint64_t B = 1 << 20;
    auto cfg = load("ring-8", {fault_json(R"({"from":3,"to":4,"state":"down"})")}, true);
    REQUIRE(cfg.multichip.topo.down.size() == 1);
    auto r = run(cfg, collective::algo::ring, B);
    REQUIRE(r.checked);
    CHECK(r.pass);
    CHECK(r.mismatches == 0);
    // The reverse ring has links as good as the forward one: the healthy ring's time.
    CHECK(r.sim_ns == Approx(ring_allreduce_ns(B, 8, cfg)).epsilon(0.03));
}

TEST_CASE("link faults: a bidirectional ring with one direction down falls back to the intact direction",
          "[multichip][faults]") {
    const uint64_t B = 1 << 20;
    auto cfg = load("ring-8", {fault_json(R"({"from":5,"to":4,"state":"down"})")}, true);
    auto r = run(cfg, collective::algo::bidir_ring, B);
    REQUIRE(r.checked);
    CHECK(r.pass);
    // One ring of the whole message (a healthy bidirectional ring would move half of it each way).
    CHECK(r.sim_ns == Approx(ring_allreduce_ns(B, 8, cfg)).epsilon(0.03));
}

TEST_CASE("link faults: both ring directions broken fails before simulating, naming the links",
          "[multichip][faults]") {
    auto cfg = load("ring-8", {fault_json(R"({"from":3,"to":4,"state":"down"},{"from":6,"to":5,"state":"down"})")},
                    true);
    REQUIRE_THROWS_WITH(run(cfg, collective::algo::ring, 4096),
                        Catch::Contains("the ring algorithm has no usable direction round the ring: link 3->4 "
                                        "(direction +) and link 6->5 (direction -) are down"));
}

TEST_CASE("link faults: torus routing takes the other way round a dimension with a down hop",
          "[multichip][faults]") {
    link::torus_shape t;
    t.dims = {4, 4, 1};
    t.down = {{0, 0}};  // chip 0's + x port (0 -> 1)
    auto r = t.route(0, 1);
    REQUIRE(r.size() == 3);  // 0 -> 3 -> 2 -> 1
    CHECK(r[0] == std::make_pair(0u, 1));
    // Every hop of every route is up, and every pair is still reachable.
    for (uint32_t s = 0; s < 16; ++s)
        for (uint32_t d = 0; d < 16; ++d) {
            auto route = t.route(s, d);
            CHECK((s == d || !route.empty()));
            for (auto [c, p] : route) CHECK(t.port_up(c, p));
        }
    t.down.push_back({0, 1});  // 0 -> 3 as well: chip 0 cannot leave along x
    std::pair<uint32_t, int> blocked{99, 99};
    CHECK(t.route(0, 1, &blocked).empty());
    CHECK(blocked == std::make_pair(0u, 0));
    CHECK(t.next_port(0, 1) == link::BLOCKED);
}

TEST_CASE("link faults: a torus allreduce routed around a down link passes bit-exact and takes longer",
          "[multichip][faults]") {
    const uint64_t B = 1 << 20;
    auto r = run(load("torus-4x4", {fault_json(R"({"from":5,"to":6,"state":"down"})")}, true),
                 collective::algo::torus, B);
    REQUIRE(r.checked);
    CHECK(r.pass);
    CHECK(r.mismatches == 0);
}

TEST_CASE("link faults: a copy with no way around fails before simulating, naming the link and the algorithm",
          "[multichip][faults]") {
    auto cfg = load("torus-4x4", {fault_json(R"({"from":0,"to":1,"state":"down"},{"from":0,"to":3,"state":"down"})")},
                    true);
    REQUIRE_THROWS_WITH(run(cfg, collective::algo::torus, 1 << 16),
                        Catch::Contains("collective torus algorithm: copy step") &&
                            Catch::Contains("from chip 0 to chip 1 has no route: link 0->1 is down and the other way "
                                            "round dimension x is broken too"));
}

TEST_CASE("link faults: bad fault configs name the key path", "[multichip][faults]") {
    auto bad = [](const std::string& body) { return load("ring-8", {fault_json(body)}, false); };
    REQUIRE_THROWS_WITH(bad(R"({"from":3,"to":40,"state":"down"})"),
                        Catch::Contains("server.faults.links[0]: chip 40 does not exist (chips 0..7)"));
    REQUIRE_THROWS_WITH(bad(R"({"from":0,"to":4,"state":"down"})"),
                        Catch::Contains("server.faults.links[0]: no link 0->4"));
    REQUIRE_THROWS_WITH(bad(R"({"from":0,"to":1,"state":"degraded","bandwidth_factor":1.5})"),
                        Catch::Contains("server.faults.links[0].bandwidth_factor: must be >= 1e-06 and < 1"));
    REQUIRE_THROWS_WITH(bad(R"({"from":0,"to":1,"state":"degraded","bandwidth_factor":0})"),
                        Catch::Contains("server.faults.links[0].bandwidth_factor: must be >= 1e-06 and < 1"));
    REQUIRE_THROWS_WITH(bad(R"({"from":0,"to":1,"state":"degraded","extra_latency_ns":-1})"),
                        Catch::Contains("server.faults.links[0].extra_latency_ns: must be >= 0 and <= 1e9 ns, got -1"));
    REQUIRE_THROWS_WITH(bad(R"({"from":0,"to":1,"state":"degraded","extra_latency_ns":0})"),
                        Catch::Contains("server.faults.links[0]: degraded link 0->1 changes nothing: it needs "
                                        "bandwidth_factor (0 < f < 1) or extra_latency_ns > 0"));
    REQUIRE_THROWS_WITH(bad(R"({"from":0,"to":1,"state":"degraded"})"),
                        Catch::Contains("server.faults.links[0]: degraded link 0->1 changes nothing"));
    REQUIRE_THROWS_WITH(bad(R"({"from":0,"to":1,"state":"down","extra_latency_ns":5})"),
                        Catch::Contains("server.faults.links[0].extra_latency_ns: only a \"degraded\" link has it"));
    REQUIRE_THROWS_WITH(bad(R"({"from":0,"to":1,"state":"broken"})"),
                        Catch::Contains("server.faults.links[0].state"));
    REQUIRE_THROWS_WITH(bad(R"({"from":0,"to":1,"state":"down"},{"from":0,"to":1,"state":"down"})"),
                        Catch::Contains("server.faults.links[1]: link 0->1 already has a fault"));
    REQUIRE_THROWS_WITH(bad(R"({"from":0,"to":1,"state":"down","bandwidth_factor":0.5})"),
                        Catch::Contains("server.faults.links[0].bandwidth_factor: only a \"degraded\" link has it"));
    REQUIRE_THROWS_WITH(bad(R"({"from":0,"to":1,"state":"down","speed":1})"),
                        Catch::Contains("server.faults.links[0].speed: unknown key"));
}

// Link timing, credits, cut-through, routing deadlock freedom and the global address layout (plain C++).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "models/link/global_address.h"
#include "models/link/link_timing.h"
#include "models/link/torus_routing.h"

using namespace trnsim::link;

TEST_CASE("link: one transfer takes latency plus packet plus bytes over the effective rate", "[multichip]") {
    link_config p;  // 256 GB/s, 500 ns, 256 + 32 B packets, 64 credits
    p.credits = 4096;
    direction_timeline t(p);
    const uint64_t B = 1 << 20;
    flight f = t.reserve({0, 0}, B);
    double eff = p.effective_gbps();
    REQUIRE(eff == Approx(256.0 * 256 / 288));
    REQUIRE(eff < p.gbps);
    double want_tail = B / eff + p.latency_ns;            // ns
    REQUIRE(double(f.tail_ps) / 1000 == Approx(want_tail).epsilon(1e-6));
    REQUIRE(double(f.head_ps) / 1000 == Approx(p.packet_ns() + p.latency_ns).epsilon(1e-6));
    // Lower bound: never faster than the raw wire.
    REQUIRE(double(f.tail_ps) / 1000 >= B / p.gbps + p.latency_ns);
    REQUIRE(t.wire_bytes() == B + (B / 256) * 32);
}

TEST_CASE("link: back-to-back transfers queue FCFS and the link is never over-subscribed", "[multichip]") {
    link_config p;
    p.credits = 4096;
    direction_timeline t(p);
    flight a = t.reserve({0, 0}, 65536), b = t.reserve({0, 0}, 65536);
    REQUIRE(b.tail_ps - a.tail_ps == Approx(65536 / p.effective_gbps() * 1000).epsilon(1e-3));
    REQUIRE(t.wait_ps() > 0);
    REQUIRE(t.busy_ps() == Approx(2 * 65536 / p.effective_gbps() * 1000).epsilon(1e-6));
}

TEST_CASE("link: transfers are placed in time, not in call order: an earlier arrival uses the idle link", "[multichip]") {
    link_config p;
    p.credits = 4096;
    direction_timeline t(p);
    const uint64_t B = 4096, occ = uint64_t(std::llround(B * 1000.0 / p.effective_gbps()));  // ~18 ns
    // A transfer on its second hop, reserved first, arrives 20 us ahead of the simulated time.
    flight held_late, held_early, held_third, held_fourth;
    t.reserve({20000000, 20000000}, B, &held_late);
    REQUIRE(held_late.head_ps == 20000000);
    // One reserved after it but arriving now goes now, not 20 us later behind it.
    t.reserve({0, 0}, B, &held_early);
    REQUIRE(held_early.head_ps == 0);
    REQUIRE(t.wait_ps() == 0);
    // Transfers that do not fit in the gap before a busy interval go after it.
    t.reserve({20000000 - occ / 2, 20000000 - occ / 2}, B, &held_third);
    REQUIRE(held_third.head_ps == held_late.tail_ps);
    t.reserve({held_early.head_ps, held_early.head_ps}, B, &held_fourth);
    REQUIRE(held_fourth.head_ps == held_early.tail_ps);  // behind the earlier one that arrived at the same time
    REQUIRE(t.wait_ps() == (held_late.tail_ps - (20000000 - occ / 2)) + occ);
    // Never over-subscribed: the held intervals are disjoint.
    std::vector<flight> h{held_early, held_fourth, held_late, held_third};
    for (size_t i = 1; i < h.size(); ++i) REQUIRE(h[i].head_ps >= h[i - 1].tail_ps);
    REQUIRE(t.free_at_ps() == held_third.tail_ps);
    // Forgetting the past changes no placement after it.
    t.forget_before(held_fourth.tail_ps);
    flight f5;
    t.reserve({held_fourth.tail_ps, held_fourth.tail_ps}, B, &f5);
    REQUIRE(f5.head_ps == held_fourth.tail_ps);
}

TEST_CASE("link: a one-packet transfer is not queued behind bulk data reserved ahead of it", "[multichip]") {
    // A semaphore write (8 bytes) arriving while a 1 MiB copy holds the direction for the next ~4.6 us goes at the
    // next packet boundary (arbitration per packet), not after the copy; longer transfers still queue FCFS.
    link_config p;
    p.credits = 4096;
    direction_timeline t(p);
    flight bulk_held, word_held, next_held;
    t.reserve({0, 0}, 1 << 20, &bulk_held);
    const flight word = t.reserve({1000000, 1000000}, 8, &word_held);
    CHECK(word_held.head_ps == 1000000);
    CHECK(word.tail_ps < bulk_held.tail_ps / 2);
    CHECK(double(word.head_ps - 1000000) / 1000 == Approx(p.latency_ns + (8 + 32) / p.gbps).margin(0.01));
    t.reserve({1000000, 1000000}, 4096, &next_held);
    CHECK(next_held.head_ps == bulk_held.tail_ps);  // a bulk transfer waits for the copy
    CHECK(t.wait_ps() == bulk_held.tail_ps - 1000000);
    CHECK(t.busy_ps() > 0);
    CHECK(t.transfers() == 3);
}

TEST_CASE("link: few credits throttle the link to credits x payload per round trip", "[multichip]") {
    link_config p;
    p.credits = 8;  // 8 x 256 B per ~1 us round trip = ~2 GB/s
    REQUIRE(p.credit_gbps() < p.framing_gbps());
    REQUIRE(p.effective_gbps() == Approx(8.0 * 256 / p.rtt_ns()));
    direction_timeline slow(p);
    link_config q = p;
    q.credits = 4096;
    direction_timeline fast(q);
    uint64_t B = 1 << 20;
    flight s = slow.reserve({0, 0}, B), f = fast.reserve({0, 0}, B);
    REQUIRE(s.tail_ps > 50 * (f.tail_ps - 500000));
    REQUIRE(double(s.tail_ps) / 1000 == Approx(B / p.effective_gbps() + p.latency_ns).epsilon(1e-6));
    // More credits never make it slower.
    for (uint32_t c = 1; c < 2048; c *= 2) {
        link_config a = p, b = p;
        a.credits = c;
        b.credits = 2 * c;
        REQUIRE(b.effective_gbps() >= a.effective_gbps());
    }
}

TEST_CASE("link: cut-through over h hops costs h latencies, not h serialisations", "[multichip]") {
    link_config p;
    p.credits = 4096;
    direction_timeline h1(p), h2(p), h3(p);
    uint64_t B = 4 << 20;
    flight f = h3.reserve(h2.reserve(h1.reserve({0, 0}, B), B), B);
    double want = 3 * (p.latency_ns + p.packet_ns()) + B / p.effective_gbps();
    REQUIRE(double(f.tail_ps) / 1000 == Approx(want).epsilon(0.001));
    REQUIRE(double(f.tail_ps) / 1000 < 1.1 * B / p.effective_gbps() + 3 * p.latency_ns + 10);
}

TEST_CASE("link: bad parameters are named", "[multichip]") {
    link_config p;
    p.gbps = 0;
    REQUIRE(p.check() == "gbps must be > 0");
    p = {};
    p.credits = 0;
    REQUIRE(p.check() == "credits must be > 0");
}

TEST_CASE("routing: dimension order routes are minimal and reach the destination", "[multichip]") {
    for (auto dims : {std::array<uint32_t, 3>{8, 1, 1}, {4, 4, 1}, {4, 4, 4}, {3, 2, 5}, {2, 2, 2}}) {
        torus_shape t{dims};
        for (uint32_t s = 0; s < t.chips(); ++s)
            for (uint32_t d = 0; d < t.chips(); ++d) {
                auto r = t.route(s, d);
                uint32_t c = s, hops = 0;
                for (auto [chip, port] : r) {
                    REQUIRE(chip == c);
                    REQUIRE(t.has_port(port));
                    c = t.neighbour(c, port);
                    ++hops;
                }
                REQUIRE(c == d);
                uint32_t minimal = 0;
                auto a = t.coords(s), b = t.coords(d);
                for (int k = 0; k < 3; ++k) {
                    uint32_t n = dims[size_t(k)], fwd = (b[size_t(k)] + n - a[size_t(k)]) % n;
                    minimal += std::min(fwd, n - fwd);
                }
                REQUIRE(hops == minimal);
            }
    }
}

TEST_CASE("routing: the channel dependency graph with dateline VCs is acyclic on tori up to 4x4x4", "[multichip]") {
    for (uint32_t x = 1; x <= 4; ++x)
        for (uint32_t y = 1; y <= 4; ++y)
            for (uint32_t z = 1; z <= 4; ++z) {
                torus_shape t{{x, y, z}};
                std::vector<channel> cycle;
                INFO(x << "x" << y << "x" << z);
                REQUIRE(acyclic(channel_dependencies(t, true), &cycle));
            }
}

TEST_CASE("routing: without the dateline a ring of 4 or more has a dependency cycle (the check can fail)", "[multichip]") {
    for (uint32_t n : {4u, 5u, 8u}) {
        std::vector<channel> cycle;
        REQUIRE_FALSE(acyclic(channel_dependencies(torus_shape{{n, 1, 1}}, false), &cycle));
        REQUIRE(cycle.size() >= 2);
    }
    REQUIRE_FALSE(acyclic(channel_dependencies(torus_shape{{4, 4, 4}}, false)));
}

TEST_CASE("global address: chip id above 42 local bits, bit 63 marks global", "[multichip]") {
    uint64_t a = global_address(1023, 0x123456789ull);
    REQUIRE(is_global(a));
    REQUIRE_FALSE(is_global(0x123456789ull));
    REQUIRE(chip_of(a) == 1023);
    REQUIRE(local_of(a) == 0x123456789ull);
    REQUIRE(chip_of(global_address(uint32_t(MAX_CHIPS - 1), LOCAL_MASK)) == MAX_CHIPS - 1);
    REQUIRE(local_of(global_address(5, LOCAL_MASK)) == LOCAL_MASK);
    REQUIRE(a == (uint64_t(1) << 63 | uint64_t(1023) << 42 | 0x123456789ull));
}

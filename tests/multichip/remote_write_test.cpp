// A DMA on one chip writes another chip's memory by global address, through the fabric routers and links (TLM).
#include <catch2/catch.hpp>

#include <systemc>

#include "models/link/global_address.h"
#include "platforms/cluster/cluster.h"
#include "platforms/config/platform_config.h"

using namespace trnsim;

namespace {
struct writer : sc_core::sc_module {
    platform::multichip_platform& plat;
    uint32_t src, dst;
    uint64_t bytes;
    uint64_t done_ps = 0;
    SC_HAS_PROCESS(writer);
    writer(sc_core::sc_module_name n, platform::multichip_platform& p, uint32_t s, uint32_t d, uint64_t b)
        : sc_module(n), plat(p), src(s), dst(d), bytes(b) {
        SC_THREAD(run);
    }
    void run() { done_ps = plat.chip(src).copy(0x1000, link::global_address(dst, 0x20000), bytes); }
};
}  // namespace

TEST_CASE("fabric: chip 0 writes chip 5's memory by address over the ring, with hop timing", "[multichip]") {
    auto cfg = platform::load_platform("ring-8", {});
    platform::multichip_platform plat("plat", cfg);
    const uint64_t B = 256 * 1024;
    std::vector<uint8_t> data(B), got(B, 0);
    for (size_t i = 0; i < B; ++i) data[i] = uint8_t(i * 7 + 3);
    plat.chip(0).load(0x1000, data.data(), B);
    writer w("w", plat, 0, 5, B);
    sc_core::sc_start();
    plat.chip(5).dump(0x20000, got.data(), B);
    REQUIRE(got == data);
    // Untouched elsewhere: chip 4 (on the way) and chip 5 outside the window.
    std::vector<uint8_t> other(B, 1);
    plat.chip(4).dump(0x20000, other.data(), B);
    REQUIRE(std::all_of(other.begin(), other.end(), [](uint8_t v) { return v == 0; }));
    // 0 -> 5 on a ring of 8 is 3 hops backwards (5 = 0 - 3); time = DMA cost + 3 x (link latency + packet) +
    // bytes / effective link rate + memory latency.
    const auto& lp = cfg.multichip.links[0];
    const auto& c = cfg.multichip.light;
    double want = c.dma_latency_ns + 4096 / c.dma_gbps + 3 * (lp.latency_ns + lp.packet_ns()) +
                  double(B) / lp.effective_gbps() + c.hbm_latency_ns;
    REQUIRE(double(w.done_ps) / 1000 == Approx(want).epsilon(0.01));
    uint64_t bytes_on_links = 0;
    for (auto& l : plat.servers[0]->links) bytes_on_links += l.l->a2b.timeline().bytes() + l.l->b2a.timeline().bytes();
    REQUIRE(bytes_on_links == 3 * B);
}

TEST_CASE("fabric: a write to a chip beyond the platform is an address error", "[multichip]") {
    auto cfg = platform::load_platform("ring-8", {});
    platform::multichip_platform plat("plat", cfg);
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
    writer w("w", plat, 0, 9, 64);
    REQUIRE_THROWS_WITH(sc_core::sc_start(), Catch::Contains("DMA write failed") && Catch::Contains("ADDRESS_ERROR"));
}

TEST_CASE("fabric: across servers the transfer goes NIC, switch, NIC", "[multichip]") {
    auto cfg = platform::load_platform("cluster-4x16", {});
    platform::multichip_platform plat("plat", cfg);
    const uint64_t B = 1 << 20;
    std::vector<uint8_t> data(B);
    for (size_t i = 0; i < B; ++i) data[i] = uint8_t(i ^ 0x5a);
    plat.chip(3).load(0x1000, data.data(), B);
    writer w("w", plat, 3, 40, B);
    sc_core::sc_start();
    std::vector<uint8_t> got(B);
    plat.chip(40).dump(0x20000, got.data(), B);
    REQUIRE(got == data);
    REQUIRE(plat.net->tx()[3].bytes() == B);
    REQUIRE(plat.net->rx()[40].bytes() == B);
    // Bounded below by the NIC's rate and the ~15 us HBM-to-HBM latency of the preset.
    double nic = cfg.multichip.network.nic.effective_gbps();
    REQUIRE(double(w.done_ps) / 1000 > double(B) / nic + 2 * cfg.multichip.network.nic.latency_ns);
    REQUIRE(double(w.done_ps) / 1000 < double(B) / nic + 20000);
}

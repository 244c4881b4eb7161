// Plain-C++ infrastructure: address map, bandwidth port, statistics, DMA descriptors, config reader, TE timing.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "models/dma/dma_descriptor.h"
#include "models/tensor_engine/pe_array.h"
#include "models/tensor_engine/te_timing.h"
#include "tlm/config/config_node.h"
#include "tlm/address_map.h"
#include "tlm/bw_port.h"
#include "tlm/sparse_store.h"
#include "tlm/stats.h"
#include "tlm/time_bins.h"

using namespace trnsim;

TEST_CASE("address map decodes ranges and rejects overlaps", "[tlm]") {
    tlmx::address_map m;
    m.add(0x1000, 0x1000, 0, "a");
    m.add(0x3000, 0x100, 1, "b");
    REQUIRE(m.decode(0x1000, 1)->name == "a");
    REQUIRE(m.decode(0x1fff, 1)->name == "a");
    REQUIRE(m.decode(0x1ff0, 0x10)->port == 0);
    REQUIRE(m.decode(0x1ff0, 0x11) == nullptr);  // straddles the end
    REQUIRE(m.decode(0x2000, 4) == nullptr);     // hole
    REQUIRE(m.decode(0xfff, 1) == nullptr);
    REQUIRE(m.decode(0x30ff, 1)->name == "b");
    REQUIRE_THROWS_WITH(m.add(0x1800, 0x1000, 2, "c"), Catch::Contains("'c'") && Catch::Contains("overlaps 'a'"));
    REQUIRE_THROWS_WITH(m.add(0x9000, 0, 2, "z"), Catch::Contains("size 0"));
}

TEST_CASE("bandwidth port serialises transfers", "[tlm]") {
    tlmx::bw_port p(2.0, 1000);  // 2 B/ns, 1 ns latency
    REQUIRE(p.reserve(0, 1000) == 500000 + 1000);          // 1000 B at 2 B/ns = 500 ns
    REQUIRE(p.reserve(100000, 1000) == 1000000 + 1000);    // queued behind the first
    REQUIRE(p.wait_ps() == 400000);
    REQUIRE(p.reserve(2000000, 2) == 2001000 + 1000);      // idle port: no queueing
    REQUIRE(p.busy_ps() == 1001000);
    REQUIRE(p.bytes() == 2002);
}

TEST_CASE("bandwidth port rounding is std::llround's for every duration", "[tlm]") {
    // The hot path rounds without the library call; it must agree with llround (half away from zero) everywhere,
    // halves and the doubles next to them included.
    std::mt19937_64 g(7);
    for (int i = 0; i < 200000; ++i) {
        const double x = i < 100000 ? std::ldexp(double(g() >> 11), -int(g() % 40)) : double(g() % 4000000) / 2.0;
        for (const double v : {x, std::nextafter(x, 0.0), std::nextafter(x, 1e300)}) {
            INFO(v);
            REQUIRE(tlmx::bw_port::round_ps(v) == uint64_t(std::llround(v)));
        }
    }
}

TEST_CASE("statistics: counters, formulas, histograms, groups", "[tlm]") {
    stats::group g("chip");
    stats::group sub("hbm");
    stats::counter c("bytes", "B", "bytes moved");
    stats::formula f("twice", "B", "twice the bytes", [&] { return 2 * c.value(); });
    stats::histogram h("lat", "ns", "latency", 10, 10);
    g.add(sub);
    sub.add(c);
    sub.add(f);
    sub.add(h);
    c += 21;
    for (int i = 1; i <= 100; ++i) h.sample(i);
    h.sample(1000);  // overflow bucket
    REQUIRE(g.value("hbm.bytes") == 21);
    REQUIRE(g.value("hbm.twice") == 42);
    REQUIRE(h.count() == 101);
    REQUIRE(h.max() == 1000);
    REQUIRE(h.percentile(0.5) == Approx(60));  // 51st of 101 samples is 51, in bucket [50, 60)
    REQUIRE(h.percentile(1.0) == 1000);
    auto flat = g.flatten();
    REQUIRE(flat.count("chip.hbm.lat.p99"));
    REQUIRE_THROWS(g.value("hbm.nothing"));
    g.reset();
    REQUIRE(g.value("hbm.bytes") == 0);
    REQUIRE(h.count() == 0);
}

// Amounts spread over intervals, read up to any time: exact at bin boundaries against the sum of each interval's
// share before t, within a bin's amounts inside one.
TEST_CASE("time bins sum amounts spread over time up to any instant", "[tlm]") {
    const uint64_t W = 1000;
    trnsim::tlmx::time_bins b(W);
    struct iv { uint64_t b, e; double a; };
    const std::vector<iv> adds = {{0, 0, 2.0},        {150, 350, 4.0},   {900, 5100, 42.0}, {4200, 4200, 1.5},
                                  {2000, 3000, 10.0}, {2500, 2600, 3.0}, {9999, 10001, 8.0}};
    for (const auto& x : adds) b.add(x.b, x.e, x.a);
    auto exact = [&](uint64_t t) {  // the share of each amount before t
        double s = 0;
        for (const auto& x : adds) {
            if (x.e <= x.b) s += x.b < t ? x.a : 0.0;
            else s += x.a * double(std::min(std::max(t, x.b), x.e) - x.b) / double(x.e - x.b);
        }
        return s;
    };
    for (uint64_t t = 0; t <= 12000; t += W) {
        INFO("t " << t);
        CHECK(b.until(t) == Approx(exact(t)).margin(1e-9));
    }
    CHECK(b.until(20000) == Approx(2.0 + 4.0 + 42.0 + 1.5 + 10.0 + 3.0 + 8.0));
    CHECK(b.until(4500) == Approx(exact(4500)).margin(1.5 + 42.0 / 4.2));  // inside a bin: within its amounts
    CHECK(trnsim::tlmx::time_bins().until(5000) == 0.0);
}

TEST_CASE("sparse store reads zeros where nothing was written", "[tlm]") {
    tlmx::sparse_store s(1ull << 40);
    uint8_t buf[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    s.write((1ull << 39) - 4, buf, 8);  // crosses a page boundary
    s.read((1ull << 39) - 4, out, 8);
    REQUIRE(std::memcmp(buf, out, 8) == 0);
    s.read(12345, out, 8);
    for (auto b : out) REQUIRE(b == 0);
    REQUIRE(s.resident_bytes() == 2 * tlmx::sparse_store::PAGE_SIZE);
}

TEST_CASE("DMA descriptors: validation, bursts, split across engines", "[dma]") {
    dma::dma_descriptor d;
    d.src = 0x1000;
    d.dst = 0x100000 + 100;
    d.row_bytes = 10000;
    d.rows = 3;
    d.src_stride = 10000;
    d.dst_stride = 16384;
    REQUIRE(dma::validate(d).empty());
    std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> b;
    dma::for_each_burst(d, 4096, [&](uint64_t s, uint64_t t, uint64_t n) { b.emplace_back(s, t, n); });
    uint64_t total = 0;
    for (auto& [s, t, n] : b) {
        REQUIRE(n <= 4096);
        REQUIRE((t % 4096) + n <= 4096);  // never crosses a burst boundary at the destination
        total += n;
    }
    REQUIRE(total == 30000);
    REQUIRE(std::get<2>(b[0]) == 4096 - 100);
    REQUIRE(dma::burst_count(d, 4096) == b.size());

    auto parts = dma::split_across_engines(d, 2, 4096);
    REQUIRE(parts.size() == 2);
    REQUIRE(parts[0].second.rows == 2);
    REQUIRE(parts[1].second.rows == 1);
    REQUIRE(parts[1].second.src == d.src + 10000);
    REQUIRE(parts[0].second.dst_stride == 2 * 16384);

    dma::dma_descriptor one;
    one.row_bytes = 10000;
    auto pieces = dma::split_across_engines(one, 4, 1024);
    uint64_t sum = 0;
    for (auto& [e, p] : pieces) sum += p.row_bytes;
    REQUIRE(sum == 10000);
    REQUIRE(pieces.size() == 4);

    // Accumulating copies: whole elements of their type, no checksum.
    dma::dma_descriptor acc;
    acc.src = 0x1000;
    acc.dst = 0x100000;
    acc.row_bytes = 4096;
    acc.reduce = numerics::dtype::fp32;
    REQUIRE(dma::validate(acc).empty());
    REQUIRE_THAT(dma::to_string(acc), Catch::Contains("accumulating fp32"));
    dma::dma_descriptor bad = acc;
    bad.dst += 2;
    REQUIRE_THAT(dma::validate(bad), Catch::Contains("dst 1048578 is not a whole number of fp32 elements"));
    bad = acc;
    bad.row_bytes = 4094;
    REQUIRE_THAT(dma::validate(bad), Catch::Contains("row_bytes"));
    bad = acc;
    bad.checksum = 1;
    REQUIRE_THAT(dma::validate(bad), Catch::Contains("no checksum"));

    dma::dma_descriptor z = d;
    z.row_bytes = 0;
    REQUIRE_THAT(dma::validate(z), Catch::Contains("zero-length"));
    z = d;
    z.rows = 0;
    REQUIRE_THAT(dma::validate(z), Catch::Contains("rows is 0"));
    z = d;
    z.dst_stride = 100;
    REQUIRE_THAT(dma::validate(z), Catch::Contains("destination rows overlap"));
    z = d;
    z.src = ~0ull - 10;
    REQUIRE_THAT(dma::validate(z), Catch::Contains("wrap"));
}

TEST_CASE("config reader: key paths, types, ranges, unknown keys", "[config]") {
    auto j = config::parse_json(R"({"chip": {"core": {"te": {"rows": 64, "rowz": 1, "clock_ghz": "fast"}}}})", "t.json");
    auto te = config::node::root(j, "t.json").child("chip").child("core").child("te");
    REQUIRE(te.get_uint("rows", 128, 1, 1024) == 64);
    REQUIRE(te.get_uint("cols", 128, 1, 1024) == 128);
    REQUIRE_THROWS_WITH(te.get_double("clock_ghz", 1, 0, 10), Catch::StartsWith("chip.core.te.clock_ghz: expected a number"));
    REQUIRE_THROWS_WITH(te.get_uint("rows", 1, 128, 1024), Catch::Contains("out of range [128, 1024]"));
    REQUIRE_THROWS_WITH(te.finish(), Catch::StartsWith("chip.core.te.rowz: unknown key"));
    REQUIRE_THROWS_WITH(config::parse_json("{\n  \"a\": 1,\n  \"b\" 2\n}", "bad.json"), Catch::StartsWith("bad.json:3:"));
    nlohmann::json o = nlohmann::json::object();
    config::apply_override(o, "chip.core.te.rows=64");
    config::apply_override(o, "chip.hbm.model=dram");
    REQUIRE(o["chip"]["core"]["te"]["rows"] == 64);
    REQUIRE(o["chip"]["hbm"]["model"] == "dram");
    REQUIRE_THROWS_WITH(config::apply_override(o, "novalue"), Catch::Contains("expected key.path=value"));
    REQUIRE_THROWS_WITH(config::apply_override(o, "chip.core.te.rows.x=1"), Catch::Contains("is not an object"));
}

TEST_CASE("Tensor Engine timing follows the documented formula", "[te]") {
    te::te_config c;  // 128x128, ls 4, min_ii 64, pipeline 2
    te::te_timing t(c);
    using numerics::dtype;
    // Isolated instruction: W + T + D.
    auto s0 = t.schedule(dtype::bf16, 128, 512, 0);
    REQUIRE(s0.load_start == 0);
    REQUIRE(s0.load_end == 32);
    REQUIRE(s0.stream_start == 32);
    REQUIRE(s0.done == 32 + 512 + 128 + 128 + 2);
    // Back to back: the next streams right after the first (weights loaded in the background).
    auto s1 = t.schedule(dtype::bf16, 128, 512, 0);
    REQUIRE(s1.load_start == 32);
    REQUIRE(s1.stream_start == 32 + 512);
    // Short moving tiles are limited by min_ii; FP32 takes fp32_passes per column.
    auto s2 = t.schedule(dtype::fp32, 100, 10, 0);
    REQUIRE(s2.stream_start == s1.stream_start + 512);
    REQUIRE(s2.load_end == s2.load_start + 25);
    auto s3 = t.schedule(dtype::bf16, 128, 512, 0);
    REQUIRE(s3.stream_start == s2.stream_start + 64);  // max(10 * 4, 64)
    // A late operand delays the load.
    auto s4 = t.schedule(dtype::bf16, 128, 512, 100000);
    REQUIRE(s4.load_start == 100000);
    REQUIRE(s4.stream_start == 100032);
    // FP8 double row halves the PE rows used.
    c.fp8_double_row = true;
    te::te_timing t2(c);
    REQUIRE(t2.k_rows(dtype::fp8_e4m3, 256) == 128);
    REQUIRE(t2.weight_load_cycles(dtype::fp8_e4m3, 256) == 32);
    REQUIRE(t2.k_rows(dtype::bf16, 128) == 128);
}

TEST_CASE("PE array arithmetic: k order, separate roundings, canonical NaN", "[te]") {
    // With y = (0 + 1e8*1) + (-1e8*1) + 1*1, FP32 rounding order matters: the exact result is 1.
    const uint32_t k = 3, m = 5, n = 37;  // edges of the register blocks
    std::vector<float> S(k * m), X(k * n), Y(m * n);
    for (uint32_t c = 0; c < m; ++c) {
        S[0 * m + c] = 1e8f;
        S[1 * m + c] = -1e8f;
        S[2 * m + c] = 1.0f;
    }
    for (uint32_t j = 0; j < n; ++j) X[0 * n + j] = X[1 * n + j] = X[2 * n + j] = 1.0f + float(j) * 1e-7f;
    te::pe_array_compute(S.data(), X.data(), k, m, n, Y.data());
    for (uint32_t c = 0; c < m; ++c)
        for (uint32_t j = 0; j < n; ++j) {
            float x = X[j];
            float ref = 0.0f;
            ref = ref + 1e8f * x;
            ref = ref + -1e8f * x;
            ref = ref + 1.0f * x;
            REQUIRE(Y[c * n + j] == ref);
        }
    // Inf * 0 gives NaN, written as the canonical quiet NaN.
    S[0] = std::numeric_limits<float>::infinity();
    X[0] = 0.0f;
    te::pe_array_compute(S.data(), X.data(), k, m, n, Y.data());
    uint32_t bits;
    std::memcpy(&bits, &Y[0], 4);
    REQUIRE(bits == numerics::canonical_nan_bits);
}

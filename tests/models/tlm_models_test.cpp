// SystemC-level tests of the TLM infrastructure and memory-like models. One kernel per test case (own process).
#include <catch2/catch.hpp>

#include <cstring>
#include <numeric>
#include <random>
#include <utility>

#include "models/dma/dma_engine.h"
#include "models/hbm/hbm_simple.h"
#include "models/numerics/dtype.h"
#include "models/sram/sram.h"
#include "tests/support/testbench_thread.h"
#include "tlm/ext_accumulate.h"
#include "tlm/memory.h"
#include "tlm/router.h"
#include "tlm/scheduler.h"
#include "tlm/time.h"

using namespace trnsim;
using sc_core::sc_time;
using sc_core::SC_NS;

TEST_CASE("time conversions: the resolution is 1 ps and to_ps / from_ps are exact", "[tlm][time]") {
    REQUIRE(sc_core::sc_get_time_resolution() == sc_core::sc_time(1, sc_core::SC_PS));
    std::mt19937_64 g(3);
    for (int i = 0; i < 100000; ++i) {
        const uint64_t ps = g() % 1000000000000000ull;  // below 1000 s
        const sc_core::sc_time t(double(ps), sc_core::SC_PS);  // what the conversions replaced
        REQUIRE(tlmx::from_ps(ps) == t);
        REQUIRE(tlmx::to_ps(t) == uint64_t(t.to_seconds() * 1e12 + 0.5));
    }
}

TEST_CASE("router decodes, subtracts bases, and answers unmapped addresses with an address error", "[tlm][router]") {
    tlmx::memory_config mc;
    mc.size = 0x1000;
    mc.read_latency = sc_time(10, SC_NS);
    tlmx::memory m0("m0", mc), m1("m1", mc);
    tlmx::router r("noc", sc_time(1, SC_NS));
    r.map(0x10000, 0x1000, 0, "m0");
    r.map(0x20000, 0x1000, 1, "m1");
    r.out.bind(m0.in);
    r.out.bind(m1.in);
    int seen = 0;
    r.observe([&](const tlmx::tx_event& e) { ++seen; (void)e; });
    test::stimulus s("tb", [&](test::stimulus& t) {
        uint32_t v = 0xdeadbeef, back = 0;
        sc_time d = sc_core::SC_ZERO_TIME;
        REQUIRE(t.write(0x20010, &v, 4, d) == tlm::TLM_OK_RESPONSE);
        REQUIRE(d == sc_time(1, SC_NS));
        uint32_t raw = 0;
        m1.store().read(0x10, &raw, 4);  // the target saw the offset, not the global address
        REQUIRE(raw == v);
        d = sc_core::SC_ZERO_TIME;
        REQUIRE(t.read(0x20010, &back, 4, d) == tlm::TLM_OK_RESPONSE);
        REQUIRE(back == v);
        REQUIRE(d == sc_time(11, SC_NS));
        REQUIRE(t.read(0x30000, &back, 4, d) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
        REQUIRE(t.read(0x10ffe, &back, 4, d) == tlm::TLM_ADDRESS_ERROR_RESPONSE);  // straddles the end
        REQUIRE_THAT(r.last_error(), Catch::Contains("noc: no target for read 4 bytes at 0x10ffe"));
        REQUIRE(r.stats().value("address_errors") == 2);
    });
    s.out.bind(r.in);
    s.run();
    REQUIRE(seen == 4);
}

TEST_CASE("memory target: data, DMI window, debug transport, bad payloads", "[tlm][memory]") {
    tlmx::memory_config mc;
    mc.size = 1 << 20;
    tlmx::memory m("mem", mc);
    test::stimulus s("tb", [&](test::stimulus& t) {
        std::vector<uint8_t> data(3000), back(3000);
        std::iota(data.begin(), data.end(), 0);
        sc_time d;
        REQUIRE(t.write(70000, data.data(), data.size(), d) == tlm::TLM_OK_RESPONSE);
        tlm::tlm_generic_payload gp;
        tlm::tlm_dmi dmi;
        gp.set_address(70000);
        REQUIRE(t.out->get_direct_mem_ptr(gp, dmi));
        REQUIRE(dmi.get_start_address() <= 70000);
        REQUIRE(dmi.get_end_address() >= 70000);
        REQUIRE(dmi.get_dmi_ptr()[70000 - dmi.get_start_address()] == data[0]);
        REQUIRE(tlmx::debug_transport(t.out, tlm::TLM_READ_COMMAND, 70000, back.data(), back.size()) == back.size());
        REQUIRE(back == data);
        REQUIRE(t.read((1 << 20) - 2, back.data(), 4, d) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    });
    s.out.bind(m.in);
    s.run();
}

TEST_CASE("a bandwidth-limited interconnect port makes two initiators contend", "[tlm][router]") {
    tlmx::memory_config mc;
    mc.size = 1 << 20;
    tlmx::memory m("mem", mc);
    tlmx::router r("noc");
    r.map(0, 1 << 20, 0, "mem");
    r.out.bind(m.in);
    r.limit_port(0, 10.0);  // 10 B/ns
    sc_time end_a, end_b;
    auto body = [&](sc_time& end) {
        return [&](test::stimulus& t) {
            std::vector<uint8_t> buf(1000);
            for (int i = 0; i < 10; ++i) {
                sc_time d;
                REQUIRE(t.write(0, buf.data(), buf.size(), d) == tlm::TLM_OK_RESPONSE);
                sc_core::wait(d);
            }
            end = sc_core::sc_time_stamp();
        };
    };
    test::stimulus a("a", body(end_a), false), b("b", body(end_b), false);
    a.out.bind(r.in);
    b.out.bind(r.in);
    sc_core::sc_start();
    // 20 x 1000 B at 10 B/ns = 2 us in total for both, so the later one ends at 2 us (alone it would be 1 us).
    REQUIRE(std::max(end_a, end_b) == sc_time(2000, SC_NS));
    REQUIRE(std::min(end_a, end_b) >= sc_time(1900, SC_NS));
}

TEST_CASE("SRAM: partitions, banks contend, PSUM accumulates FP32 with canonical NaN", "[sram]") {
    sram::sram_config c;
    c.partitions = 8;
    c.partition_bytes = 1024;
    c.banks = 2;  // partitions 0-3 bank 0, 4-7 bank 1
    c.bank_bytes_per_ns = 1;
    c.accumulate = true;
    sram::sram mem("psum", c);
    test::stimulus s("tb", [&](test::stimulus& t) {
        float v[4] = {1.5f, 2.0f, 1e30f, std::numeric_limits<float>::infinity()};
        float w[4] = {0.25f, -2.0f, 1e30f, -std::numeric_limits<float>::infinity()};
        sc_time d;
        REQUIRE(t.write(0, v, 16, d) == tlm::TLM_OK_RESPONSE);
        REQUIRE(d == sc_time(16, SC_NS));
        sc_time d2 = d;  // same bank: queued behind the first
        REQUIRE(t.write(1024, v, 16, d2) == tlm::TLM_OK_RESPONSE);
        REQUIRE(d2 == sc_time(32, SC_NS));
        sc_time d3 = d;  // another bank: parallel
        REQUIRE(t.write(4 * 1024, v, 16, d3) == tlm::TLM_OK_RESPONSE);
        REQUIRE(d3 == sc_time(32, SC_NS));
        tlmx::ext_accumulate* ext = new tlmx::ext_accumulate;
        REQUIRE(tlmx::transport(t.out, t.pool, tlm::TLM_WRITE_COMMAND, 0, w, 16, d, ext) == tlm::TLM_OK_RESPONSE);
        float r[4];
        REQUIRE(t.read(0, r, 16, d) == tlm::TLM_OK_RESPONSE);
        REQUIRE(r[0] == 1.75f);
        REQUIRE(r[1] == 0.0f);
        REQUIRE(r[2] == 2e30f);
        uint32_t bits;
        std::memcpy(&bits, &r[3], 4);
        REQUIRE(bits == numerics::canonical_nan_bits);  // Inf + -Inf
        REQUIRE(t.read(8 * 1024, r, 4, d) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    });
    s.out.bind(mem.in);
    s.run();
}

namespace {
// A DMA engine between a source memory and a destination memory behind a router.
struct dma_bench {
    tlmx::memory_config mc{1 << 20, sc_time(100, SC_NS), sc_time(50, SC_NS), 0, true};
    tlmx::memory src{"src", mc}, dst{"dst", mc};
    tlmx::router noc{"noc"};
    dma::dma_config dc;
    std::unique_ptr<dma::dma_engine> eng;
    explicit dma_bench(dma::dma_config c) : dc(c) {
        noc.map(0x000000, 1 << 20, 0, "src");
        noc.map(0x100000, 1 << 20, 1, "dst");
        noc.out.bind(src.in);
        noc.out.bind(dst.in);
        eng = std::make_unique<dma::dma_engine>("dma", dc);
        eng->out.bind(noc.in);
    }
};
// An engine of `gbps` with bursts of at most `max_burst` bytes, no descriptor latency.
dma::dma_config engine_config(double gbps, uint64_t max_burst, uint32_t outstanding = 16) {
    dma::dma_config c;
    c.engine_gbps = gbps;
    c.max_burst = max_burst;
    c.outstanding = outstanding;
    c.descriptor_latency_ns = 0;
    return c;
}
} // namespace

TEST_CASE("DMA: 2D strided copy lands exactly, at the engine's bandwidth", "[dma]") {
    dma_bench b(engine_config(10, 256, 64));
    std::vector<uint8_t> pattern(1 << 16);
    for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = uint8_t(i * 131 + 7);
    b.src.store().write(0, pattern.data(), pattern.size());
    dma::dma_descriptor d;
    d.src = 100;
    d.src_stride = 1000;
    d.dst = 0x100000 + 4096;
    d.dst_stride = 2048;
    d.row_bytes = 700;
    d.rows = 50;
    sc_time done;
    b.eng->submit(d, [&] { done = sc_core::sc_time_stamp(); });
    sc_core::sc_start();
    for (uint32_t r = 0; r < d.rows; ++r) {
        std::vector<uint8_t> row(700);
        b.dst.store().read(4096 + r * 2048, row.data(), 700);
        REQUIRE(std::memcmp(row.data(), pattern.data() + 100 + r * 1000, 700) == 0);
    }
    uint8_t gap[4];
    b.dst.store().read(4096 + 700, gap, 4);  // nothing written between rows
    REQUIRE((gap[0] | gap[1] | gap[2] | gap[3]) == 0);
    // 35000 bytes at 10 GB/s = 3.5 us of datapath, plus the last burst's read + write latency (150 ns).
    REQUIRE(done.to_seconds() * 1e9 == Approx(3500 + 150).margin(30));
    REQUIRE(b.eng->stats().value("bytes") == 35000);
}

TEST_CASE("DMA: an accumulating copy adds the source into the destination, bit-exactly, at half the copy rate", "[dma]") {
    dma_bench b(engine_config(10, 256, 64));
    const size_t n = 3000;  // BF16 elements: 6000 bytes, 24 bursts of <= 256 B
    std::vector<float> x(n), y(n);
    for (size_t i = 0; i < n; ++i) {
        x[i] = float(i % 97) * 0.37f - 11.0f;
        y[i] = float(i % 89) * -0.21f + 3.5f;
    }
    std::vector<uint8_t> xs(2 * n), ys(2 * n);
    numerics::encode(numerics::dtype::bf16, x.data(), xs.data(), n);
    numerics::encode(numerics::dtype::bf16, y.data(), ys.data(), n);
    b.src.store().write(512, xs.data(), xs.size());
    b.dst.store().write(1024, ys.data(), ys.size());
    dma::dma_descriptor d;
    d.src = 512;
    d.dst = 0x100000 + 1024;
    d.row_bytes = 2 * n;
    d.reduce = numerics::dtype::bf16;
    REQUIRE(dma::validate(d).empty());
    sc_time done;
    b.eng->submit(d, [&] { done = sc_core::sc_time_stamp(); });
    sc_core::sc_start();
    // The reference rule: decode both, add in FP32, round once (what the collectives' reference executor does).
    std::vector<uint8_t> want = ys, got(2 * n);
    std::vector<float> ta, tb;
    numerics::accumulate(numerics::dtype::bf16, want.data(), xs.data(), n, ta, tb);
    b.dst.store().read(1024, got.data(), got.size());
    REQUIRE(got == want);
    REQUIRE(got != ys);
    // Both operands stream through the datapath: 12000 bytes at 10 GB/s = 1.2 us, plus the last burst's source
    // read, destination read and write (100 + 100 + 50 ns).
    REQUIRE(done.to_seconds() * 1e9 == Approx(1200 + 250).margin(30));
    REQUIRE(b.eng->stats().value("bytes") == 6000);
}

TEST_CASE("DMA: few outstanding bursts make a transfer latency-bound", "[dma]") {
    dma_bench b(engine_config(100, 1024, 1));
    dma::dma_descriptor d;
    d.dst = 0x100000;
    d.row_bytes = 10000;
    sc_time done;
    b.eng->submit(d, [&] { done = sc_core::sc_time_stamp(); });
    sc_core::sc_start();
    // One burst at a time (10 bursts of <= 1024 B): each lands after its read + write latency (150 ns), which
    // hides its ~10 ns on the datapath -> 10 x 150 ns. With enough outstanding bursts it would take ~100 ns.
    REQUIRE(b.eng->stats().value("bursts") == 10);
    REQUIRE(done.to_seconds() * 1e9 == Approx(1500).margin(1));
}

TEST_CASE("DMA: queue statistics: time in the engine and the wait behind older descriptors", "[dma]") {
    dma_bench b(engine_config(10, 4096));  // 1000 B: 100 ns on the datapath
    dma::dma_descriptor d;
    d.dst = 0x100000;
    d.row_bytes = 1000;
    b.eng->submit(d, [] {});
    d.dst += 4096;
    b.eng->submit(d, [] {});  // eligible at 0 too, but its burst waits for the datapath until 100 ns
    sc_core::sc_start();
    // A burst lands at the later of its datapath end and its issue plus the memories' latencies (100 + 50 ns):
    // the first at max(100, 0 + 150) = 150 ns, the second at max(200, 100 + 150) = 250 ns.
    REQUIRE(b.eng->stats().value("queued_ns") == Approx(150 + 250));
    REQUIRE(b.eng->stats().value("wait_ns") == Approx(100));
}

TEST_CASE("DMA: a control write goes at the engine's next burst; data keeps its order", "[dma]") {
    dma_bench b(engine_config(10, 1000));  // a 1000 B burst: 100 ns on the datapath, lands 150 ns after its issue
    dma::dma_descriptor copy, word;
    copy.dst = 0x100000;
    copy.row_bytes = 20000;  // 20 bursts: 2 us of datapath
    word.src = 0x8000, word.dst = 0x100000 + 0x10000;
    word.row_bytes = 8;  // one burst
    sc_time copy_done, data_word, control_word;
    b.eng->submit(copy, [&] { copy_done = sc_core::sc_time_stamp(); });
    b.eng->submit(word, [&] { data_word = sc_core::sc_time_stamp(); });
    word.dst += 64;
    word.control = true;  // a semaphore write
    REQUIRE(dma::validate(word).empty());
    b.eng->submit(word, [&] { control_word = sc_core::sc_time_stamp(); });
    sc_core::sc_start();
    // The control write goes after the copy's first burst (datapath until 100 ns) and lands 150 ns after its issue,
    // not behind the whole copy; the data word waits for the copy, which lost 0.8 ns of datapath to the control write.
    CHECK(control_word.to_seconds() * 1e9 == Approx(100 + 150).margin(1));
    CHECK(copy_done.to_seconds() * 1e9 == Approx(2000 + 0.8 + 50).margin(100));
    CHECK(copy_done.to_seconds() * 1e9 > 2000);
    CHECK(data_word.to_seconds() * 1e9 > 2000);
    CHECK(b.eng->stats().value("bytes") == 20016);
}

TEST_CASE("DMA: a control write of more than 64 bytes or accumulating is refused", "[dma]") {
    dma::dma_descriptor d;
    d.dst = 0x1000;
    d.row_bytes = 72;
    d.control = true;
    CHECK_THAT(dma::validate(d), Catch::Contains("a control write moves at most 64 bytes") && Catch::Contains("72 bytes"));
    d.row_bytes = 8;
    CHECK(dma::validate(d).empty());
    d.reduce = numerics::dtype::fp32;
    CHECK_THAT(dma::validate(d), Catch::Contains("accumulates nothing"));
    CHECK_THAT(dma::to_string(dma::dma_descriptor{}), !Catch::Contains("control"));
    d.reduce.reset();
    CHECK_THAT(dma::to_string(d), Catch::Contains(", control}"));
}

TEST_CASE("DMA: a bus error is reported with the engine's name and the address", "[dma]") {
    dma::dma_config c;
    dma_bench b(c);
    dma::dma_descriptor d;
    d.src = 0x300000;  // unmapped
    d.dst = 0x100000;
    d.row_bytes = 64;
    b.eng->submit(d, [] {});
    REQUIRE_THROWS_WITH(sc_core::sc_start(), Catch::Contains("dma") && Catch::Contains("ADDRESS_ERROR") &&
                                                 Catch::Contains("0x300000"));
}

namespace {
// Logs (time in ns, tag) of each callback; can schedule one more for the same instant from its callback.
struct logging_client : tlmx::timed_client {
    std::vector<std::pair<uint64_t, uint64_t>>& log;
    uint32_t rank;
    uint64_t then_tag = 0;  // non-zero: at its first call, schedules this tag at the same instant with rank 0
    logging_client(std::vector<std::pair<uint64_t, uint64_t>>& l, uint32_t r) : log(l), rank(r) {}
    void on_time(uint64_t tag) override {
        log.emplace_back(tlmx::now_ps() / 1000, tag);
        if (then_tag) tlmx::scheduler::get().call_at(tlmx::now_ps(), 0, this, std::exchange(then_tag, 0));
    }
};
} // namespace

TEST_CASE("scheduler: what is due at one instant runs in rank order, whatever order it was scheduled in", "[tlm][scheduler]") {
    std::vector<std::pair<uint64_t, uint64_t>> log;
    logging_client c5(log, 5), c1(log, 1), c3(log, 3), c9(log, 9);
    c3.then_tag = 100;  // scheduled during the round at 100 ns: runs in the next round, after rank 5
    auto& s = tlmx::scheduler::get();
    s.call_at(100000, 5, &c5, 5);
    s.call_at(100000, 1, &c1, 1);
    s.call_at(100000, 3, &c3, 3);
    s.call_at(50000, 9, &c9, 9);  // earlier, scheduled last
    s.call_at(100000, 1, &c1, 11);  // same rank: in the order scheduled
    sc_core::sc_start();
    const std::vector<std::pair<uint64_t, uint64_t>> want{{50, 9}, {100, 1}, {100, 11}, {100, 3}, {100, 5}, {100, 100}};
    REQUIRE(log == want);
    REQUIRE(s.pending() == 0);
}

TEST_CASE("scheduler: threads resumed at one instant run in rank order", "[tlm][scheduler]") {
    std::vector<int> order;
    std::vector<std::unique_ptr<tlmx::timed_thread>> clocks;
    for (int i = 0; i < 4; ++i) clocks.push_back(std::make_unique<tlmx::timed_thread>());  // ranks ascending
    for (int i = 3; i >= 0; --i)  // spawned (and so waiting) in the reverse order
        sc_core::sc_spawn([&, i] {
            clocks[size_t(i)]->wait_for(sc_time(i == 2 ? 5 : 10, SC_NS));
            order.push_back(i);
        });
    sc_core::sc_start();
    REQUIRE(order == std::vector<int>{2, 0, 1, 3});
    REQUIRE(sc_core::sc_time_stamp() == sc_time(10, SC_NS));
}

TEST_CASE("DMA: bursts two engines issue at one instant reach a shared port in the engines' rank order", "[dma]") {
    const dma::dma_config c = engine_config(100, 4096);
    dma_bench b(c);  // its engine is built first: the lower rank
    auto second = std::make_unique<dma::dma_engine>("dma_b", c);
    second->out.bind(b.noc.in);
    b.noc.limit_port(0, 10.0);  // source reads share 10 B/ns
    dma::dma_descriptor d;
    d.dst = 0x100000;
    d.row_bytes = 1000;
    sc_time first_done, second_done;
    second->submit(d, [&] { second_done = sc_core::sc_time_stamp(); });  // submitted first
    d.dst += 4096;
    b.eng->submit(d, [&] { first_done = sc_core::sc_time_stamp(); });
    sc_core::sc_start();
    // The lower rank reads first (100 ns on the port), the other queues behind it; both then add the memories'
    // latencies (100 + 50 ns).
    REQUIRE(first_done == sc_time(250, SC_NS));
    REQUIRE(second_done == sc_time(350, SC_NS));
}

TEST_CASE("simple HBM interleaves channels: parallel blocks finish together", "[hbm]") {
    hbm::hbm_config c;
    c.stacks = 1;
    c.channels_per_stack = 4;
    c.capacity_bytes = 1 << 24;
    c.bandwidth_gbps = 4;  // 1 B/ns per channel
    c.latency_ns = 100;
    c.interleave_bytes = 256;
    hbm::hbm_simple h("hbm", c);
    test::stimulus s("tb", [&](test::stimulus& t) {
        std::vector<uint8_t> buf(1024, 0x5a), back(1024);
        sc_time d;
        REQUIRE(t.write(0, buf.data(), 1024, d) == tlm::TLM_OK_RESPONSE);
        REQUIRE(d == sc_time(256 + 100, SC_NS));  // 4 blocks of 256 B on 4 channels in parallel
        sc_core::wait(d);
        d = sc_core::SC_ZERO_TIME;
        REQUIRE(t.write(1024, buf.data(), 256, d) == tlm::TLM_OK_RESPONSE);  // channel 0 again
        REQUIRE(d == sc_time(356, SC_NS));
        REQUIRE(t.read(0, back.data(), 1024, d) == tlm::TLM_OK_RESPONSE);
        REQUIRE(back == buf);
        REQUIRE(t.read(1 << 24, back.data(), 4, d) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    });
    s.out.bind(h.in);
    s.run();
}

TEST_CASE("simple HBM channel hashing spreads a power-of-two stride over all channels", "[hbm]") {
    hbm::hbm_config c;
    c.stacks = 1;
    c.channels_per_stack = 16;
    c.capacity_bytes = 1 << 26;
    c.bandwidth_gbps = 16;  // 1 B/ns per channel
    c.latency_ns = 0;
    c.interleave_bytes = 256;
    hbm::hbm_simple h("hbm", c);
    test::stimulus s("tb", [&](test::stimulus& t) {
        // 16 reads of 256 B at a stride of 16 blocks: without hashing all land on channel 0 (16 x 256 ns).
        std::vector<uint8_t> buf(256);
        sc_time worst;
        for (int i = 0; i < 16; ++i) {
            sc_time d;
            REQUIRE(t.read(uint64_t(i) * 16 * 256, buf.data(), 256, d) == tlm::TLM_OK_RESPONSE);
            worst = std::max(worst, d);
        }
        REQUIRE(worst == sc_time(256, SC_NS));  // every read on its own channel
    });
    s.out.bind(h.in);
    s.run();
}

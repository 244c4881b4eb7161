// Multi-chip platforms made of the modelled chip (issue 21): full chips joined by links, a DMA on one chip writing
// another chip's HBM and semaphore registers through NoC -> fabric router -> links -> fabric router -> NoC, and
// collectives lowered to the chips' own instruction streams (DMA, semaphores, Vector Engine), checked element by
// element against the reference executor and compared with the light chip.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <tuple>
#include <set>
#include <vector>

#include <systemc>

#include "models/link/global_address.h"
#include "platforms/cluster/cluster.h"
#include "platforms/config/platform_config.h"
#include "testbench/chip_probe.h"
#include "testbench/sim_run.h"
#include "testbench/workloads/collective/collective_run.h"
#include "testbench/workloads/collective/lowering.h"
#include "tests/support/child_process.h"
#include "tlm/bw_port.h"

using namespace trnsim;
using Catch::Matchers::Contains;

namespace {
platform::platform_config full(const std::string& preset, std::vector<std::string> sets = {}) {
    sets.push_back("chips.model=full");
    return platform::load_platform(preset, sets);
}
tb::collective_result run(const platform::platform_config& cfg, collective::op o, collective::algo a,
                          numerics::dtype t, uint64_t bytes, uint32_t chunks = 1) {
    collective::params p;
    p.o = o;
    p.a = a;
    p.dt = t;
    p.bytes = bytes;
    p.chunks = chunks;
    tb::collective_options opt;
    opt.sim.wall_limit_s = 120;
    return tb::run_collective(cfg, p, opt);
}
}  // namespace

TEST_CASE("gap_port: a reservation fills the idle time before a later one, FCFS otherwise", "[multichip][full]") {
    tlmx::gap_port p(1.0);  // 1 byte per ns: 1000 ps per byte
    REQUIRE(p.reserve(10'000'000, 1000) == 11'000'000);  // a transfer far in the future
    uint64_t start = 0;
    REQUIRE(p.reserve(0, 1000, &start) == 1'000'000);    // an earlier one is not queued behind it
    REQUIRE(start == 0);
    REQUIRE(p.reserve(500'000, 1000, &start) == 2'000'000);  // overlaps the first: starts when it ends
    REQUIRE(start == 1'000'000);
    REQUIRE(p.reserve(0, 9000, &start) == 11'000'000 + 9'000'000);  // no gap of 9 us before 11 us: after it
    REQUIRE(p.reserve(2'000'000, 8000, &start) == 10'000'000);       // exactly fills [2, 10) us
    REQUIRE(p.wait_ps() == 500'000 + 11'000'000);
    REQUIRE(p.busy_ps() == 20'000'000);
    p.forget_before(10'500'000);
    REQUIRE(p.intervals() == 1);  // [0, 20) us merged into one interval
}

TEST_CASE("full chips: chip 0's DMA writes chip 3's HBM and signals its core over the ring", "[multichip][full]") {
    auto cfg = full("ring-8");
    platform::multichip_platform plat("plat", cfg);
    auto* a = plat.full_chip(0);
    auto* b = plat.full_chip(3);
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE_THROWS_WITH(plat.chip(0), Contains("is a full chip"));
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    const uint64_t B = 64 * 1024, src = 0x10000, dst = 0x200000;
    std::vector<uint8_t> data(B), got(B), other(B, 0xEE);
    for (uint64_t i = 0; i < B; ++i) data[i] = uint8_t(i * 7 + 1);
    a->host_write(src, data.data(), B);
    b->host_write(dst, other.data(), B);
    // Chip 0 core 0: copy to chip 3, then signal chip 3 core 2's semaphore 0 (the copy's completion first).
    core::core_program pa;
    pa.semaphores = 1;
    pa.dma.resize(1);
    core::instruction cp;
    cp.op = core::opcode::dma;
    cp.dma.src = src;
    cp.dma.dst = link::global_address(3, dst);
    cp.dma.row_bytes = B;
    cp.signal = 0;
    pa.dma[0].push_back(cp);
    core::instruction sig;
    sig.op = core::opcode::dma;
    sig.waits = {{0, 1}};
    sig.dma.src = src;
    sig.dma.dst = link::global_address(3, b->sem_register(2, 0));
    sig.dma.row_bytes = 8;
    pa.dma[0].push_back(sig);
    a->cores[0]->load(pa);
    // Chip 3 core 2: waits for the signal, then copies what arrived to another place of its HBM.
    core::core_program pb;
    pb.semaphores = 2;
    pb.dma.resize(1);
    core::instruction back;
    back.op = core::opcode::dma;
    back.waits = {{0, 1}};
    back.dma.src = dst;
    back.dma.dst = dst + B;
    back.dma.row_bytes = B;
    back.signal = 1;
    pb.dma[0].push_back(back);
    b->cores[2]->load(pb);
    const tb::sim_probe probe = tb::make_cores_probe({a->cores[0].get(), b->cores[2].get()});
    tb::sim_options so;
    so.wall_limit_s = 60;
    tb::run_to_completion(probe, so);
    b->host_read(dst + B, got.data(), B);
    REQUIRE(got == data);
    REQUIRE(b->cores[2]->semaphore_value(0) == 1);
    double register_signals = -1;
    for (const auto& [k, v] : b->cores[2]->stats().flatten())
        if (k.size() > 16 && k.compare(k.size() - 16, 16, "register_signals") == 0) register_signals = v;
    REQUIRE(register_signals == 1);
    // Three hops each way at >= 500 ns of link latency: the signal cannot arrive before the data could.
    REQUIRE(b->cores[2]->last_completion() > sc_core::sc_time(3 * 500, sc_core::SC_NS));
    // Chip 1 and 2 forwarded (the route 0 -> 1 -> 2 -> 3); nothing was written to chip 1's HBM.
    std::vector<uint8_t> c1(B);
    plat.full_chip(1)->host_read(dst, c1.data(), B);
    REQUIRE(c1 == std::vector<uint8_t>(B, 0));
}

TEST_CASE("full chips: ring all-reduce in BF16 (2 chunks, uneven blocks) on 8 chips is bit-exact with the reference", "[multichip][full]") {
    auto cfg = full("ring-8");
    // An element count that no block or tile divides: ring blocks of unequal size, a short tile row.
    auto r = run(cfg, collective::op::allreduce, collective::algo::ring, numerics::dtype::bf16, 2 * (300'000 + 3), 2);
    REQUIRE(r.checked);
    INFO(r.first_mismatch);
    REQUIRE(r.pass);
    REQUIRE(r.lowered_vector > 0);
    REQUIRE(r.remote_signals > 0);
    REQUIRE(r.sim_ns > 0);
}

TEST_CASE("full chips: reductions as accumulating DMA copies (chip.collective_reduce=dma) are bit-exact, with no Vector Engine work", "[multichip][full]") {
    auto cfg = full("ring-8", {"chip.collective_reduce=dma"});
    auto r = run(cfg, collective::op::allreduce, collective::algo::ring, numerics::dtype::bf16, 2 * (300'000 + 3), 2);
    REQUIRE(r.checked);
    INFO(r.first_mismatch);
    REQUIRE(r.pass);
    REQUIRE(r.lowered_vector == 0);
    REQUIRE(r.stats["chip0.core0.vector.instructions"] + r.stats["chip0.core1.vector.instructions"] == 0);
    REQUIRE(r.sim_ns > 0);
}

namespace {
void check_torus(collective::op o, collective::algo a) {
    auto cfg = full("torus-4x4", {"server.dims=[2,2]"});
    auto r = run(cfg, o, a, numerics::dtype::fp32, 4 * 4 * 4096);
    INFO(collective::name_of(o) << ": " << r.first_mismatch);
    REQUIRE(r.checked);
    REQUIRE(r.pass);
}
}  // namespace

TEST_CASE("full chips: bidirectional-ring reduce-scatter on a 2x2 torus", "[multichip][full]") {
    check_torus(collective::op::reduce_scatter, collective::algo::bidir_ring);
}
TEST_CASE("full chips: all-gather on a 2x2 torus", "[multichip][full]") {
    check_torus(collective::op::allgather, collective::algo::ring);
}
TEST_CASE("full chips: torus all-reduce on a 2x2 torus", "[multichip][full]") {
    check_torus(collective::op::allreduce, collective::algo::torus);
}

namespace {
// Every element of every chip's output against the reference executor, and the algorithm really lowered.
void check_full(const platform::platform_config& cfg, collective::op o, collective::algo a, uint64_t bytes) {
    auto r = run(cfg, o, a, numerics::dtype::fp32, bytes);
    INFO(collective::name_of(o) << " (" << collective::name_of(a) << "): " << r.first_mismatch);
    REQUIRE(r.checked);
    REQUIRE(r.pass);
    REQUIRE(r.lowered_dma > 0);
    REQUIRE(r.sim_ns > 0);
}
}  // namespace

// Every algorithm the light chips run also runs lowered on full chips (issue 40).
TEST_CASE("full chips: direct all-reduce on 8 chips", "[multichip][full]") {
    check_full(full("ring-8"), collective::op::allreduce, collective::algo::direct, 8 * 8 * 1024);
}
TEST_CASE("full chips: all-to-all on 8 chips", "[multichip][full]") {
    check_full(full("ring-8"), collective::op::alltoall, collective::algo::direct, 8 * 8 * 1024);
}
TEST_CASE("full chips: broadcast on 8 chips", "[multichip][full]") {
    check_full(full("ring-8"), collective::op::broadcast, collective::algo::ring, 8 * 8 * 1024);
}
TEST_CASE("full chips: hierarchical all-reduce on a cluster of two 2x2 servers", "[multichip][full]") {
    // Inside each server over the links, between servers over the NICs and the switched network.
    check_full(full("cluster-4x16", {"server.dims=[2,2]", "cluster.servers=2"}), collective::op::allreduce,
               collective::algo::hierarchical, 64 * 1024);
}

namespace {
// The light chip is calibrated against the full chip (docs/multichip.md, "Light chips calibrated"): the same
// collective on the same links within `tolerance` of the full chips' simulated time. One kernel per process: the
// light chips' run in a forked child, the full chips' here (so one such check per test case).
void check_calibrated(const std::string& preset, collective::op o, uint64_t bytes, double tolerance) {
    const double light_ns = test::in_child_process([&] {
        auto light = platform::load_platform(preset, {"sim.functional=false"});
        return run(light, o, collective::algo::ring, numerics::dtype::fp32, bytes).sim_ns;
    });
    REQUIRE(light_ns > 0);
    auto rf = run(full(preset, {"sim.functional=false"}), o, collective::algo::ring, numerics::dtype::fp32, bytes);
    INFO(collective::name_of(o) << " " << bytes << " B on " << preset << ": light " << light_ns << " ns, full "
                                << rf.sim_ns << " ns");
    REQUIRE(std::abs(light_ns / rf.sim_ns - 1) < tolerance);
}
}  // namespace

TEST_CASE("light chips calibrated: 64 MiB all-reduce on ring-8 within 3% of the full chips", "[multichip][full]") {
    check_calibrated("ring-8", collective::op::allreduce, 64 << 20, 0.03);
}
TEST_CASE("light chips calibrated: 64 MiB reduce-scatter on ring-8 within 3% of the full chips", "[multichip][full]") {
    check_calibrated("ring-8", collective::op::reduce_scatter, 64 << 20, 0.03);
}
TEST_CASE("light chips calibrated: 64 MiB all-gather on ring-8 within 3% of the full chips", "[multichip][full]") {
    check_calibrated("ring-8", collective::op::allgather, 64 << 20, 0.03);
}
TEST_CASE("light chips calibrated: 8 MiB all-reduce on ring-8 within 5% of the full chips", "[multichip][full]") {
    check_calibrated("ring-8", collective::op::allreduce, 8 << 20, 0.05);
}
TEST_CASE("light chips calibrated: 8 MiB reduce-scatter on ring-8 within 5% of the full chips", "[multichip][full]") {
    check_calibrated("ring-8", collective::op::reduce_scatter, 8 << 20, 0.05);
}
TEST_CASE("light chips calibrated: 8 MiB all-gather on ring-8 within 5% of the full chips", "[multichip][full]") {
    check_calibrated("ring-8", collective::op::allgather, 8 << 20, 0.05);
}
TEST_CASE("light chips calibrated: 8 MiB all-reduce on trn2-server-16 within 3% of the full chips", "[multichip][full]") {
    check_calibrated("trn2-server-16", collective::op::allreduce, 8 << 20, 0.03);
}

TEST_CASE("full chips: a collective on a mix of full and light chips is refused", "[multichip][full]") {
    auto cfg = platform::load_platform("ring-8", {"chips.full=[1,2]"});
    REQUIRE_THROWS_WITH(run(cfg, collective::op::allreduce, collective::algo::ring, numerics::dtype::fp32, 4096),
                        Contains("chips.full") && Contains("mixes"));
}

TEST_CASE("full chips: collective buffers larger than a chip's HBM are refused", "[multichip][full]") {
    auto cfg = full("ring-8", {"sim.functional=false", "chip.hbm.capacity_gib=1"});
    REQUIRE_THROWS_WITH(run(cfg, collective::op::allreduce, collective::algo::ring, numerics::dtype::fp32, 1ull << 30),
                        Contains("bytes of HBM per chip") && Contains("chip.hbm"));
}

TEST_CASE("lowering: every wait of the lowered streams is signalled often enough", "[multichip][full]") {
    collective::params p;
    p.bytes = 4 * 1000;
    p.chunks = 3;
    auto s = collective::build(collective::topology::make_ring(4), p);
    tb::lowering_layout L;
    L.cores = 2;
    L.core_base = 1ull << 40;
    L.core_stride = 1ull << 32;
    L.partition_bytes = 64 * 1024;
    L.tile_free = 64;
    L.partitions = 4;
    L.signal_word = 0xABC000;
    auto low = tb::lower(s, L);
    REQUIRE(low.programs.size() == 4);
    // Signals per (chip, core, semaphore): instruction signals plus register writes aimed at it.
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint64_t> signals;
    for (uint32_t c = 0; c < 4; ++c)
        for (uint32_t k = 0; k < 2; ++k) {
            const auto& pr = low.programs[c][k];
            auto count = [&](const std::vector<core::instruction>& q) {
                for (const auto& in : q) {
                    if (in.signal >= 0) ++signals[{c, k, uint32_t(in.signal)}];
                    if (in.op == core::opcode::dma && in.dma.src == L.signal_word) {
                        const uint64_t local = link::local_of(in.dma.dst);
                        const uint32_t chip = link::is_global(in.dma.dst) ? link::chip_of(in.dma.dst) : c;
                        const uint32_t core = uint32_t((local - L.core_base) / L.core_stride);
                        const uint32_t sem = uint32_t((local - L.core_base - core * L.core_stride - L.sem_core) / 8);
                        ++signals[{chip, core, sem}];
                    }
                }
            };
            for (const auto& q : pr.dma) count(q);
            count(pr.vector);
        }
    uint64_t waits = 0;
    for (uint32_t c = 0; c < 4; ++c)
        for (uint32_t k = 0; k < 2; ++k) {
            const auto& pr = low.programs[c][k];
            auto check = [&](const std::vector<core::instruction>& q) {
                for (const auto& in : q)
                    for (const auto& w : in.waits) {
                        ++waits;
                        REQUIRE(w.sem < pr.semaphores);
                        REQUIRE(signals[{c, k, w.sem}] >= w.value);
                    }
            };
            for (const auto& q : pr.dma) check(q);
            check(pr.vector);
        }
    REQUIRE(waits > 0);
    REQUIRE(low.remote_signals > 0);
}

TEST_CASE("full chips: a local map beyond the 42 bits of a global address is refused naming the key", "[multichip][full]") {
    // Core windows from 4 TiB - 4 GiB: the last ones end above 2^42.
    REQUIRE_THROWS_WITH(full("ring-8", {"chip.address_map.core_base=4393751543808"}),
                        Contains("chip.address_map.core_base") && Contains("42 bits"));
}

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

// In place (a training step all-reduces an activation where it lies): the output over the input, every element of
// every chip checked; uneven ring blocks, both directions of the bidirectional ring, the torus's two phases.
namespace {
tb::collective_result all_reduce_in_place(const platform::platform_config& cfg, collective::op o, collective::algo a,
                                          uint64_t bytes) {
    collective::params p;
    p.o = o;
    p.a = a;
    p.dt = numerics::dtype::bf16;
    p.bytes = bytes;
    tb::collective_options opt;
    opt.in_place = true;
    opt.sim.wall_limit_s = 120;
    return tb::run_collective(cfg, p, opt);
}
void check_in_place(const platform::platform_config& cfg, collective::algo a, uint64_t bytes) {
    auto r = all_reduce_in_place(cfg, collective::op::allreduce, a, bytes);
    REQUIRE(r.output_addr == r.input_addr);  // the check below reads the output there
    INFO(r.first_mismatch);
    REQUIRE(r.checked);
    REQUIRE(r.pass);
}
}  // namespace
TEST_CASE("full chips: ring all-reduce in place is bit-exact with the reference", "[multichip][full]") {
    check_in_place(full("ring-8"), collective::algo::ring, 2 * (300'000 + 3));
}
TEST_CASE("full chips: bidirectional-ring all-reduce in place, reduced on the DMA engines, is bit-exact", "[multichip][full]") {
    check_in_place(full("ring-8", {"chip.collective_reduce=dma"}), collective::algo::bidir_ring, 2 * (300'000 + 3));
}
TEST_CASE("full chips: torus all-reduce in place on a 2x2 torus is bit-exact", "[multichip][full]") {
    check_in_place(full("torus-4x4", {"server.dims=[2,2]"}), collective::algo::torus, 2 * 4 * 4 * 4096);
}
TEST_CASE("full chips: a collective in place other than a ring-family all-reduce is refused", "[multichip][full]") {
    REQUIRE_THROWS_WITH(all_reduce_in_place(full("ring-8"), collective::op::alltoall, collective::algo::direct, 8 * 8 * 1024),
                        Contains("collective in place: an all-reduce over a ring, bidir_ring or torus, not alltoall (direct)"));
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
TEST_CASE("light chips calibrated: 8 MiB all-reduce on ring-8 within 3% of the full chips", "[multichip][full]") {
    check_calibrated("ring-8", collective::op::allreduce, 8 << 20, 0.03);
}
TEST_CASE("light chips calibrated: 8 MiB reduce-scatter on ring-8 within 3% of the full chips", "[multichip][full]") {
    check_calibrated("ring-8", collective::op::reduce_scatter, 8 << 20, 0.03);
}
TEST_CASE("light chips calibrated: 8 MiB all-gather on ring-8 within 3% of the full chips", "[multichip][full]") {
    check_calibrated("ring-8", collective::op::allgather, 8 << 20, 0.03);
}
// 14 MiB: a 1.75 MiB block a step, 7 of the full chip's 256 KiB tiles, one on each reducing core; at 16 MiB the
// busiest core has two. A reduce booked by its bytes alone was 7.5% slow here and right at 16 MiB.
TEST_CASE("light chips calibrated: 14 MiB reduce-scatter on ring-8 within 3% of the full chips", "[multichip][full]") {
    check_calibrated("ring-8", collective::op::reduce_scatter, 14 << 20, 0.03);
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

namespace {
// A lowering layout of two cores with small tiles, for looking at the lowered streams without a platform.
tb::lowering_layout small_layout() {
    tb::lowering_layout L;
    L.cores = 2;
    L.core_base = 1ull << 40;
    L.core_stride = 1ull << 32;
    L.partition_bytes = 64 * 1024;
    L.tile_free = 64;
    L.partitions = 4;
    L.signal_word = 0xABC000;
    return L;
}
}  // namespace

TEST_CASE("lowering: a bidirectional ring's two directions (lanes) have DMA queues of their own", "[multichip][full]") {
    collective::params p;
    p.a = collective::algo::bidir_ring;
    p.bytes = 8 * 4096;
    auto s = collective::build(collective::topology::make_ring(4), p);
    std::set<uint32_t> lanes;
    for (const auto& st : s.steps) lanes.insert(st.lane);
    REQUIRE(lanes == std::set<uint32_t>{0, 1});  // the schedule says which direction each step moves
    tb::lowering_layout L = small_layout();
    L.reduce_by_dma = true;
    L.input = 0x1000000, L.output = 0x2000000, L.scratch = 0x3000000;
    auto low = tb::lower(s, L);
    // Every data queue of every core holds one lane's instructions only: a step waiting for one direction never
    // holds up the other's behind it. An instruction's lane: that of the step whose destination it writes (the two
    // directions move different halves of every block, through scratch areas of their own).
    auto base = [&](collective::buffer b) {
        return b == collective::buffer::input ? L.input : b == collective::buffer::output ? L.output : L.scratch;
    };
    struct written {
        uint32_t chip;
        uint64_t begin, end;
        uint32_t lane;
    };
    std::vector<written> w;
    for (const auto& st : s.steps)
        w.push_back({st.dst.chip, base(st.dst.buf) + st.dst.offset, base(st.dst.buf) + st.dst.offset + st.dst.bytes,
                     st.lane});
    uint32_t mixed = 0, instructions = 0;
    std::set<uint32_t> seen;
    for (uint32_t c = 0; c < 4; ++c)
        for (uint32_t k = 0; k < 2; ++k)
            for (size_t q = 0; q < L.dma_queues; ++q) {  // the data queues (the signal queues follow)
                std::set<uint32_t> in_queue;
                for (const auto& in : low.programs[c][k].dma[q]) {
                    const uint32_t chip = link::is_global(in.dma.dst) ? link::chip_of(in.dma.dst) : c;
                    const uint64_t at = link::local_of(in.dma.dst);
                    for (const auto& x : w)
                        if (x.chip == chip && at >= x.begin && at < x.end) {
                            in_queue.insert(x.lane);
                            break;
                        }
                    ++instructions;
                }
                mixed += in_queue.size() > 1;
                seen.insert(in_queue.begin(), in_queue.end());
            }
    CHECK(instructions > 0);
    CHECK(seen == std::set<uint32_t>{0, 1});
    CHECK(mixed == 0);
}

TEST_CASE("full chips: a bidirectional-ring all-reduce runs its two directions at once", "[multichip][full]") {
    // 8 MiB BF16 reduced on the DMA engines, ring-8: with both directions in every DMA queue the second direction's
    // first steps sat behind the first one's last (133.6 us, the one-direction ring 116.0); with lanes apart 85.0 us.
    auto cfg = full("ring-8", {"chip.collective_reduce=dma", "sim.functional=false"});
    const double ring = test::in_child_process([&] {  // one simulation per process
        return run(cfg, collective::op::allreduce, collective::algo::ring, numerics::dtype::bf16, 8ull << 20).sim_ns;
    });
    const auto bidir = run(cfg, collective::op::allreduce, collective::algo::bidir_ring, numerics::dtype::bf16, 8ull << 20);
    INFO("ring " << ring << " ns, bidir_ring " << bidir.sim_ns << " ns");
    CHECK(bidir.sim_ns < 0.8 * ring);
}

TEST_CASE("full chips: a bidirectional-ring all-reduce reduced on the Vector Engines runs its directions at once",
          "[multichip][full]") {
    // 8 MiB FP32, ring-8, staged adds on the Vector Engine: with both directions' adds in each core's one vector
    // queue 141.5 us (the ring 130.3); with each direction's tiles on cores of their own 102.6 us.
    auto cfg = full("ring-8", {"sim.functional=false"});
    const double ring = test::in_child_process([&] {
        return run(cfg, collective::op::allreduce, collective::algo::ring, numerics::dtype::fp32, 8ull << 20).sim_ns;
    });
    const auto bidir = run(cfg, collective::op::allreduce, collective::algo::bidir_ring, numerics::dtype::fp32, 8ull << 20);
    INFO("ring " << ring << " ns, bidir_ring " << bidir.sim_ns << " ns");
    CHECK(bidir.sim_ns < 0.85 * ring);
}

namespace {
// The 8 MiB BF16 all-reduce of `a` on ring-8's full chips reduced on the DMA engines, with chip `late` starting
// `late_ns` late, against all chips at 0 (two simulations, one in a child process).
std::pair<double, double> late_start(collective::algo a, uint32_t late, double late_ns) {
    auto cfg = full("ring-8", {"chip.collective_reduce=dma", "sim.functional=false"});
    collective::params p;
    p.o = collective::op::allreduce;
    p.a = a;
    p.dt = numerics::dtype::bf16;
    p.bytes = 8ull << 20;
    tb::collective_options opt;
    opt.sim.wall_limit_s = 120;
    const double aligned = test::in_child_process([&] { return tb::run_collective(cfg, p, opt).sim_ns; });
    opt.chip_start_ns.assign(late + 1, 0.0);
    opt.chip_start_ns[late] = late_ns;
    return {aligned, tb::run_collective(cfg, p, opt).sim_ns};
}
}  // namespace

// A chip arriving late delays a ring by about its lateness, not a multiple of it. With a semaphore write queued
// behind another queue's whole copy in a DMA engine and behind the link's reserved bulk data, and a lane's sends
// free to overlap, the late block's signals came microseconds late at every hop and the lateness grew around the
// ring: 4 us late cost the ring 41 us (116.0 -> 156.9 us) and the bidirectional ring 29 us (85.0 -> 114.4).
TEST_CASE("full chips: a ring all-reduce with one chip starting late ends about that much later", "[multichip][full]") {
    const auto [aligned, late] = late_start(collective::algo::ring, 7, 20000);
    INFO("aligned " << aligned << " ns, chip 7 at 20 us: " << late << " ns");
    CHECK(late > aligned + 20000);
    CHECK(late < aligned + 20000 + 3000);
}

TEST_CASE("full chips: a bidirectional-ring all-reduce with one chip starting late ends about that much later",
          "[multichip][full]") {
    const auto [aligned, late] = late_start(collective::algo::bidir_ring, 3, 4000);
    INFO("aligned " << aligned << " ns, chip 3 at 4 us: " << late << " ns");
    CHECK(late > aligned + 4000);
    CHECK(late < aligned + 4000 + 3000);
}

TEST_CASE("full chips: chip start times that are not a time of a platform chip are refused", "[multichip][full]") {
    auto cfg = full("ring-8", {"sim.functional=false"});
    collective::params p;
    p.bytes = 1 << 16;
    tb::collective_options opt;
    opt.chip_start_ns.assign(9, 0.0);
    CHECK_THROWS_WITH(tb::run_collective(cfg, p, opt), Contains("chip_start_ns has 9 entries, the platform 8 chips"));
    opt.chip_start_ns.assign(3, 0.0);
    opt.chip_start_ns[2] = -1;
    CHECK_THROWS_WITH(tb::run_collective(cfg, p, opt), Contains("chip_start_ns[2] must be >= 0 ns"));
}

TEST_CASE("lowering: every wait of the lowered streams is signalled often enough", "[multichip][full]") {
    collective::params p;
    p.bytes = 4 * 1000;
    p.chunks = 3;
    auto s = collective::build(collective::topology::make_ring(4), p);
    tb::lowering_layout L = small_layout();
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

// Operations in order on full chips (testbench/workloads/program/op_sequence.h): on every chip of ring-8, GEMM 1,
// then an all-reduce of its C (stream 1) running beside GEMM 2 (stream 0), then a copy of the all-reduce's output
// (stream 0, after both). Every chip's C of both GEMMs is checked bit for bit, the all-reduce's output against the
// reference executor on the chips' C (read after the run: had the all-reduce read C before GEMM 1 had written it, its
// output would differ), the copy against the output; and the timing: the all-reduce starts after GEMM 1 has ended
// on its chip and overlaps GEMM 2, the copy starts after both.
#include "testbench/workloads/gemm/gemm_run.h"
#include "testbench/workloads/program/op_sequence.h"

TEST_CASE("op_sequence: GEMM, then an all-reduce of its C beside a second GEMM, then a copy, on 8 full chips", "[multichip][full]") {
    auto cfg = full("ring-8", {"chip.collective_reduce=dma"});
    const auto& cc = cfg.chip;
    const uint32_t n = cfg.multichip.chips(), C = cc.cores;
    tb::gemm_spec g;
    g.m = 256, g.k = 512, g.n = 384;
    const tb::gemm_layout l1 = tb::plan_layout(g, cc);
    tb::gemm_layout l2 = l1;  // GEMM 2's operands and C after GEMM 1's
    const uint64_t shift = (l1.c_addr + l1.c_bytes - cc.hbm_base + 4095) & ~uint64_t(4095);
    l2.a_addr += shift, l2.b_addr += shift, l2.c_addr += shift;
    collective::params p;
    p.o = collective::op::allreduce;
    p.a = collective::algo::ring;
    p.dt = numerics::dtype::fp32;
    p.bytes = l1.c_bytes;
    const collective::schedule sched = collective::build(cfg.multichip.topo, p);
    tb::lowering_layout L = tb::full_chip_layout(cfg, sched, l2.c_addr + l2.c_bytes);
    L.input = l1.c_addr;  // the all-reduce reduces GEMM 1's C where it lies
    L.notify_landing = true;
    const uint64_t copy_to = L.signal_word + 4096;

    tb::op_sequence seq(tb::chip_sequence_layout(cc, n, L.signal_word));
    std::vector<std::vector<tb::op_sequence::op_id>> gemm1(n), gemm2(n), after_both(n);
    for (uint32_t c = 0; c < n; ++c) {
        gemm1[c] = {seq.add(c, 0, tb::compile_gemm(g, l1, cc), {}, "gemm1")};
        gemm2[c] = {seq.add(c, 0, tb::compile_gemm(g, l2, cc), {}, "gemm2")};
    }
    L.sem_first = seq.sem_first();
    tb::lowered_collective low = tb::lower(sched, L);
    const auto ar = seq.add_all(1, std::move(low.programs), gemm1, "allreduce");
    for (uint32_t c = 0; c < n; ++c) {
        // The copy: the output in C pieces, one per core.
        std::vector<core::core_program> progs(C);
        const uint64_t piece = sched.output_bytes / C;
        for (uint32_t k = 0; k < C; ++k) {
            core::instruction in;
            in.op = core::opcode::dma;
            in.dma.src = L.output + k * piece;
            in.dma.dst = copy_to + k * piece;
            in.dma.row_bytes = k + 1 < C ? piece : sched.output_bytes - k * piece;
            progs[k].dma.resize(1);
            progs[k].dma[0].push_back(in);
        }
        seq.add(c, 0, std::move(progs), {ar[c], gemm2[c][0]}, "copy");
    }
    auto programs = seq.finish();

    platform::multichip_platform plat("platform", cfg);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    std::vector<tb::gemm_operands> ops1(n), ops2(n);
    std::vector<core::neuron_core*> all;
    // Per chip: when GEMM 1's and GEMM 2's last MATMUL completed, when the all-reduce's first data transfer was
    // issued (queues: te, stream 0's DMA queues 1-3 and sync queue 4, the collective's queues from 5).
    std::vector<double> coll_first(n, 1e300), te_last(n, 0), te_gemm1_last(n, 0);
    const uint64_t gemm_matmuls = tb::plan_tiling(g, cc).matmuls;
    for (uint32_t c = 0; c < n; ++c) {
        auto& chip = *plat.full_chip(c);
        tb::gemm_spec g1 = g, g2 = g;
        g1.seed = 100 + c, g2.seed = 200 + c;
        ops1[c] = tb::make_operands(g1);
        ops2[c] = tb::make_operands(g2);
        chip.host_write(l2.a_addr, ops2[c].a_raw.data(), ops2[c].a_raw.size());
        chip.host_write(l2.b_addr, ops2[c].b_raw.data(), ops2[c].b_raw.size());
        tb::load_gemm(chip, l1, std::move(programs[c]), &ops1[c]);
        for (auto& k : chip.cores) {
            all.push_back(k.get());
            k->observe([&, c, gemm_matmuls](const core::queue_event& e) {
                const double issued = e.issued.to_seconds() * 1e9, done = e.completed.to_seconds() * 1e9;
                if (e.queue == 0) {
                    te_last[c] = std::max(te_last[c], done);
                    // GEMM 1's MATMULs come first in the TE queue.
                    if (e.index < gemm_matmuls) te_gemm1_last[c] = std::max(te_gemm1_last[c], done);
                }
                // The collective's data queues: stream 1's block (after te, stream 0's 3 DMA queues and its sync
                // queue), less its own sync queue and the Vector and Scalar queues at the end.
                if (e.queue >= 5 && e.queue + 3 < e.core->queues() && e.in->dma.total_bytes() > 8) {
                    coll_first[c] = std::min(coll_first[c], issued);
                }
            });
        }
    }
    tb::sim_options so;
    so.wall_limit_s = 120;
    tb::run_to_completion(tb::make_cores_probe(all), so);

    std::vector<collective::chip_buffers> bufs(n);
    for (uint32_t c = 0; c < n; ++c) {
        auto& chip = *plat.full_chip(c);
        for (int which = 1; which <= 2; ++which) {
            tb::gemm_result r;
            r.spec = g;
            r.spec.seed = which == 1 ? 100 + c : 200 + c;
            r.tiling = tb::plan_tiling(g, cc);
            tb::check_gemm(r, chip, which == 1 ? l1 : l2, which == 1 ? &ops1[c] : &ops2[c], true, 0);
            INFO("chip " << c << " GEMM " << which << ": " << r.first_mismatch);
            REQUIRE(r.checked);
            REQUIRE(r.mismatches == 0);
        }
        bufs[c].input.resize(sched.input_bytes);
        chip.host_read(l1.c_addr, bufs[c].input.data(), sched.input_bytes);
    }
    collective::execute_reference(sched, bufs);
    for (uint32_t c = 0; c < n; ++c) {
        std::vector<uint8_t> out(sched.output_bytes), copied(sched.output_bytes);
        plat.full_chip(c)->host_read(L.output, out.data(), out.size());
        plat.full_chip(c)->host_read(copy_to, copied.data(), copied.size());
        INFO("chip " << c);
        REQUIRE(out == bufs[c].output);
        REQUIRE(copied == out);
        // The all-reduce's first transfer waits for GEMM 1 on this chip (its C), and starts while GEMM 2 computes.
        REQUIRE(coll_first[c] < 1e300);
        REQUIRE(coll_first[c] >= te_gemm1_last[c]);
        REQUIRE(coll_first[c] < te_last[c]);
    }
}

TEST_CASE("op_sequence: what cannot be put in order is refused, naming the operation", "[multichip][full]") {
    auto cfg = full("ring-8");
    tb::op_sequence seq(tb::chip_sequence_layout(cfg.chip, 8, 0x1000));
    REQUIRE_THROWS_WITH(seq.add(0, 0, std::vector<core::core_program>(3), {}, "short"),
                        Contains("operation 'short': 3 programs for 8 cores"));
    const auto a = seq.add(1, 0, std::vector<core::core_program>(8), {}, "a");
    REQUIRE_THROWS_WITH(seq.add(0, 0, std::vector<core::core_program>(8), {a}, "b"),
                        Contains("operation 'b' depends on an operation of another chip"));
    // A local operation may not signal registers (their numbers would not follow its semaphores).
    std::vector<core::core_program> sig(8);
    core::instruction w;
    w.op = core::opcode::dma;
    w.dma.src = 0x1000;
    w.dma.dst = cfg.chip.core_base + cfg.chip.core.sem_register(5);
    w.dma.row_bytes = 8;
    sig[2].dma.resize(1);
    sig[2].dma[0].push_back(w);
    REQUIRE_THROWS_WITH(seq.add(0, 0, sig, {}, "signaller"), Contains("operation 'signaller' writes semaphore registers"));
    std::vector<core::core_program> many(8);
    many[0].semaphores = 8190;
    REQUIRE_THROWS_WITH(seq.add(0, 0, many, {}, "big"),
                        Contains("operation 'big' on chip 0 needs 8191 semaphores, more than a stream's region of 8190"));
    REQUIRE_THROWS_WITH(seq.add(0, 2, std::vector<core::core_program>(8), {}, "third"), Contains("stream 2 of 2"));
}

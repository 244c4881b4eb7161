// Collective schedules: every operation x algorithm x topology on small platforms, element by element.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "models/collective/schedule.h"

using namespace trnsim;
using namespace trnsim::collective;
using numerics::dtype;

namespace {

std::vector<topology> small_topologies() {
    return {topology::make_ring(1),           topology::make_ring(2),           topology::make_ring(3),
            topology::make_ring(4),           topology::make_ring(8),           topology::make_torus(2, 2),
            topology::make_torus(3, 3),       topology::make_torus(4, 4),       topology::make_torus(2, 3, 2),
            topology::make_cluster(2, {2, 1, 1}), topology::make_cluster(3, {2, 2, 1})};
}

std::string describe(const topology& t, const params& p) {
    return std::string(name_of(p.o)) + " " + std::string(name_of(p.a)) + " " + std::string(numerics::name_of(p.dt)) +
           " chips=" + std::to_string(t.chips()) + " dims=" + std::to_string(t.dims[0]) + "x" +
           std::to_string(t.dims[1]) + "x" + std::to_string(t.dims[2]) + " servers=" + std::to_string(t.servers) +
           " bytes=" + std::to_string(p.bytes) + " chunks=" + std::to_string(p.chunks);
}

// Small integers: every sum of up to 16 of them is exact in FP32 and BF16, in any order.
float value(uint32_t chip, uint64_t e) { return float(int((chip * 7 + e * 3) % 9) - 4); }

std::vector<uint8_t> encode(dtype dt, const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * numerics::size_of(dt));
    numerics::encode(dt, v.data(), b.data(), v.size());
    return b;
}
std::vector<float> decode(dtype dt, const std::vector<uint8_t>& b) {
    std::vector<float> v(b.size() / numerics::size_of(dt));
    numerics::decode(dt, b.data(), v.data(), v.size());
    return v;
}

// Input of chip c: element e of its input is value(c, global index), where allgather's input is block c.
std::vector<chip_buffers> inputs(const schedule& s) {
    uint32_t n = s.topo.chips();
    size_t es = numerics::size_of(s.p.dt);
    std::vector<chip_buffers> b(n);
    for (uint32_t c = 0; c < n; ++c) {
        std::vector<float> v(s.input_bytes / es);
        uint64_t base = s.p.o == op::allgather ? c * v.size() : 0;
        for (size_t e = 0; e < v.size(); ++e) v[e] = value(s.p.o == op::allgather ? 0 : c, base + e);
        if (s.p.o == op::allgather)
            for (size_t e = 0; e < v.size(); ++e) v[e] = value(c, base + e);
        b[c].input = encode(s.p.dt, v);
    }
    return b;
}

// What chip c's output must hold, from the mathematical definition of the operation.
std::vector<float> expected(const schedule& s, uint32_t c) {
    uint32_t n = s.topo.chips();
    size_t es = numerics::size_of(s.p.dt);
    uint64_t total = s.p.bytes / es;
    uint64_t blk = total / n;
    std::vector<float> r(s.output_bytes / es, 0.0f);
    for (uint64_t e = 0; e < r.size(); ++e) {
        switch (s.p.o) {
        case op::allreduce:
            for (uint32_t i = 0; i < n; ++i) r[e] += value(i, e);
            break;
        case op::reduce_scatter:
            for (uint32_t i = 0; i < n; ++i) r[e] += value(i, c * blk + e);
            break;
        case op::allgather: r[e] = value(uint32_t(e / blk), e); break;
        case op::alltoall: r[e] = value(uint32_t(e / blk), c * blk + e % blk); break;
        case op::broadcast: r[e] = value(s.p.root, e); break;
        }
    }
    return r;
}

bool supported(const topology& t, algo a, op o) {
    if (o == op::alltoall) return a == algo::ring || a == algo::direct;
    if (a == algo::torus) return t.k != topology::kind::ring;
    if (a == algo::hierarchical) return t.k == topology::kind::cluster;
    return true;
}

void check_all(op o) {
    const algo algos[] = {algo::ring, algo::bidir_ring, algo::torus, algo::hierarchical, algo::direct};
    size_t runs = 0;
    for (const topology& t : small_topologies()) {
        uint32_t n = t.chips();
        bool per_chip_blocks = o == op::reduce_scatter || o == op::allgather || o == op::alltoall;
        std::vector<uint64_t> counts = per_chip_blocks ? std::vector<uint64_t>{n, 3ull * n}
                                                       : std::vector<uint64_t>{1, 7, 5ull * n + 3, 64};
        for (algo a : algos) {
            if (!supported(t, a, o)) continue;
            for (dtype dt : {dtype::fp32, dtype::bf16})
                for (uint64_t cnt : counts)
                    for (uint32_t chunks : {1u, 3u}) {
                        params p;
                        p.o = o;
                        p.a = a;
                        p.dt = dt;
                        p.bytes = cnt * numerics::size_of(dt);
                        p.chunks = chunks;
                        p.root = n > 2 ? 2 : 0;
                        INFO(describe(t, p));
                        schedule s = build(t, p);
                        validate(s);
                        CHECK(double(s.steps.size()) <= step_bound(t, p));
                        auto bufs = inputs(s);
                        execute_reference(s, bufs);
                        for (uint32_t c = 0; c < n; ++c) {
                            INFO("chip " << c);
                            auto got = decode(dt, bufs[c].output);
                            auto want = expected(s, c);
                            REQUIRE(got.size() == want.size());
                            for (size_t e = 0; e < got.size(); ++e) {
                                INFO("element " << e);
                                REQUIRE(got[e] == want[e]);
                            }
                        }
                        ++runs;
                    }
        }
    }
    CHECK(runs > 50);
}

}  // namespace

TEST_CASE("allreduce: every algorithm and topology gives the sum on every chip") { check_all(op::allreduce); }
TEST_CASE("reduce_scatter: chip r gets the sum of block r") { check_all(op::reduce_scatter); }
TEST_CASE("allgather: every chip gets every chip's block in chip order") { check_all(op::allgather); }
TEST_CASE("alltoall: block j of chip i lands in block i of chip j") { check_all(op::alltoall); }
TEST_CASE("broadcast: every chip gets the root's data") { check_all(op::broadcast); }

TEST_CASE("dependencies suffice: any topological order gives the same bytes as program order") {
    // Non-integer BF16 data, so every reduction rounds: a step run before the data it needs is caught.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-3, 3);
    struct cfg { topology t; algo a; op o; uint32_t chunks; };
    std::vector<cfg> cfgs = {{topology::make_ring(5), algo::ring, op::allreduce, 2},
                             {topology::make_ring(4), algo::bidir_ring, op::allreduce, 3},
                             {topology::make_torus(3, 2, 2), algo::torus, op::allreduce, 2},
                             {topology::make_cluster(3, {2, 1, 1}), algo::hierarchical, op::reduce_scatter, 2},
                             {topology::make_torus(2, 3), algo::torus, op::allgather, 2},
                             {topology::make_ring(4), algo::direct, op::allreduce, 2},
                             {topology::make_ring(5), algo::ring, op::alltoall, 2},
                             {topology::make_torus(3, 3), algo::torus, op::broadcast, 3}};
    for (const cfg& c : cfgs) {
        params p;
        p.o = c.o; p.a = c.a; p.dt = dtype::bf16; p.chunks = c.chunks; p.root = 1;
        p.bytes = uint64_t(c.t.chips()) * 10 * 2;
        INFO(describe(c.t, p));
        schedule s = build(c.t, p);
        std::vector<chip_buffers> in(c.t.chips());
        for (auto& b : in) {
            std::vector<float> v(s.input_bytes / 2);
            for (auto& x : v) x = u(rng);
            b.input = encode(dtype::bf16, v);
        }
        auto ref = in;
        execute_reference(s, ref);
        for (int trial = 0; trial < 5; ++trial) {
            // Kahn's algorithm picking a random ready step.
            std::vector<uint32_t> missing(s.steps.size());
            std::vector<std::vector<uint32_t>> users(s.steps.size());
            for (size_t i = 0; i < s.steps.size(); ++i) {
                missing[i] = uint32_t(s.steps[i].deps.size());
                for (uint32_t d : s.steps[i].deps) users[d].push_back(uint32_t(i));
            }
            std::vector<uint32_t> ready, order;
            for (size_t i = 0; i < s.steps.size(); ++i)
                if (!missing[i]) ready.push_back(uint32_t(i));
            while (!ready.empty()) {
                size_t k = std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng);
                uint32_t i = ready[k];
                ready.erase(ready.begin() + long(k));
                order.push_back(i);
                for (uint32_t u2 : users[i])
                    if (--missing[u2] == 0) ready.push_back(u2);
            }
            REQUIRE(order.size() == s.steps.size());
            schedule shuffled = s;
            shuffled.steps.clear();
            for (uint32_t i : order) {
                step st = s.steps[i];
                st.deps.clear();  // the executor below runs in vector order
                shuffled.steps.push_back(st);
            }
            auto got = in;
            execute_reference(shuffled, got);
            for (size_t ch = 0; ch < got.size(); ++ch) REQUIRE(got[ch].output == ref[ch].output);
        }
    }
}

TEST_CASE("ring allreduce: 2(n-1) transfers of B/n per chip, chunks pipelined") {
    params p;
    p.bytes = 8 * 1000 * 4;
    schedule s = build(topology::make_ring(8), p);
    size_t remote = 0, reduces = 0;
    for (auto& st : s.steps) {
        if (st.kind == step_kind::reduce) ++reduces;
        else if (st.src.chip != st.dst.chip) {
            ++remote;
            CHECK(st.src.bytes == 4000);
            CHECK(st.dst.chip == (st.src.chip + 1) % 8);
        }
    }
    CHECK(remote == 2 * 7 * 8);
    CHECK(reduces == 7 * 8);
    p.chunks = 4;
    schedule c = build(topology::make_ring(8), p);
    size_t pieces = 0;
    for (auto& st : c.steps)
        if (st.kind == step_kind::copy && st.src.chip != st.dst.chip) ++pieces;
    CHECK(pieces == 4 * 2 * 7 * 8);
}

TEST_CASE("bidirectional ring sends half of every block each way") {
    params p;
    p.a = algo::bidir_ring;
    p.bytes = 4 * 4 * 100;
    schedule s = build(topology::make_ring(4), p);
    uint64_t fwd = 0, bwd = 0;
    for (auto& st : s.steps)
        if (st.kind == step_kind::copy && st.src.chip != st.dst.chip) {
            if (st.dst.chip == (st.src.chip + 1) % 4) fwd += st.src.bytes;
            else if (st.dst.chip == (st.src.chip + 3) % 4) bwd += st.src.bytes;
            else FAIL("a bidirectional ring step to a non-neighbour");
        }
    CHECK(fwd == bwd);
    CHECK(fwd + bwd == 4 * 2 * 3 * (1600 / 4));  // every chip sends 2(n-1) blocks of B/n
}

TEST_CASE("torus allreduce only talks to neighbours of one dimension at a time") {
    topology t = topology::make_torus(4, 4, 4);
    params p;
    p.a = algo::torus;
    p.bytes = 64 * 64 * 4;
    schedule s = build(t, p);
    for (auto& st : s.steps) {
        if (st.kind != step_kind::copy || st.src.chip == st.dst.chip) continue;
        auto a = t.coords(st.src.chip), b = t.coords(st.dst.chip);
        int differ = 0;
        for (int d = 0; d < 3; ++d)
            if (a[d] != b[d]) {
                ++differ;
                CHECK(((a[d] + 1) % 4 == b[d]));
            }
        CHECK(differ == 1);
    }
}

TEST_CASE("hierarchical allreduce crosses the network with 1/chips_per_server of the data") {
    topology t = topology::make_cluster(4, {2, 2, 1});
    params p;
    p.a = algo::hierarchical;
    p.bytes = 16 * 100 * 4;
    schedule s = build(t, p);
    uint64_t across = 0;
    for (auto& st : s.steps)
        if (st.kind == step_kind::copy && t.server_of(st.src.chip) != t.server_of(st.dst.chip)) across += st.src.bytes;
    // Per chip: 2 (S-1)/S of its 1/4 share, S = 4 servers; 16 chips.
    CHECK(across == 16 * 2 * 3 * (p.bytes / 4) / 4);
}

TEST_CASE("bad parameters are named") {
    params p;
    p.bytes = 10;
    CHECK_THROWS_WITH(build(topology::make_ring(4), p), Catch::Contains("not a multiple of the fp32 element size 4"));
    p.bytes = 0;
    CHECK_THROWS_WITH(build(topology::make_ring(4), p), Catch::Contains("bytes must be > 0"));
    p.bytes = 40;
    p.a = algo::torus;
    CHECK_THROWS_WITH(build(topology::make_ring(4), p), Catch::Contains("torus algorithm needs a torus"));
    p.a = algo::hierarchical;
    CHECK_THROWS_WITH(build(topology::make_torus(2, 2), p), Catch::Contains("needs a cluster topology"));
    p.a = algo::ring;
    p.o = op::reduce_scatter;
    p.bytes = 4 * 6;
    CHECK_THROWS_WITH(build(topology::make_ring(4), p), Catch::Contains("multiple of chips x element size = 4 x 4"));
    p.o = op::alltoall;
    p.a = algo::torus;
    p.bytes = 64;
    CHECK_THROWS_WITH(build(topology::make_torus(2, 2), p), Catch::Contains("alltoall supports the ring"));
    p.o = op::broadcast;
    p.a = algo::ring;
    p.root = 9;
    CHECK_THROWS_WITH(build(topology::make_ring(4), p), Catch::Contains("broadcast root 9 is not a chip"));
    CHECK_THROWS_WITH(parse_op("allsum"), Catch::Contains("accepted: allreduce, reduce_scatter"));
    CHECK_THROWS_WITH(parse_algo("tree"), Catch::Contains("unknown collective algorithm 'tree'"));
    CHECK(parse_op("all-reduce") == op::allreduce);
    CHECK(parse_op("ReduceScatter") == op::reduce_scatter);
    CHECK(parse_algo("bidir") == algo::bidir_ring);
}

TEST_CASE("validate catches broken schedules") {
    params p;
    p.bytes = 4 * 4 * 8;
    schedule good = build(topology::make_ring(4), p);
    REQUIRE_NOTHROW(validate(good));
    schedule s = good;
    s.steps[3].dst.offset = s.output_bytes + s.scratch_bytes + 4;
    s.steps[3].dst.buf = buffer::output;
    CHECK_THROWS_WITH(validate(s), Catch::Contains("outside the output buffer"));
    s = good;
    for (auto& st : s.steps) st.deps.clear();
    CHECK_THROWS_WITH(validate(s), Catch::Contains("no dependency between them"));
    s = good;
    for (auto& st : s.steps)
        if (st.kind == step_kind::reduce) { st.src.chip = (st.dst.chip + 1) % 4; break; }
    CHECK_THROWS_WITH(validate(s), Catch::Contains("reduce across chips"));
    s = good;
    s.steps[2].deps = {5};
    CHECK_THROWS_WITH(validate(s), Catch::Contains("depends on a later step"));
}

TEST_CASE("bus factors follow nccl-tests") {
    CHECK(bus_factor(op::allreduce, 8) == Approx(2.0 * 7 / 8));
    CHECK(bus_factor(op::reduce_scatter, 4) == Approx(0.75));
    CHECK(bus_factor(op::allgather, 4) == Approx(0.75));
    CHECK(bus_factor(op::alltoall, 2) == Approx(0.5));
    CHECK(bus_factor(op::broadcast, 16) == 1.0);
}

TEST_CASE("reductions round once per step to nearest even") {
    std::vector<float> ta, tb;
    uint16_t a = numerics::fp32_to_bf16(1.0f), b = numerics::fp32_to_bf16(1.0f / 512);  // 1 + 2^-9: a tie
    reduce_into(dtype::bf16, &a, &b, 1, ta, tb);
    CHECK(numerics::bf16_to_fp32(a) == 1.0f);  // ties to even: stays 1.0
    uint16_t c = numerics::fp32_to_bf16(1.0f + 1.0f / 128), d = numerics::fp32_to_bf16(1.0f / 256);
    reduce_into(dtype::bf16, &c, &d, 1, ta, tb);
    CHECK(numerics::bf16_to_fp32(c) == 1.0f + 2.0f / 128);  // 1 + 1.5 ulp: a tie, to the even mantissa 2
    uint8_t e = numerics::fp32_to_e4m3(400.0f), f = numerics::fp32_to_e4m3(400.0f);
    reduce_into(dtype::fp8_e4m3, &e, &f, 1, ta, tb);
    CHECK(numerics::e4m3_to_fp32(e) == 448.0f);  // saturates
}

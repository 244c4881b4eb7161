// The alpha-beta model: closed forms agree with the critical path of the schedules they describe.
#include <catch2/catch.hpp>

#include "models/collective/cost_model.h"

using namespace trnsim::collective;

namespace {

// One hop = alpha + m / beta for a copy between chips, m / gamma for a reduce, m / local for a copy on one chip.
struct costs {
    const topology& t;
    double alpha, beta, gamma, local, net_alpha = 0, net_beta = 0;
    double operator()(const step& s) const {
        if (s.kind == step_kind::reduce) return s.src.bytes / gamma;
        if (s.src.chip == s.dst.chip) return s.src.bytes / local;
        if (net_beta > 0 && t.server_of(s.src.chip) != t.server_of(s.dst.chip)) return net_alpha + s.src.bytes / net_beta;
        return alpha + s.src.bytes / beta;
    }
};

}  // namespace

TEST_CASE("ring allreduce critical path equals 2(n-1)(alpha + B/(n beta)) + (n-1) B/(n gamma)") {
    for (uint32_t n : {2u, 3u, 8u, 16u}) {
        topology t = topology::make_ring(n);
        params p;
        p.bytes = uint64_t(n) * 1024 * 4;
        schedule s = build(t, p);
        // Local copies are free here: they overlap the ring (the reduced block's copy to the output).
        costs c{t, 2e-6, 100e9, 400e9, 1e30};
        double want = allreduce_time(p.bytes, {{n, 2e-6, 100e9}}, 400e9);
        CHECK(critical_path(s, c) == Approx(want).epsilon(1e-9));
        p.a = algo::bidir_ring;
        schedule b = build(t, p);
        CHECK(critical_path(b, c) == Approx(allreduce_time(p.bytes, {{n, 2e-6, 100e9}}, 400e9, true)).epsilon(1e-9));
    }
}

TEST_CASE("torus and hierarchical allreduce: the sum over phases") {
    topology t = topology::make_torus(4, 2, 3);
    params p;
    p.a = algo::torus;
    p.bytes = 24 * 240 * 4;
    costs c{t, 1e-6, 50e9, 200e9, 1e30};
    double want = allreduce_time(p.bytes, {{4, 1e-6, 50e9}, {2, 1e-6, 50e9}, {3, 1e-6, 50e9}}, 200e9);
    CHECK(critical_path(build(t, p), c) == Approx(want).epsilon(1e-9));

    topology cl = topology::make_cluster(4, {2, 2, 1});
    p.a = algo::hierarchical;
    p.bytes = 16 * 64 * 4;
    costs h{cl, 1e-6, 100e9, 400e9, 1e30, 10e-6, 25e9};
    want = allreduce_time(p.bytes, {{4, 1e-6, 100e9}, {4, 10e-6, 25e9}}, 400e9);
    CHECK(critical_path(build(cl, p), h) == Approx(want).epsilon(1e-9));
}

TEST_CASE("reduce-scatter, all-gather and broadcast closed forms") {
    topology t = topology::make_ring(6);
    costs c{t, 3e-6, 64e9, 256e9, 1e30};
    params p;
    p.bytes = 6 * 512 * 4;
    p.o = op::reduce_scatter;
    CHECK(critical_path(build(t, p), c) == Approx(reduce_scatter_time(p.bytes, {{6, 3e-6, 64e9}}, 256e9)).epsilon(1e-9));
    p.o = op::allgather;
    CHECK(critical_path(build(t, p), c) == Approx(allgather_time(p.bytes, {{6, 3e-6, 64e9}})).epsilon(1e-9));
    p.o = op::broadcast;
    CHECK(critical_path(build(t, p), c) == Approx(broadcast_time(p.bytes, {6, 3e-6, 64e9})).epsilon(1e-9));
}

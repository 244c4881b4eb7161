// The Tensor Engine's C++ back end in a kernel: completion times follow docs/tensor_engine.md, results are the
// golden GEMM's bits.
#include <catch2/catch.hpp>

#include <cstring>

#include "models/tensor_engine/te_backend_model.h"
#include "testbench/verification/golden/golden_gemm.h"
#include "testbench/stimulus.h"

using namespace trnsim;

TEST_CASE("TE back end: back-to-back MATMULs complete at the formula's cycles with golden results", "[te]") {
    te::te_config cfg;
    cfg.rows = 16;
    cfg.cols = 16;
    cfg.n_max = 64;
    cfg.clock_ghz = 1.0;  // 1 cycle = 1 ns
    te::te_backend_model be("be", cfg);
    struct rec {
        uint64_t id;
        sc_core::sc_time t;
        te::te_job job;
    };
    std::vector<rec> done;
    const uint32_t shapes[3][3] = {{16, 16, 64}, {7, 5, 3}, {16, 9, 40}};  // k, m, n
    std::vector<std::vector<float>> S(3), X(3);
    struct driver : sc_core::sc_module {
        SC_HAS_PROCESS(driver);
        std::function<void()> f;
        driver(sc_core::sc_module_name n, std::function<void()> fn) : sc_module(n), f(std::move(fn)) { SC_THREAD(run); }
        void run() { f(); }
    } drv("drv", [&] {
        for (uint64_t i = 0; i < 3; ++i) {
            te::te_job j;
            j.id = i;
            j.in_type = numerics::dtype::bf16;
            j.k = shapes[i][0];
            j.m = shapes[i][1];
            j.n = shapes[i][2];
            S[i] = tb::random_tensor(j.in_type, j.k * j.m, 10 + i, j.stationary);
            X[i] = tb::random_tensor(j.in_type, j.k * j.n, 20 + i, j.moving);
            j.on_done = [&](te::te_job& jj) { done.push_back({jj.id, sc_core::sc_time_stamp(), jj}); };
            be.submit(std::move(j));
        }
    });
    sc_core::sc_start();
    REQUIRE(done.size() == 3);
    // W = ceil(k/4), T = max(n, 64), D = 16 + 16 + 2.
    // #0: load 0..4, stream 4..68, done 102.  #1: load 4..6, stream 68..132, done 166.  #2: load 6..10, stream 132, done 230.
    const uint64_t expect_done[3] = {102, 166, 230}, expect_stream[3] = {4, 68, 132};
    for (int i = 0; i < 3; ++i) {
        REQUIRE(done[i].id == uint64_t(i));
        REQUIRE(done[i].job.stream_start == expect_stream[i]);
        REQUIRE(done[i].job.done == expect_done[i]);
        REQUIRE(done[i].t == sc_core::sc_time(double(expect_done[i]), sc_core::SC_NS));
        auto gold = tb::golden_gemm(S[i], X[i], shapes[i][1], shapes[i][0], shapes[i][2], 16, 1);
        REQUIRE(std::memcmp(gold.data(), done[i].job.out.data(), gold.size() * 4) == 0);
    }
}

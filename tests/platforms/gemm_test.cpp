// End-to-end GEMMs through the whole single-chip platform: HBM -> DMA -> SBUF -> TE -> PSUM -> DMA -> HBM, every
// output element compared bit for bit with the golden GEMM. One platform (one kernel) per test case.
#include <catch2/catch.hpp>

#include "platforms/config/platform_config.h"
#include "testbench/workloads/gemm/gemm_run.h"
#include "platforms/single_chip/chip.h"
#include "testbench/chip_probe.h"
#include "testbench/verification/golden/golden_gemm.h"
#include "tests/support/child_process.h"

using namespace trnsim;

namespace {
// A small chip (16x16 array, 2 cores) so odd shapes cross many tile edges quickly.
platform::platform_config small_chip(std::vector<std::string> extra = {}) {
    std::vector<std::string> o = {"chip.cores=2",
                                  "chip.core.te.rows=16",
                                  "chip.core.te.cols=16",
                                  "chip.core.te.n_max=32",
                                  "chip.core.sbuf.partitions=16",
                                  "chip.core.sbuf.partition_kib=4",
                                  "chip.core.sbuf.banks=4",
                                  "chip.core.psum.partitions=16",
                                  "chip.core.psum.partition_kib=1",
                                  "chip.core.psum.banks=16",
                                  "chip.core.dma.engines=4",
                                  "chip.hbm.capacity_gib=1"};
    o.insert(o.end(), extra.begin(), extra.end());
    return platform::load_platform("trn2", o);
}

tb::gemm_result run(const platform::platform_config& cfg, uint64_t m, uint64_t k, uint64_t n, numerics::dtype t) {
    tb::gemm_spec g;
    g.m = m;
    g.k = k;
    g.n = n;
    g.dtype = t;
    g.seed = m * 1000003 + k * 1009 + n;
    tb::gemm_options opt;
    opt.sim.progress_after_s = 0;
    auto r = tb::run_gemm(cfg, g, opt);
    INFO(r.first_mismatch);
    REQUIRE(r.checked);
    REQUIRE(r.mismatches == 0);
    REQUIRE(r.pass);
    REQUIRE(r.sim_ns > 0);
    return r;
}
} // namespace

#define ODD_GEMM_CASE(DT)                                                                              \
    TEST_CASE("odd-shaped GEMM 37x53x71 in " #DT " matches the golden GEMM bit for bit", "[gemm]") { \
        auto r = run(small_chip(), 37, 53, 71, numerics::dtype::DT);                                   \
        REQUIRE(r.max_abs_err < 1e-4); /* FP32 accumulation error vs FP64, |values| < 1 */       \
    }
ODD_GEMM_CASE(fp32)
ODD_GEMM_CASE(tf32)
ODD_GEMM_CASE(bf16)
ODD_GEMM_CASE(fp16)
ODD_GEMM_CASE(fp8_e4m3)
ODD_GEMM_CASE(fp8_e5m2)

TEST_CASE("FP8 double-row GEMM (K per MATMUL = 2 x rows) matches", "[gemm]") {
    auto r = run(small_chip({"chip.core.te.fp8_double_row=true"}), 29, 100, 45, numerics::dtype::fp8_e4m3);
    REQUIRE(r.tiling.kt == 32);
}

TEST_CASE("GEMM 1x1x1 and a single full tile", "[gemm]") {
    auto r = run(small_chip({"chip.cores=1"}), 1, 1, 1, numerics::dtype::bf16);
    REQUIRE(r.tiling.matmuls == 1);
}

TEST_CASE("GEMM with more cores than output blocks and K much larger than the array", "[gemm]") {
    auto r = run(small_chip({"chip.cores=4"}), 16, 300, 20, numerics::dtype::bf16);
    REQUIRE(r.tiling.k_tiles == 19);
}

TEST_CASE("1024^3 BF16 on trn2 passes and its time is explained by the timing model", "[gemm][trn2]") {
    auto cfg = platform::load_platform("trn2", {});
    auto r = run(cfg, 1024, 1024, 1024, numerics::dtype::bf16);
    // The array streams at full rate while it runs (N = 512 moving columns per MATMUL, back to back) ...
    REQUIRE(r.te_stream_utilisation == Approx(1.0));
    // ... so the elapsed time is bounded below by the compute and by the HBM traffic, and the rest is
    // explained by per-core DMA bandwidth (16 engines x 27.2 GB/s), which the report shows.
    REQUIRE(r.sim_ns >= r.min_time_compute_ns);
    REQUIRE(r.sim_ns >= r.min_time_hbm_ns);
    REQUIRE(r.tiling.matmuls == 8 * 8 * 2);
    const double per_core_dma_ns = (r.dma_bytes / cfg.chip.cores) / (16 * 27.2);
    REQUIRE(r.sim_ns >= per_core_dma_ns);
    REQUIRE(r.sim_ns <= 3 * per_core_dma_ns + 3000);  // DMA-bound plus pipeline fill, not something unexplained
}

// Operands stored the other way (A as M x K, B as N x K) are turned tile by tile on the Vector Engine; a C of the
// input dtype is cast out of PSUM by the Scalar Engine. The products and their accumulation order are the same, so
// C still matches the golden GEMM bit for bit (rounded once to the C type). Shapes cross tile edges in M, N and K,
// and N tiles wider than the partitions (B turned in several chunks).
namespace {
tb::gemm_result run_layout(bool a_rows, bool b_cols, numerics::dtype c_type, const platform::platform_config& cfg,
                           const tb::gemm_options& opt = {}) {
    tb::gemm_spec g;
    g.m = 37, g.k = 53, g.n = 71;
    g.dtype = numerics::dtype::bf16;
    g.a_rows = a_rows, g.b_cols = b_cols, g.c_type = c_type;
    g.seed = 11;
    return tb::run_gemm(cfg, g, opt);
}
void require_exact(const tb::gemm_result& r) {
    INFO(r.first_mismatch);
    REQUIRE(r.checked);
    REQUIRE(r.mismatches == 0);
    REQUIRE(r.pass);
}
} // namespace

TEST_CASE("GEMM with A stored M x K matches bit for bit", "[gemm][layout]") {
    auto r = run_layout(true, false, numerics::dtype::fp32, small_chip());
    require_exact(r);
    REQUIRE(r.stats["chip0.core0.vector.instructions"] + r.stats["chip0.core1.vector.instructions"] > 0);
}

TEST_CASE("GEMM with B stored N x K matches bit for bit", "[gemm][layout]") {
    require_exact(run_layout(false, true, numerics::dtype::fp32, small_chip()));
}

TEST_CASE("GEMM with a BF16 C cast out of PSUM matches the rounded golden GEMM", "[gemm][layout]") {
    auto r = run_layout(false, false, numerics::dtype::bf16, small_chip());
    require_exact(r);
    REQUIRE(r.stats["chip0.core0.scalar.instructions"] > 0);
    REQUIRE(r.stats["chip0.hbm.bytes_written"] >= 37 * 71 * 2);
}

TEST_CASE("GEMM with both operands turned and a BF16 C", "[gemm][layout]") {
    require_exact(run_layout(true, true, numerics::dtype::bf16, small_chip()));
}

TEST_CASE("FP8 double-row GEMM with both operands turned and an FP8 C", "[gemm][layout]") {
    tb::gemm_spec g;
    g.m = 29, g.k = 100, g.n = 45;
    g.dtype = numerics::dtype::fp8_e4m3;
    g.a_rows = g.b_cols = true;
    g.c_type = numerics::dtype::fp8_e4m3;
    auto r = tb::run_gemm(small_chip({"chip.core.te.fp8_double_row=true"}), g, {});
    require_exact(r);
    REQUIRE(r.tiling.kt == 32);
}

TEST_CASE("a turned GEMM times the same without data", "[gemm][layout]") {
    const double t_ns =
        test::in_child_process([] { return run_layout(true, true, numerics::dtype::bf16, small_chip({"sim.functional=false"})).sim_ns; });
    auto f = run_layout(true, true, numerics::dtype::bf16, small_chip());
    require_exact(f);
    REQUIRE(t_ns == f.sim_ns);
}

// C += A B (a weight gradient summed over micro-batches): the stores are accumulating DMA copies, C's seeded old
// value plus the GEMM's rounded once to C's type, bit for bit; they read C as they write it, and a timing-only run
// takes the same time.
namespace {
void check_accumulating(numerics::dtype c_type) {
    {
        tb::gemm_spec g;
        g.m = 37, g.k = 53, g.n = 150;
        g.dtype = numerics::dtype::bf16;
        g.a_rows = true, g.c_type = c_type, g.c_accumulate = true;
        g.seed = 13;
        const double t_ns = test::in_child_process([g] { return tb::run_gemm(small_chip({"sim.functional=false"}), g, {}).sim_ns; });
        auto r = tb::run_gemm(small_chip(), g, {});
        require_exact(r);
        const double c_bytes = double(g.m * g.n * numerics::size_of(c_type));
        REQUIRE(r.stats["chip0.hbm.bytes_read"] >= double(g.m * g.k + g.k * g.n) * 2 + c_bytes);
        REQUIRE(t_ns == r.sim_ns);
        g.c_accumulate = false;
        const double stored_ns = test::in_child_process([g] { return tb::run_gemm(small_chip({"sim.functional=false"}), g, {}).sim_ns; });
        REQUIRE(stored_ns < r.sim_ns);
    }
}
}  // namespace
TEST_CASE("GEMM accumulating into an FP32 C matches the old C plus the golden GEMM", "[gemm][layout]") {
    check_accumulating(numerics::dtype::fp32);
}
TEST_CASE("GEMM accumulating into a BF16 C matches the old C plus the rounded golden GEMM", "[gemm][layout]") {
    check_accumulating(numerics::dtype::bf16);
}

// Operands and C as blocks of columns of wider tensors (row pitches longer than their rows): the elements between
// them are never read or written.
TEST_CASE("GEMM on views: operands and C with row pitches longer than their rows", "[gemm][layout]") {
    auto cfg = small_chip();
    const auto& cc = cfg.chip;
    tb::gemm_spec g;
    g.m = 20, g.k = 40, g.n = 24;
    g.a_rows = g.b_cols = true;
    g.c_type = numerics::dtype::bf16;
    g.seed = 5;
    tb::gemm_layout l = tb::plan_layout(g, cc);
    l.a_ld = 48, l.b_ld = 56, l.c_ld = 32;
    l.b_addr = l.a_addr + 64 * 1024, l.c_addr = l.b_addr + 64 * 1024;
    const tb::gemm_operands ops = tb::make_operands(g);  // a_raw: M x K dense, b_raw: N x K dense
    platform::chip chip("chip0", cc);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    const uint8_t sentinel[2] = {0x5a, 0x5a};
    for (uint64_t a = l.c_addr; a < l.c_addr + g.m * 32 * 2; a += 2) chip.host_write(a, sentinel, 2);
    for (uint64_t r = 0; r < g.m; ++r) chip.host_write(l.a_addr + r * 48 * 2, &ops.a_raw[r * g.k * 2], g.k * 2);
    for (uint64_t r = 0; r < g.n; ++r) chip.host_write(l.b_addr + r * 56 * 2, &ops.b_raw[r * g.k * 2], g.k * 2);
    auto progs = tb::compile_gemm(g, l, cc);
    for (uint32_t c = 0; c < cc.cores; ++c) chip.cores[c]->load(std::move(progs[c]));
    tb::run_to_completion(tb::make_chip_probe(chip), {});
    const std::vector<float> gold = tb::golden_gemm(ops.at, ops.b, g.m, g.k, g.n, tb::plan_tiling(g, cc).kt);
    uint64_t bad = 0, touched = 0;
    for (uint64_t i = 0; i < g.m; ++i) {
        std::vector<uint16_t> row(32);
        chip.host_read(l.c_addr + i * 32 * 2, reinterpret_cast<uint8_t*>(row.data()), 64);
        for (uint64_t j = 0; j < 32; ++j) {
            if (j >= g.n) {
                touched += row[j] != 0x5a5a;
                continue;
            }
            bad += numerics::bf16_to_fp32(row[j]) != numerics::quantize(numerics::dtype::bf16, gold[i * g.n + j]);
        }
    }
    REQUIRE(bad == 0);
    REQUIRE(touched == 0);
    l.c_ld = 10;  // shorter than C's 24 columns
    REQUIRE_THROWS_WITH(tb::compile_gemm(g, l, cc), Catch::Contains("C's row pitch 10 is shorter than its rows (24 elements)"));
}

TEST_CASE("impossible GEMMs are rejected with a clear error", "[gemm][errors]") {
    auto cfg = small_chip();
    tb::gemm_spec g;
    g.m = 0;
    REQUIRE_THROWS_WITH(tb::run_gemm(cfg, g, {}), Catch::Contains("dimensions must be >= 1"));
    g.m = g.k = g.n = 1 << 16;  // 16 GiB of FP32 C in a 1 GiB HBM
    REQUIRE_THROWS_WITH(tb::run_gemm(cfg, g, {}), Catch::Contains("HBM (chip.hbm.capacity_gib) holds"));
    g.m = g.k = g.n = 64;
    g.c_type = numerics::dtype::fp16;  // neither FP32 nor the input dtype
    REQUIRE_THROWS_WITH(tb::run_gemm(cfg, g, {}), Catch::Contains("C is FP32 or the input dtype (bf16), not fp16"));
}

TEST_CASE("config validation names the key path", "[config][errors]") {
    using Catch::Contains;
    REQUIRE_THROWS_WITH(platform::load_platform("nope", {}), Contains("unknown preset 'nope'") && Contains("trn2"));
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.core.te.rowz=4"}), Contains("chip.core.te.rowz: unknown key"));
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.core.te.rows=0"}), Contains("chip.core.te.rows: value 0 is out of range"));
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.core.te.clock_ghz=fast"}), Contains("chip.core.te.clock_ghz: expected a number"));
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.core.te.impl=verilog"}), Contains("chip.core.te.impl: 'verilog' is not one of: tlm, rtl"));
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.core.te.rows=256"}), Contains("chip.core.sbuf.partitions: 128 partitions cannot feed 256"));
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.core.psum.partition_kib=1"}), Contains("chip.core.psum.partition_kib"));
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.hbm.interleave_bytes=300"}), Contains("chip.hbm.interleave_bytes: must be a power of two"));
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.core.sbuf.banks=3"}), Contains("chip.core.sbuf.banks: 3 does not divide"));
    // An SBUF too small for the double-buffered tiles fails when the GEMM is compiled.
    auto cfg = platform::load_platform("trn2", {"chip.core.sbuf.partition_kib=2"});
    tb::gemm_spec g;
    REQUIRE_THROWS_WITH(tb::run_gemm(cfg, g, {}), Contains("chip.core.sbuf.partition_kib"));
}

TEST_CASE("every preset loads and validates", "[config]") {
    for (const auto& p : platform::list_presets(platform::default_config_dir())) {
        INFO(p);
        REQUIRE_NOTHROW(platform::load_platform(p, {}));
    }
}

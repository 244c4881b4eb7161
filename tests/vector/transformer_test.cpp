// Transformer workloads compiled to a core's instruction streams and checked against the FP64 golden model
// (testbench/workloads/transformer/transformer.h): each TEST_CASE runs one workload in its own process.
#include <catch2/catch.hpp>

#include "platforms/config/platform_config.h"
#include "testbench/workloads/transformer/transformer.h"

using namespace trnsim;

namespace {
tb::transformer_result run(const tb::transformer_spec& s, std::vector<std::string> sets = {}) {
    sets.push_back("chip.cores=1");
    auto cfg = platform::load_platform("trn2", sets);
    tb::transformer_options o;
    o.sim.progress_after_s = 0;
    auto r = tb::run_transformer(cfg, s, o);
    for (const auto& c : r.checks)
        UNSCOPED_INFO(c.name << ": rel err " << c.rel_err << " (max abs " << c.max_abs_err << ", max |ref| " << c.max_ref
                             << ", tolerance " << c.tolerance << ")");
    return r;
}
} // namespace

TEST_CASE("small decoder layer forward and backward on one chip matches the FP64 golden model", "[transformer]") {
    tb::transformer_spec s;
    s.kind = tb::transformer_kind::decoder;
    s.seq = 32;
    s.hidden = 64;
    s.heads = 4;
    s.ffn = 96;
    auto r = run(s);
    REQUIRE(r.checked);
    CHECK(r.checks.size() == 11);
    CHECK(r.pass);
    CHECK(r.te_instructions > 0);
    CHECK(r.vector_instructions > 0);
    CHECK(r.scalar_instructions > 0);
    CHECK(r.sim_ns > 0);
}

TEST_CASE("decoder layer with layer norm forward and backward matches the golden model including the bias gradients", "[transformer]") {
    tb::transformer_spec s;
    s.kind = tb::transformer_kind::decoder;
    s.seq = 48;
    s.hidden = 32;
    s.heads = 2;
    s.ffn = 64;
    s.layer_norm = true;
    auto r = run(s);
    REQUIRE(r.checked);
    CHECK(r.checks.size() == 13);
    CHECK(r.pass);
}

TEST_CASE("attention without a mask and with 8 heads of 16 matches the golden model", "[transformer]") {
    tb::transformer_spec s;
    s.kind = tb::transformer_kind::attention;
    s.seq = 128;
    s.hidden = 128;
    s.heads = 8;
    s.causal = false;
    auto r = run(s);
    REQUIRE(r.checked);
    CHECK(r.pass);
    // QK^T, PV per head plus the three projections and the output projection
    CHECK(r.te_instructions == 2 * 8 + 4);
}

TEST_CASE("Adam step over several tiles with edge tiles updates p m and v in place in HBM", "[transformer]") {
    tb::transformer_spec s;
    s.kind = tb::transformer_kind::adam;
    s.rows = 130;
    s.cols = 520;
    auto r = run(s);
    REQUIRE(r.checked);
    CHECK(r.checks.size() == 3);
    CHECK(r.pass);
    CHECK(r.vector_instructions == 4 * 6);  // 4 tiles (2 x 2 with edges) x 6 Vector instructions
    CHECK(r.sbuf_bytes_per_partition == 2 * 6 * 512 * 4);  // two buffer sets of 6 tiles, reused by tiles 2 and 3
}

TEST_CASE("the workload compiler rejects shapes that do not fit one partition tile", "[transformer]") {
    auto cfg = platform::load_platform("trn2", {"chip.cores=1"});
    tb::transformer_spec s;
    s.seq = 129;
    CHECK_THROWS_WITH(tb::validate(s, cfg.chip), Catch::Contains("--seq: 129 is outside 1..128"));
    s.seq = 64;
    s.heads = 5;
    CHECK_THROWS_WITH(tb::validate(s, cfg.chip), Catch::Contains("--heads: 5 does not divide --hidden 64"));
    // attention does not use --ffn: no limit on it; the n_max limit names the dimension that exceeds it
    s.heads = 4;
    s.kind = tb::transformer_kind::attention;
    s.ffn = 1000;
    CHECK_NOTHROW(tb::validate(s, cfg.chip));
    s.kind = tb::transformer_kind::mlp;
    s.ffn = 100;
    auto small = platform::load_platform("trn2", {"chip.cores=1", "chip.core.te.n_max=96"});
    CHECK_THROWS_WITH(tb::validate(s, small.chip), Catch::Contains("--ffn: 100 exceeds the Tensor Engine's n_max 96"));
    s.ffn = 96;
    CHECK_NOTHROW(tb::validate(s, small.chip));
}

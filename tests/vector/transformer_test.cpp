// Transformer workloads compiled to a core's instruction streams and checked against the FP64 golden model
// (testbench/transformer/transformer.h): each TEST_CASE runs one workload in its own process.
#include <catch2/catch.hpp>

#include "platforms/config/platform_config.h"
#include "testbench/transformer/transformer.h"

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

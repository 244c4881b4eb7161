// The energy model (plain C++): the breakdown adds up, each term scales with its activity, config errors name keys.
#include <catch2/catch.hpp>

#include <numeric>

#include "models/energy/energy_model.h"
#include "platforms/config/platform_config.h"

using namespace trnsim;

namespace {
energy::activity some_activity() {
    energy::activity a;
    a.macs[size_t(numerics::dtype::bf16)] = 1e12;
    a.macs[size_t(numerics::dtype::fp8_e4m3)] = 5e11;
    a.sbuf_read_bytes = 3e9;
    a.sbuf_write_bytes = 1e9;
    a.psum_read_bytes = 2e8;
    a.psum_write_bytes = 4e8;
    a.psum_accumulate_bytes = 3e8;
    a.hbm_bytes = 2e9;
    a.dma_bytes = 2e9;
    a.noc_bytes = 2e9;
    a.link_bytes = 1e8;
    a.seconds = 1e-3;
    a.cores = 8;
    a.pes = 8 * 128 * 128;
    return a;
}
double sum_parts(const energy::breakdown& b) {
    return std::accumulate(b.parts.begin(), b.parts.end(), 0.0, [](double s, const auto& p) { return s + p.joules; });
}
} // namespace

TEST_CASE("energy breakdown adds up to the total and each term is activity x energy per operation", "[energy]") {
    energy::energy_config c;
    auto a = some_activity();
    auto b = energy::estimate(c, a);
    REQUIRE(sum_parts(b) == Approx(b.total_j).epsilon(1e-12));
    REQUIRE(b.dynamic_j + b.static_j == Approx(b.total_j).epsilon(1e-12));
    REQUIRE(b.joules("mac.bf16") == Approx(1e12 * c.mac_pj[size_t(numerics::dtype::bf16)] * 1e-12));
    REQUIRE(b.joules("mac.fp8_e4m3") == Approx(5e11 * c.mac_pj[size_t(numerics::dtype::fp8_e4m3)] * 1e-12));
    REQUIRE(b.joules("hbm") == Approx(2e9 * 8 * c.hbm_pj_per_bit * 1e-12));
    REQUIRE(b.joules("psum.read") == Approx((2e8 + 3e8) * c.psum_read_pj_per_byte * 1e-12));  // accumulate reads too
    REQUIRE(b.joules("link") == Approx(1e8 * 8 * c.link_pj_per_bit * 1e-12));
    REQUIRE(b.joules("static.cores") == Approx(8 * c.static_w_per_core * 1e-3));
    REQUIRE(b.joules("static.chip") == Approx(c.static_w_chip * 1e-3));
    REQUIRE(b.joules("static.pes") == Approx(8 * 128 * 128 * c.static_mw_per_pe * 1e-3 * 1e-3));
    REQUIRE(b.avg_power_w() == Approx(b.total_j / 1e-3));
    REQUIRE(b.parts.size() == energy::DTYPES + 8 + 3);
}

TEST_CASE("energy scales: dynamic with activity, static with time and chips", "[energy]") {
    energy::energy_config c;
    auto a = some_activity();
    auto b1 = energy::estimate(c, a);
    auto a2 = a;
    a2 += a;  // twice the work of one chip... but += keeps the longest time: only dynamic doubles
    auto b2 = energy::estimate(c, a2, 2);
    REQUIRE(b2.dynamic_j == Approx(2 * b1.dynamic_j));
    REQUIRE(b2.joules("static.cores") == Approx(2 * b1.joules("static.cores")));  // twice the cores
    REQUIRE(b2.joules("static.chip") == Approx(2 * b1.joules("static.chip")));    // two chips
    REQUIRE(b2.joules("static.pes") == Approx(2 * b1.joules("static.pes")));      // twice the array area
    auto a3 = a;
    a3.seconds *= 3;
    auto b3 = energy::estimate(c, a3);
    REQUIRE(b3.dynamic_j == Approx(b1.dynamic_j));
    REQUIRE(b3.static_j == Approx(3 * b1.static_j));
    REQUIRE(b3.avg_power_w() < b1.avg_power_w());
    c.hbm_pj_per_bit *= 2;
    REQUIRE(energy::estimate(c, a).joules("hbm") == Approx(2 * b1.joules("hbm")));
}

TEST_CASE("chip.energy is read from the preset and --set, and bad values name their key", "[energy][config]") {
    auto p = platform::load_platform("trn2", {"chip.energy.mac_pj.bf16=0.5", "chip.energy.static_w_chip=7"});
    REQUIRE(p.chip.energy.mac_pj[size_t(numerics::dtype::bf16)] == 0.5);
    REQUIRE(p.chip.energy.static_w_chip == 7);
    REQUIRE(platform::load_platform("trn1", {}).chip.energy.hbm_pj_per_bit == 3.9);
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.energy.hbm_pj_per_bit=-1"}),
                        Catch::Contains("chip.energy.hbm_pj_per_bit: value -1 is out of range"));
    REQUIRE_THROWS_WITH(platform::load_platform("trn2", {"chip.energy.mac_pj.int8=1"}),
                        Catch::Contains("chip.energy.mac_pj.int8: unknown key"));
}

// Memspec presets, parsing (ns / nCK, key paths in errors, consistency checks) and hbm_dram_config validation.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "models/hbm/dram/hbm_dram_config.h"
#include "tests/models/hbm_test_support.h"

using namespace trnsim;
using namespace trnsim::hbm;
using Catch::Matchers::Contains;

namespace {
memspec parse_wrapped(const nlohmann::json& spec) {
    nlohmann::json j;
    j["memspec"] = spec;
    auto root = config::node::root(j, "test.json");
    return parse_memspec(root.child("memspec"));
}
std::string error_of(const nlohmann::json& spec) {
    try {
        parse_wrapped(spec);
    } catch (const config::config_error& e) {
        return e.what();
    }
    return "no error";
}
} // namespace

TEST_CASE("presets parse and match the Trainium-class figures", "[hbm][memspec]") {
    auto h3 = test::preset("hbm3");
    CHECK(h3.pcs_per_stack() == 32);
    CHECK(h3.banks_per_pc() == 48);
    CHECK(h3.burst_bytes() == 32);
    CHECK(h3.burst_cycles() == 2);
    CHECK(h3.stack_bytes() == 24ull << 30);
    CHECK(h3.stack_peak_gbps() == Approx(716.8));
    CHECK(h3.tRCD == 20);     // ceil(14 / 0.714)
    CHECK(h3.tRFC == 630);    // 450 ns
    CHECK(h3.tREFI == 5460);  // 3900 ns exactly
    CHECK(h3.tCCD_L == 4);
    CHECK(h3.has_per_bank_refresh());

    auto h2e = test::preset("hbm2e");
    CHECK(h2e.stack_bytes() == 16ull << 30);
    CHECK(h2e.stack_peak_gbps() == Approx(409.6));
    CHECK(h2e.burst_bytes() == 32);

    auto h3e = test::preset("hbm3e");
    CHECK(h3e.stack_bytes() == 36ull << 30);
    CHECK(h3e.stack_peak_gbps() == Approx(1228.8));
    CHECK(h3e.tRCD == 34);
}

TEST_CASE("timing may be given in ns, in nCK or both (the larger wins)", "[hbm][memspec]") {
    auto j = test::preset_json("hbm3");
    j["timing_ck"]["tRRD_S"] = 8u;
    CHECK(parse_wrapped(j).tRRD_S == 8);
    j["timing_ck"]["tRRD_S"] = 2u;
    CHECK(parse_wrapped(j).tRRD_S == 6);  // ceil(4 ns / 0.714 ns)
    j["timing_ns"].erase("tRRD_S");
    CHECK(parse_wrapped(j).tRRD_S == 2);
}

TEST_CASE("memspec errors name the full key path", "[hbm][memspec]") {
    auto j = test::preset_json("hbm3");
    SECTION("consistency: tRC >= tRAS + tRP") {
        j["timing_ns"]["tRC"] = 40u;
        auto e = error_of(j);
        CHECK_THAT(e, Contains("memspec.timing_ns.tRC"));
        CHECK_THAT(e, Contains("tRAS + tRP"));
    }
    SECTION("missing value") {
        j["organization"].erase("rows");
        CHECK_THAT(error_of(j), Contains("memspec.organization.rows: is required"));
    }
    SECTION("missing timing") {
        j["timing_ns"].erase("tFAW");
        CHECK_THAT(error_of(j), Contains("memspec.timing_ns.tFAW: is required"));
    }
    SECTION("unknown key") {
        j["timing_ns"]["tFOO"] = 1u;
        CHECK_THAT(error_of(j), Contains("memspec.timing_ns.tFOO: unknown key"));
    }
    SECTION("burst overlap on the data bus") {
        j["timing_ck"]["tCCD_S"] = 1u;
        CHECK_THAT(error_of(j), Contains("memspec.timing_ck.tCCD_S"));
    }
    SECTION("read/write turnaround") {
        j["timing_ck"]["tRTW"] = 3u;
        CHECK_THAT(error_of(j), Contains("memspec.timing_ck.tRTW"));
    }
    SECTION("wrong type") {
        j["organization"]["channels"] = "sixteen";
        CHECK_THAT(error_of(j), Contains("memspec.organization.channels: expected a whole number"));
    }
    SECTION("per-bank refresh needs both values") {
        j["timing_ns"].erase("tRFCpb");
        CHECK_THAT(error_of(j), Contains("tRREFD"));
    }
}

TEST_CASE("hbm_dram_config: defaults, choices and errors with key paths", "[hbm][config]") {
    nlohmann::json j;
    j["hbm"]["memspec"] = test::preset_json("hbm3");
    j["hbm"]["stacks"] = 4u;
    auto parse = [&] {
        auto root = config::node::root(j, "chip.json");
        return parse_hbm_dram_config(root.child("hbm"));
    };
    auto err = [&] {
        try {
            parse();
        } catch (const config::config_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    auto c = parse();
    CHECK(c.stacks == 4);
    CHECK(c.ctrl.scheduler == scheduler_kind::fr_fcfs);
    CHECK(c.ctrl.page_policy == page_policy_kind::closed_adaptive);
    CHECK(c.ctrl.refresh == refresh_kind::per_bank);
    CHECK(c.mapping.empty());
    CHECK(default_mapping(c.spec) == "sid-ro-ba-co:2-st-ch-pc-co:3-bg");

    j["hbm"]["write_low_watermark"] = 30u;
    CHECK_THAT(err(), Contains("hbm.write_low_watermark: must be below write_high_watermark"));
    j["hbm"].erase("write_low_watermark");
    j["hbm"]["scheduler"] = "round_robin";
    CHECK_THAT(err(), Contains("hbm.scheduler: 'round_robin' is not one of"));
    j["hbm"].erase("scheduler");
    j["hbm"]["mapping"] = "ro-ba-bg-co-pc-ch";
    CHECK_THAT(err(), Contains("hbm.mapping"));
    CHECK_THAT(err(), Contains("is not placed"));
    j["hbm"]["mapping"] = "sid-ro-ba-bg-co-st-pc-ch";
    CHECK(parse().mapping == "sid-ro-ba-bg-co-st-pc-ch");
    j["hbm"]["memspec"]["timing_ns"].erase("tRFCpb");
    j["hbm"]["memspec"]["timing_ns"].erase("tRREFD");
    j["hbm"]["refresh"] = "per_bank";
    CHECK_THAT(err(), Contains("hbm.refresh: per_bank refresh needs tRFCpb"));
    j["hbm"].erase("refresh");
    CHECK(parse().ctrl.refresh == refresh_kind::all_bank);
    j["hbm"]["queue"] = 3u;
    CHECK_THAT(err(), Contains("hbm.queue: unknown key"));
}

// Address mapping: grammar, coverage validation, bijection, and the layout of the default mapping.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "models/hbm/dram/address_mapper.h"
#include "models/hbm/dram/hbm_dram_config.h"
#include "tests/models/hbm_test_support.h"

using namespace trnsim::hbm;
using Catch::Matchers::Contains;

namespace {
std::string error_of(const std::string& spec, const memspec& m, uint32_t stacks = 1) {
    try {
        address_mapper a(spec, m, stacks);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "no error";
}
} // namespace

TEST_CASE("a mapping is a bijection between addresses and DRAM coordinates", "[hbm][mapper]") {
    memspec m = test::small_spec();
    m.rows = 4;  // 2 stacks x 4 ch x 16 banks x 4 rows x 32 bursts = 16384 bursts
    for (std::string spec : {"ro-ba-bg-co-ch-st", "st-ro-co:2-ba-ch-bg-co:3", "co:1-ro-ba:1-st-ch-bg-ba:1-co:4"}) {
        address_mapper map(spec, m, 2);
        REQUIRE(map.capacity() == m.stack_bytes() * 2);
        std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>> seen;
        for (uint64_t a = 0; a < map.capacity(); a += map.burst_bytes()) {
            auto d = map.decode(a);
            CHECK(d.row < m.rows);
            CHECK(d.column < m.bursts_per_row());
            CHECK(map.encode(d) == a);
            seen.insert({d.stack, d.channel, d.bank_group, d.bank, d.row, d.column});
        }
        CHECK(seen.size() == map.capacity() / map.burst_bytes());
    }
}

TEST_CASE("non-power-of-two fields decode in mixed radix", "[hbm][mapper]") {
    auto m = test::preset("hbm3");  // 3 SIDs
    address_mapper map(default_mapping(m), m, 3);  // and 3 stacks
    CHECK(map.capacity() == 3 * (24ull << 30));
    std::mt19937_64 rng(7);
    for (int i = 0; i < 100000; ++i) {
        uint64_t a = (rng() % (map.capacity() / 32)) * 32;
        auto d = map.decode(a);
        REQUIRE(d.sid < 3);
        REQUIRE(d.stack < 3);
        REQUIRE(map.encode(d) == a);
    }
    auto top = map.decode(map.capacity() - 32);
    CHECK(top.sid == 2);
    CHECK(top.row == m.rows - 1);
}

TEST_CASE("the default mapping streams across bank groups, then pseudo-channels, staying in a row", "[hbm][mapper]") {
    auto m = test::preset("hbm3");
    address_mapper map(default_mapping(m), m, 1);
    for (uint64_t k = 0; k < 8; ++k) {
        auto d = map.decode(k * 32);
        CHECK(d.bank_group == k % 4);
        CHECK(d.column == k / 4);
        CHECK(map.pc_index(d) == 0);
    }
    auto next_pc = map.decode(1024);  // 4 bank groups x 8 bursts x 32 B per pseudo-channel
    CHECK(map.pc_index(next_pc) == 1);
    CHECK(next_pc.column == 0);
    auto back = map.decode(32 * 1024);  // all 32 pseudo-channels later: same rows, next column block
    CHECK(map.pc_index(back) == 0);
    CHECK(back.column == 8);
    CHECK(back.row == 0);
}

TEST_CASE("mapping errors say what is wrong", "[hbm][mapper]") {
    memspec m = test::small_spec();
    CHECK(error_of("ro-ba-bg-co-ch", m) == "no error");
    CHECK_THAT(error_of("ro-ba-bg-co", m), Contains("field 'ch' (4 values) is not placed"));
    CHECK_THAT(error_of("ro-ba-bg-co-ch-xx", m), Contains("unknown field 'xx'"));
    CHECK_THAT(error_of("ro-ba-bg-co:2-ch-co:2", m), Contains("cover 4 bits but it has 32 values (5 bits)"));
    CHECK_THAT(error_of("ro-ba-bg-co-ch-co:1", m), Contains("every piece of a split field needs ':bits'"));
    CHECK_THAT(error_of("ro-ba-bg--co-ch", m), Contains("empty field"));
    CHECK_THAT(error_of("ro-ba-bg-co-ch-st:1", m), Contains("cover 1 bits but it has 1 values"));
    m.rows = 1000;
    CHECK(error_of("ro-ba-bg-co-ch", m) == "no error");
    CHECK_THAT(error_of("ro:5-ba-bg-co-ch-ro:5", m), Contains("not a power of two"));
}

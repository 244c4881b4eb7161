// Trace front end: trace-file parsing and its errors (file:line), synthetic patterns (the command line,
// apps/hbm.cpp, is tested in tests/cli).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <sstream>

#include "testbench/tools/hbm_trace.h"
#include "tests/models/hbm_test_support.h"

using namespace trnsim;
using Catch::Matchers::Contains;

namespace {
std::string parse_error(const std::string& text, uint64_t capacity = 1 << 20) {
    std::istringstream in(text);
    try {
        tb::read_hbm_trace(in, "t.trace", capacity);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "no error";
}
} // namespace

TEST_CASE("trace files: fields, hex, comments", "[hbm][trace]") {
    std::istringstream in("# a comment\n"
                          "0 R 0x1000 64\n"
                          "\n"
                          "12.5 W 4096 32   # trailing comment\n"
                          "100 r 0x0 0x40\n");
    auto t = tb::read_hbm_trace(in, "t.trace", 1 << 20);
    REQUIRE(t.size() == 3);
    CHECK(t[0].time_ns == 0);
    CHECK_FALSE(t[0].write);
    CHECK(t[0].addr == 0x1000);
    CHECK(t[0].size == 64);
    CHECK(t[1].time_ns == 12.5);
    CHECK(t[1].write);
    CHECK(t[1].addr == 4096);
    CHECK(t[2].size == 64);
}

TEST_CASE("trace errors name file and line", "[hbm][trace]") {
    CHECK_THAT(parse_error("0 R 0 64\n0 X 0 64\n"), Contains("t.trace:2: bad command 'X'"));
    CHECK_THAT(parse_error("0 R 0\n"), Contains("t.trace:1: expected `time_ns R|W address size`, got 3 fields"));
    CHECK_THAT(parse_error("#\n\nx R 0 64\n"), Contains("t.trace:3: bad time 'x'"));
    CHECK_THAT(parse_error("0 R 0x10000000 64\n"), Contains("t.trace:1: request [0x10000000, +64) is beyond"));
    CHECK_THAT(parse_error("0 W 0 0\n"), Contains("t.trace:1: bad size '0'"));
    CHECK_THAT(parse_error("-1 W 0 4\n"), Contains("t.trace:1: bad time '-1'"));
    // Times past 1e9 ns used to wrap to a tiny simulated time (1e20) or run for hours (1e12, every refresh stepped).
    CHECK_THAT(parse_error("0 R 0 64\n1e20 R 0x40 64\n"), Contains("t.trace:2: time '1e20' is beyond 1e9 ns"));
    CHECK(parse_error("1e9 R 0 64\n") == "no error");
}

TEST_CASE("trace numbers are decimal or 0x hex, never octal", "[hbm][trace]") {
    std::istringstream in("0 R 010 0100\n");
    auto t = tb::read_hbm_trace(in, "t.trace", 1 << 20);
    REQUIRE(t.size() == 1);
    CHECK(t[0].addr == 10);
    CHECK(t[0].size == 100);
    CHECK_THAT(parse_error("0 R 0o10 64\n"), Contains("t.trace:1: bad address '0o10'"));
    CHECK_THAT(parse_error("0 R +64 64\n"), Contains("t.trace:1: bad address '+64'"));
}

TEST_CASE("the span a trace may have shrinks with the stacks (every stack's refresh is stepped)", "[hbm][trace]") {
    auto with_stacks = [](const std::string& text, uint32_t stacks) -> std::string {
        std::istringstream in(text);
        try {
            tb::read_hbm_trace(in, "t.trace", 1 << 20, stacks);
        } catch (const std::runtime_error& e) {
            return e.what();
        }
        return "no error";
    };
    CHECK(with_stacks("0 R 0 64\n2.5e8 R 0 64\n", 4) == "no error");
    CHECK_THAT(with_stacks("0 R 0 64\n3e8 R 0 64\n", 4),
               Contains("t.trace:2: time '3e8' is beyond 2.5e8 ns (1e9 ns / 4 stacks"));
    CHECK_THAT(with_stacks("1e9 R 0 64\n", 8), Contains("is beyond 1.25e8 ns (1e9 ns / 8 stacks"));
}

TEST_CASE("synthetic patterns", "[hbm][trace]") {
    const uint64_t cap = 1 << 24;
    tb::hbm_pattern p;
    p.kind = tb::hbm_pattern_kind::strided;
    p.requests = 10;
    p.stride = 8192;
    auto s = tb::make_hbm_pattern(p, cap);
    CHECK(s[3].addr == 3 * 8192);
    p.kind = tb::hbm_pattern_kind::sequential;
    p.size = 128;
    CHECK(tb::make_hbm_pattern(p, cap)[5].addr == 5 * 128);
    p.kind = tb::hbm_pattern_kind::random;
    p.requests = 30000;
    p.mix_reads = 2;
    p.mix_writes = 1;
    auto r = tb::make_hbm_pattern(p, cap);
    size_t w = 0;
    for (auto& x : r) {
        w += x.write;
        REQUIRE(x.addr % 128 == 0);
        REQUIRE(x.addr + x.size <= cap);
    }
    CHECK(double(w) / double(r.size()) == Approx(1.0 / 3).margin(0.01));
    CHECK(tb::make_hbm_pattern(p, cap)[100].addr == r[100].addr);  // seeded
}

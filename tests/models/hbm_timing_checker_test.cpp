// One test per timing constraint: a command sequence that violates it on purpose; the checker must name the
// constraint and give the exact earliest legal cycle.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "models/hbm/dram/checker/timing_checker.h"
#include "tests/models/hbm_test_support.h"

using namespace trnsim::hbm;

namespace {

// Banks of small_spec(): bank = group * 4 + index; b0, b1 share group 0; b4 is group 1, b8 group 2, b12 group 3.
struct fixture {
    memspec spec = test::small_spec();
    timing_checker chk{spec};
    bank_fsm fsm{spec.banks_per_pc()};

    void issue(command c, uint32_t bank, cycle_t t, uint32_t row = 0) {
        auto r = chk.check(c, bank, t, &fsm);
        INFO(name(c) << " bank " << bank << " at " << t << ": " << name(r.violated) << ", earliest " << r.earliest);
        REQUIRE(r.ok);
        chk.issue(c, bank, t);
        fsm.apply(c, bank, row);
    }
    // `c` at `t` violates `why`; the earliest legal cycle is `earliest` and the command is legal there.
    void expect(command c, uint32_t bank, cycle_t t, constraint why, cycle_t earliest) {
        auto r = chk.check(c, bank, t, &fsm);
        INFO(name(c) << " bank " << bank << " at " << t << ": got " << name(r.violated) << ", earliest " << r.earliest);
        CHECK_FALSE(r.ok);
        CHECK(r.violated == why);
        CHECK(r.earliest == earliest);
        CHECK(chk.check(c, bank, earliest, &fsm).ok);
        CHECK_FALSE(chk.check(c, bank, earliest - 1, &fsm).ok);
    }
};

} // namespace

TEST_CASE("tRCD: ACT to RD of the same bank", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.expect(command::RD, 0, 9, constraint::tRCD, 10);
    f.expect(command::RDA, 0, 0, constraint::tRCD, 10);
}

TEST_CASE("tRCDWR: ACT to WR of the same bank", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.expect(command::WR, 0, 7, constraint::tRCDWR, 8);
}

TEST_CASE("tRAS: ACT to PRE of the same bank", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.expect(command::PRE, 0, 24, constraint::tRAS, 25);
}

TEST_CASE("tRP: PRE to ACT of the same bank", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.issue(command::PRE, 0, 30);
    f.expect(command::ACT, 0, 40, constraint::tRP, 41);  // tRC would allow 40
}

TEST_CASE("tRP: PRE to REFab, and after an auto-precharge", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.issue(command::PRE, 0, 30);
    f.expect(command::REFAB, 0, 35, constraint::tRP, 41);
    f.issue(command::ACT, 4, 50);
    f.issue(command::RDA, 4, 80);  // auto-precharge at max(ACT + tRAS, RD + tRTP) = 84
    CHECK(f.chk.auto_precharge_at(4) == 84);
    f.expect(command::ACT, 4, 90, constraint::tRP, 95);
}

TEST_CASE("tRC: ACT to ACT of the same bank", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.issue(command::PRE, 0, 25);
    f.expect(command::ACT, 0, 38, constraint::tRC, 40);  // tRP would allow 36
}

TEST_CASE("tRC: ACT to REFab", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.issue(command::PRE, 0, 25);
    f.expect(command::REFAB, 0, 36, constraint::tRC, 40);
}

TEST_CASE("tRTP: RD to PRE of the same bank", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.issue(command::RD, 0, 30);
    f.expect(command::PRE, 0, 33, constraint::tRTP, 34);
}

TEST_CASE("tWR: write recovery before PRE", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.issue(command::WR, 0, 30);
    f.expect(command::PRE, 0, 40, constraint::tWR, 30 + 5 + 2 + 9);
}

TEST_CASE("tCCD_L: column commands in the same bank group", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.issue(command::ACT, 1, 5);
    f.issue(command::RD, 0, 20);
    f.expect(command::RD, 1, 22, constraint::tCCD_L, 23);
    f.issue(command::WR, 0, 40);
    f.expect(command::WR, 1, 42, constraint::tCCD_L, 43);
}

TEST_CASE("tCCD_S: column commands in different bank groups", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.issue(command::ACT, 4, 3);
    f.issue(command::RD, 0, 20);
    f.expect(command::RD, 4, 21, constraint::tCCD_S, 22);
    f.issue(command::WR, 0, 40);
    f.expect(command::WR, 4, 41, constraint::tCCD_S, 42);
}

TEST_CASE("tRRD_S: ACT to ACT in different bank groups", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.expect(command::ACT, 4, 2, constraint::tRRD_S, 3);
}

TEST_CASE("tRRD_L: ACT to ACT in the same bank group", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.expect(command::ACT, 1, 4, constraint::tRRD_L, 5);
}

TEST_CASE("tFAW: a fifth ACT inside the four-activate window", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.issue(command::ACT, 4, 3);
    f.issue(command::ACT, 8, 6);
    f.issue(command::ACT, 12, 9);
    f.expect(command::ACT, 1, 12, constraint::tFAW, 20);  // tRRD_S allows 12, tRRD_L 5
}

TEST_CASE("tWTR_S: write to read in different bank groups", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.issue(command::ACT, 4, 3);
    f.issue(command::WR, 0, 10);
    f.expect(command::RD, 4, 15, constraint::tWTR_S, 10 + 5 + 2 + 2);
}

TEST_CASE("tWTR_L: write to read in the same bank group", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.issue(command::ACT, 1, 5);
    f.issue(command::WR, 0, 15);
    f.expect(command::RD, 1, 25, constraint::tWTR_L, 15 + 5 + 2 + 6);
    f.expect(command::RD, 0, 25, constraint::tWTR_L, 15 + 5 + 2 + 6);
}

TEST_CASE("tRTW: read to write turnaround", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.issue(command::RD, 0, 10);
    f.expect(command::WR, 0, 12, constraint::tRTW, 22);
}

TEST_CASE("tRFC: all-bank refresh blocks every bank", "[hbm][checker]") {
    fixture f;
    f.issue(command::REFAB, 0, 0);
    f.expect(command::ACT, 7, 99, constraint::tRFC, 100);
    f.expect(command::REFAB, 0, 50, constraint::tRFC, 100);
    f.expect(command::REFPB, 3, 50, constraint::tRFC, 100);
}

TEST_CASE("tRFCpb: per-bank refresh blocks its bank", "[hbm][checker]") {
    fixture f;
    f.issue(command::REFPB, 0, 0);
    f.expect(command::ACT, 0, 20, constraint::tRFCpb, 50);
    f.expect(command::REFAB, 0, 20, constraint::tRFCpb, 50);
}

TEST_CASE("tRREFD: per-bank refresh to ACT or REFpb of another bank", "[hbm][checker]") {
    fixture f;
    f.issue(command::REFPB, 0, 0);
    f.expect(command::ACT, 1, 6, constraint::tRREFD, 7);
    f.expect(command::REFPB, 2, 3, constraint::tRREFD, 7);
    fixture g;
    g.issue(command::ACT, 0, 0);
    g.expect(command::REFPB, 5, 4, constraint::tRREFD, 7);
}

TEST_CASE("row_bus: one row command per cycle", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.expect(command::PRE, 5, 0, constraint::row_bus, 1);  // PRE to a closed bank is a legal no-op
}

TEST_CASE("PREA waits for the slowest bank", "[hbm][checker]") {
    fixture f;
    f.issue(command::ACT, 0, 0);
    f.issue(command::ACT, 4, 3);
    f.expect(command::PREA, 0, 25, constraint::tRAS, 28);
    f.issue(command::PREA, 0, 28);
    CHECK(f.fsm.open_count() == 0);
    f.expect(command::ACT, 1, 30, constraint::tRP, 39);
    f.expect(command::ACT, 0, 30, constraint::tRC, 40);
}

TEST_CASE("bank_state: commands illegal in the bank state", "[hbm][checker]") {
    fixture f;
    auto r = f.chk.check(command::RD, 0, 100, &f.fsm);
    CHECK(r.violated == constraint::bank_state);
    CHECK(r.earliest == NEVER);
    f.issue(command::ACT, 0, 0);
    CHECK(f.chk.check(command::ACT, 0, 100, &f.fsm).violated == constraint::bank_state);
    CHECK(f.chk.check(command::REFAB, 0, 100, &f.fsm).violated == constraint::bank_state);
    CHECK(f.chk.check(command::REFPB, 0, 100, &f.fsm).violated == constraint::bank_state);
    CHECK(f.chk.check(command::REFPB, 1, 100, &f.fsm).ok);
}

TEST_CASE("earliest() reports the binding constraint without a proposed time", "[hbm][checker]") {
    fixture f;
    CHECK(f.chk.earliest(command::ACT, 0).why == constraint::none);
    f.issue(command::ACT, 0, 0);
    auto b = f.chk.earliest(command::RD, 0);
    CHECK(b.why == constraint::tRCD);
    CHECK(b.t == 10);
}

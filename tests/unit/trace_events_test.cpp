// The trace-event writer (plain C++): lane packing, JSON validity and escaping, event budget and time window.
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "tlm/trace_events.h"

using namespace trnsim;

TEST_CASE("lane packer puts overlapping spans on separate lanes and reuses free ones", "[timeline]") {
    tlmx::lane_packer p;
    REQUIRE(p.place(0, 10) == 0);
    REQUIRE(p.place(5, 8) == 1);    // overlaps lane 0
    REQUIRE(p.place(8, 12) == 1);   // lane 1 free at 8
    REQUIRE(p.place(10, 20) == 0);  // lane 0 free at 10
    REQUIRE(p.place(11, 13) == 2);
    REQUIRE(p.lanes() == 3);
}

TEST_CASE("trace-event writer emits valid JSON with names, lanes, args and escapes", "[timeline]") {
    tlmx::trace_event_writer w;
    w.process(0, "chip0 \"x\"");
    size_t te = w.track(0, "core0.te");
    size_t q = w.track(0, "core0.dma_queue0");
    tlmx::trace_args a;
    a.num("tile", uint64_t(7)).hex("addr", 0x1000).str("note", "a\\b\"c\n").num("ratio", 0.5);
    REQUIRE(w.span(te, "MATMUL", "te", 1'500'000, 2'000'001, a));
    REQUIRE(w.span(q, "DMA", "queue", 0, 3'000'000));
    REQUIRE(w.span(q, "DMA", "queue", 1'000'000, 2'000'000));  // overlaps: a second lane
    REQUIRE(w.counter(0, "depth", 5, 3));
    std::ostringstream os;
    w.write(os, {{"k", "v"}});
    auto j = nlohmann::json::parse(os.str());
    std::map<std::string, int> threads;
    const nlohmann::json* mm = nullptr;
    for (const auto& e : j["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "thread_name") threads[e["args"]["name"]] = e["tid"];
        if (e["ph"] == "X" && e["name"] == "MATMUL") mm = &e;
    }
    REQUIRE(threads.count("core0.te"));
    REQUIRE(threads.count("core0.dma_queue0"));
    REQUIRE(threads.count("core0.dma_queue0 #2"));
    REQUIRE(mm);
    REQUIRE((*mm)["ts"].get<double>() == Approx(1.5));
    REQUIRE((*mm)["dur"].get<double>() == Approx(0.500001));
    REQUIRE((*mm)["args"]["tile"] == 7);
    REQUIRE((*mm)["args"]["addr"] == "0x1000");
    REQUIRE((*mm)["args"]["note"] == "a\\b\"c\n");
    REQUIRE(j["otherData"]["k"] == "v");
    REQUIRE(j["otherData"]["events_kept"] == "4");
}

TEST_CASE("trace-event writer keeps at most max_events and only spans touching the window", "[timeline]") {
    tlmx::trace_limits lim;
    lim.max_events = 3;
    lim.window_begin_ps = 100;
    lim.window_end_ps = 200;
    tlmx::trace_event_writer w(lim);
    size_t t = w.track(0, "t");
    REQUIRE(!w.span(t, "early", "c", 0, 50));
    REQUIRE(w.span(t, "straddles", "c", 50, 150));
    REQUIRE(!w.span(t, "late", "c", 200, 250));
    REQUIRE(w.span(t, "in", "c", 120, 130));
    REQUIRE(w.span(t, "in", "c", 130, 140));
    REQUIRE(!w.span(t, "over budget", "c", 140, 150));
    REQUIRE(w.kept() == 3);
    REQUIRE(w.dropped() == 1);
    REQUIRE(w.outside_window() == 2);
    std::ostringstream os;
    w.write(os);
    const auto doc = nlohmann::json::parse(os.str());
    REQUIRE(doc["traceEvents"].size() == 3 + 4);  // + name and sort index of 2 lanes
    // Truncation is spelt out in the document: how many, the budget, and from when the spans are incomplete.
    REQUIRE(w.full_until_ps() == 150);
    REQUIRE(doc["otherData"]["truncated"] ==
            "yes: 1 events over the budget of 3 were dropped; spans ending after 0.000 us are missing");
}

TEST_CASE("trace-event writer says 'truncated: no' when nothing was dropped", "[timeline]") {
    tlmx::trace_event_writer w;
    REQUIRE(w.span(w.track(0, "t"), "s", "c", 0, 10));
    std::ostringstream os;
    w.write(os);
    REQUIRE(nlohmann::json::parse(os.str())["otherData"]["truncated"] == "no");
}

// Observability end to end on a small chip: the energy report of a GEMM run adds up, the Perfetto timeline is
// valid trace-event JSON covering the simulated time within its bounds, and the VCD has the expected signals.
// One platform (one kernel) per test case.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "platforms/config/platform_config.h"
#include "platforms/single_chip/chip.h"
#include "testbench/workloads/gemm/gemm_run.h"
#include "testbench/observe/chip_timeline.h"
#include "testbench/observe/chip_waves.h"

using namespace trnsim;

namespace {
platform::platform_config small_chip(std::vector<std::string> extra = {}) {
    std::vector<std::string> o = {"chip.cores=2",           "chip.core.te.rows=16",         "chip.core.te.cols=16",
                                  "chip.core.te.n_max=32",  "chip.core.sbuf.partitions=16", "chip.core.sbuf.partition_kib=4",
                                  "chip.core.sbuf.banks=4", "chip.core.psum.partitions=16", "chip.core.psum.partition_kib=1",
                                  "chip.core.psum.banks=16", "chip.core.dma.engines=4",     "chip.hbm.capacity_gib=1",
                                  "chip.hbm.stacks=1",      "chip.hbm.channels_per_stack=4"};
    o.insert(o.end(), extra.begin(), extra.end());
    return platform::load_platform("trn2", o);
}
tb::gemm_spec spec(uint64_t m, uint64_t k, uint64_t n) {
    tb::gemm_spec g;
    g.m = m;
    g.k = k;
    g.n = n;
    return g;
}
tb::gemm_options quiet() {
    tb::gemm_options o;
    o.sim.progress_after_s = 0;
    return o;
}
std::vector<nlohmann::json> spans(const nlohmann::json& doc) {
    std::vector<nlohmann::json> out;
    for (const auto& e : doc.at("traceEvents"))
        if (e.at("ph") == "X") out.push_back(e);
    return out;
}
std::map<int, std::string> thread_names(const nlohmann::json& doc) {
    std::map<int, std::string> out;
    for (const auto& e : doc.at("traceEvents"))
        if (e.at("ph") == "M" && e.at("name") == "thread_name") out[e.at("tid").get<int>()] = e.at("args").at("name");
    return out;
}
} // namespace

TEST_CASE("energy of a GEMM run adds up: parts sum to the total, MACs and static match the run", "[energy][gemm]") {
    auto cfg = small_chip({"chip.energy.mac_pj.bf16=0.25", "chip.energy.static_w_per_core=10", "chip.energy.static_w_chip=5",
                           "chip.energy.static_mw_per_pe=2"});
    auto r = tb::run_gemm(cfg, spec(64, 96, 80), quiet());
    REQUIRE(r.pass);
    const auto& e = r.energy;
    double sum = 0;
    for (const auto& p : e.parts) sum += p.joules;
    REQUIRE(sum == Approx(e.total_j).epsilon(1e-12));
    REQUIRE(e.joules("mac.bf16") == Approx(64.0 * 96 * 80 * 0.25e-12));  // every useful MAC, nothing else
    REQUIRE(e.joules("mac.fp32") == 0);
    REQUIRE(e.static_j == Approx((2 * 10 + 5 + 2 * 16 * 16 * 2e-3) * r.sim_ns * 1e-9));
    REQUIRE(e.joules("hbm") == Approx(r.hbm_bytes * 8 * cfg.chip.energy.hbm_pj_per_bit * 1e-12));
    REQUIRE(r.hbm_bytes >= double(64 * 96 + 96 * 80) * 2 + 64 * 80 * 4);  // A, B read and C written at least once
    REQUIRE(e.joules("sbuf.read") > 0);
    REQUIRE(e.joules("psum.write") > 0);
    REQUIRE(e.avg_power_w() == Approx(e.total_j / (r.sim_ns * 1e-9)));
    REQUIRE(r.tflops_per_w == Approx(r.achieved_tflops / e.avg_power_w()));
}

TEST_CASE("timeline of a GEMM run is valid trace-event JSON whose events cover the simulated time", "[timeline]") {
    auto cfg = small_chip();
    tb::timeline_options to;
    to.noc = true;
    tb::chip_timeline tl(to);
    auto opt = quiet();
    opt.on_built = [&](platform::chip& c) { tl.attach(c); };
    auto r = tb::run_gemm(cfg, spec(40, 70, 90), opt);
    REQUIRE(r.pass);
    std::ostringstream os;
    tl.write(os);
    auto doc = nlohmann::json::parse(os.str());  // throws if not valid JSON
    auto xs = spans(doc);
    auto names = thread_names(doc);
    REQUIRE(!xs.empty());
    double first = 1e30, last = 0;
    std::map<std::string, int> per_track;
    std::map<int, std::vector<std::pair<double, double>>> by_tid;
    size_t matmuls = 0;
    for (const auto& e : xs) {
        const double ts = e.at("ts"), dur = e.at("dur");
        REQUIRE(dur >= 0);
        first = std::min(first, ts);
        last = std::max(last, ts + dur);
        const int tid = e.at("tid");
        REQUIRE(names.count(tid));
        ++per_track[names[tid]];
        by_tid[tid].push_back({ts, ts + dur});
        if (e.at("name") == "MATMUL" && e.at("cat") == "te") {
            ++matmuls;
            REQUIRE(e.at("args").contains("tile"));
            REQUIRE(e.at("args").at("k").get<int>() >= 1);
        }
        if (e.at("cat") == "dma") REQUIRE(e.at("args").at("bytes").get<double>() > 0);
    }
    // The first DMA starts at 0 and the last completion is the end of the run (ts in us).
    REQUIRE(first == Approx(0).margin(1e-6));
    REQUIRE(last == Approx(r.sim_ns / 1000).margin(1e-3));
    REQUIRE(matmuls == r.tiling.matmuls);
    for (const char* t : {"core0.te", "core1.te", "core0.te.weights", "core0.dma0", "core1.dma3", "core0.dma_queue0",
                          "core0.dma_queue2", "hbm.ch0", "hbm.ch3", "noc->hbm", "noc->core0"})
        REQUIRE(per_track[t] > 0);
    // Slices of one thread never partly overlap (the lanes packing), so viewers nest them correctly.
    for (auto& [tid, v] : by_tid) {
        std::sort(v.begin(), v.end());
        for (size_t i = 1; i < v.size(); ++i) REQUIRE(v[i].first >= v[i - 1].second - 1e-9);
    }
    REQUIRE(doc.at("otherData").at("events_dropped_over_budget") == "0");
}

TEST_CASE("timeline respects its event budget and its time window", "[timeline]") {
    auto cfg = small_chip();
    tb::timeline_options small;
    small.limits.max_events = 50;
    tb::timeline_options windowed;
    windowed.limits.window_begin_ps = 1'000'000;  // 1 us .. 2 us
    windowed.limits.window_end_ps = 2'000'000;
    tb::chip_timeline a(small), b(windowed);
    auto opt = quiet();
    opt.on_built = [&](platform::chip& c) {
        a.attach(c);
        b.attach(c);
    };
    auto r = tb::run_gemm(cfg, spec(64, 64, 64), opt);
    REQUIRE(r.sim_ns > 2000);
    std::ostringstream oa, ob;
    a.write(oa);
    b.write(ob);
    auto da = nlohmann::json::parse(oa.str()), db = nlohmann::json::parse(ob.str());
    REQUIRE(spans(da).size() == 50);
    REQUIRE(a.writer().dropped() > 0);
    REQUIRE(da.at("otherData").at("events_dropped_over_budget") == std::to_string(a.writer().dropped()));
    auto wb = spans(db);
    REQUIRE(!wb.empty());
    REQUIRE(b.writer().outside_window() > 0);
    for (const auto& e : wb) {
        const double ts = e.at("ts"), end = ts + e.at("dur").get<double>();
        REQUIRE(end >= 1.0 - 1e-9);
        REQUIRE(ts < 2.0);
    }
}

TEST_CASE("VCD waveform of a GEMM run defines the engine and semaphore signals", "[vcd]") {
    auto cfg = small_chip({"sim.signals=true"});
    const std::string file = "observe_test_waves.vcd";
    std::remove(file.c_str());
    std::unique_ptr<tb::chip_waves> waves;
    auto opt = quiet();
    opt.on_built = [&](platform::chip& c) {
        waves = std::make_unique<tb::chip_waves>(file);
        waves->attach(c);
    };
    opt.on_finished = [&](platform::chip&) { waves->close(); };
    auto r = tb::run_gemm(cfg, spec(48, 48, 48), opt);
    REQUIRE(r.pass);
    std::ifstream in(file);
    REQUIRE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string v = ss.str();
    REQUIRE(v.find("$timescale") != std::string::npos);
    REQUIRE(v.find("1 ps") != std::string::npos);
    REQUIRE(v.find("$enddefinitions") != std::string::npos);
    for (const char* scope : {"$scope module chip0 $end", "$scope module core0 $end", "$scope module core1 $end",
                              "$scope module te $end", "$scope module dma3 $end"})
        REQUIRE(v.find(scope) != std::string::npos);
    // "$var wire WIDTH ID NAME [RANGE] $end", one per signal: 2 cores x (TE 2 + 4 DMA x 3 + 32 semaphores).
    std::map<std::string, int> vars;
    std::istringstream lines(v);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream w(line);
        std::string tag, kind, width, id, name;
        if (w >> tag >> kind >> width >> id >> name && tag == "$var") ++vars[name + "/" + width];
    }
    REQUIRE(vars["busy/1"] == 2 * (1 + 4));
    REQUIRE(vars["in_flight/32"] == 2);
    REQUIRE(vars["queue_depth/32"] == 2 * 4);
    REQUIRE(vars["bursts_in_flight/32"] == 2 * 4);
    REQUIRE(vars["sem0/64"] == 2);
    REQUIRE(vars["sem31/64"] == 2);
    // Value changes after time 0 (the kernel runs in slices, so the last stamp may pass the end of the run).
    size_t last_hash = v.rfind("\n#");
    REQUIRE(last_hash != std::string::npos);
    REQUIRE(std::stod(v.substr(last_hash + 2)) >= r.sim_ns * 1000 - 1);
}

TEST_CASE("waveforms need sim.signals: a chip built without them is refused by name", "[vcd]") {
    auto cfg = small_chip();
    platform::chip chip("chip0", cfg.chip);
    tb::chip_waves w("observe_test_refused.vcd");
    REQUIRE_THROWS_WITH(w.attach(chip), Catch::Contains("chip0") && Catch::Contains("sim.signals"));
}

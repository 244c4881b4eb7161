// Sweep files (plain C++): grid, list, linked and range axes, seeded random sampling, errors with key paths, and
// the CSV/JSON result tables.
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "tlm/config/config_node.h"
#include "testbench/tools/sweep/process_pool.h"
#include "testbench/tools/sweep/sweep_spec.h"
#include "testbench/tools/sweep/sweep_table.h"

using namespace trnsim;
using nlohmann::json;

namespace {
sweep::spec parse(const std::string& text) { return sweep::parse(json::parse(text), "test.json"); }
} // namespace

TEST_CASE("a 2x2 grid sweep expands to 4 points, last axis fastest, with config and workload inputs", "[sweep]") {
    auto s = parse(R"({"preset": "trn1", "set": {"sim.functional": false},
                       "workload": {"m": 64, "k": 32, "n": 16},
                       "axes": [{"key": "chip.core.te.rows", "values": [32, 64]},
                                {"key": "workload.dtype", "values": ["bf16", "fp8_e4m3"]}]})");
    auto pts = sweep::expand(s);
    REQUIRE(pts.size() == 4);
    REQUIRE(pts[0].id == "p0000");
    REQUIRE(pts[3].id == "p0003");
    REQUIRE(pts[1].overrides() == std::vector<std::string>{"chip.core.te.rows=32"});
    REQUIRE(pts[1].workload(s)["dtype"] == "fp8_e4m3");
    REQUIRE(pts[2].workload(s)["dtype"] == "bf16");
    REQUIRE(pts[2].overrides() == std::vector<std::string>{"chip.core.te.rows=64"});
    auto in = pts[3].inputs(s);
    REQUIRE(in["preset"] == "trn1");
    REQUIRE(in["sim.functional"] == false);
    REQUIRE(in["chip.core.te.rows"] == 64);
    REQUIRE(in["workload.dtype"] == "fp8_e4m3");
    REQUIRE(in["workload.m"] == 64);
    REQUIRE(in["workload.name"] == "gemm");
}

TEST_CASE("linked axis values set several keys at once and range axes give steps", "[sweep]") {
    auto s = parse(R"({"axes": [
        {"name": "hbm", "values": [{"label": "hbm3", "set": {"chip.hbm.bandwidth_gbps": 3277, "chip.hbm.stacks": 4}},
                                   {"label": "hbm2e", "set": {"chip.hbm.bandwidth_gbps": 1640, "chip.hbm.stacks": 4}}]},
        {"key": "chip.hbm.latency_ns", "range": [100, 400], "steps": 3, "integer": true}]})");
    auto pts = sweep::expand(s);
    REQUIRE(pts.size() == 6);
    REQUIRE(pts[0].overrides() == std::vector<std::string>{"chip.hbm.bandwidth_gbps=3277", "chip.hbm.stacks=4",
                                                           "chip.hbm.latency_ns=100"});
    REQUIRE(pts[4].overrides()[2] == "chip.hbm.latency_ns=250");
    REQUIRE(pts[5].inputs(s)["hbm"] == "hbm2e");
    REQUIRE(pts[5].inputs(s)["chip.hbm.latency_ns"] == 400);
}

TEST_CASE("random sweeps are seeded: same seed same points, values within their axes", "[sweep]") {
    const std::string doc = R"({"mode": "random", "samples": 40, "seed": SEED, "axes": [
        {"key": "chip.core.te.rows", "values": [32, 64, 128]},
        {"key": "chip.hbm.bandwidth_gbps", "range": [500, 8000], "log": true}]})";
    auto with = [&](int seed) {
        std::string t = doc;
        t.replace(t.find("SEED"), 4, std::to_string(seed));
        return sweep::expand(parse(t));
    };
    auto a = with(7), b = with(7), c = with(8);
    REQUIRE(a.size() == 40);
    bool differs = false;
    std::set<int> rows;
    for (size_t i = 0; i < a.size(); ++i) {
        REQUIRE(a[i].set == b[i].set);
        differs |= a[i].set != c[i].set;
        rows.insert(a[i].set[0].second.get<int>());
        const double bw = a[i].set[1].second.get<double>();
        REQUIRE(bw >= 500);
        REQUIRE(bw <= 8000);
    }
    REQUIRE(differs);
    REQUIRE(rows == std::set<int>{32, 64, 128});
}

TEST_CASE("sweep file mistakes name their key path", "[sweep]") {
    using Catch::Contains;
    REQUIRE_THROWS_WITH(parse(R"({"axes": [{"key": "a.b", "values": []}]})"), Contains("axes[0].values: expected a non-empty array"));
    REQUIRE_THROWS_WITH(parse(R"({"axes": [{"key": "a.b", "values": [1, [2]]}]})"), Contains("axes[0].values[1]: expected"));
    REQUIRE_THROWS_WITH(parse(R"({"axes": [{"name": "x", "values": [{"set": {"a": {}}}]}]})"), Contains("axes[0].values[0].set.a"));
    REQUIRE_THROWS_WITH(parse(R"({"axes": [{"key": "a", "range": [1, 2]}]})"), Contains("axes[0].steps"));
    REQUIRE_THROWS_WITH(parse(R"({"mode": "random", "axes": []})"), Contains("samples: mode \"random\" needs samples"));
    REQUIRE_THROWS_WITH(parse(R"({"axez": []})"), Contains("axez: unknown key"));
    REQUIRE_THROWS_WITH(parse(R"({"axes": [{"key": "a", "values": [1]}, {"key": "a", "values": [2]}]})"),
                        Contains("axis 'a' appears twice"));
    // Types of axis members name their key path; sizes are bounded (they used to overflow or run out of memory).
    REQUIRE_THROWS_WITH(parse(R"({"axes": [{"key": "a", "range": [1, 2], "steps": 2, "log": "yes"}]})"),
                        Contains("axes[0].log: expected true or false, got \"yes\""));
    REQUIRE_THROWS_WITH(parse(R"({"axes": [{"key": 5, "values": [1]}]})"), Contains("axes[0].key: expected a string"));
    REQUIRE_THROWS_WITH(parse(R"({"axes": [{"name": "x", "values": [{"label": 5, "set": {"a": 1}}]}]})"),
                        Contains("axes[0].values[0].label: expected a string"));
    REQUIRE_THROWS_WITH(parse(R"({"axes": [{"key": "a", "range": [0, 1e300], "steps": 3, "integer": true}]})"),
                        Contains("axes[0].range: an integer range must lie within +-2^53"));
    REQUIRE_THROWS_WITH(parse(R"({"axes": [{"key": "a", "range": [0, 1], "steps": 1000000000000}]})"),
                        Contains("axes[0].steps: at most 1000000"));
    REQUIRE_THROWS_WITH(parse(R"({"axes": [{"key": "a", "range": [0, 1], "steps": 1000},
                                           {"key": "b", "range": [0, 1], "steps": 1001}]})"),
                        Contains("axes[1]: the grid has more than 1000000 points"));
    REQUIRE_THROWS_WITH(parse(R"({"mode": "random", "samples": 1000000000000, "axes": []})"),
                        Contains("samples: at most 1000000 points"));
    REQUIRE_THROWS_WITH(parse("{\"name\": \"a\\necho x\", \"axes\": []}"), Contains("name: 'a\necho x' may hold only"));
}

TEST_CASE("sweep tables: columns are the union of inputs and outputs, CSV quotes what needs it", "[sweep]") {
    std::vector<json> rows = {
        {{"id", "p0000"}, {"status", "ok"}, {"error", ""}, {"inputs", {{"x", 1}}}, {"outputs", {{"t", 2.5}}}},
        {{"id", "p0001"}, {"status", "failed"}, {"error", "bad \"x\", really"}, {"inputs", {{"x", 2}, {"y", "a"}}},
         {"outputs", json::object()}}};
    REQUIRE(sweep::columns(rows) == std::vector<std::string>{"id", "status", "error", "x", "y", "t"});
    REQUIRE(sweep::to_csv(rows) == "id,status,error,x,y,t\np0000,ok,,1,,2.5\np0001,failed,\"bad \"\"x\"\", really\",2,a,\n");
    auto j = sweep::to_json(rows);
    REQUIRE(j.size() == 2);
    REQUIRE(j[1]["t"].is_null());
    REQUIRE(j[0]["t"] == 2.5);
}

TEST_CASE("process pool runs tasks in parallel, reports exit codes and signals", "[sweep]") {
    std::vector<sweep::task> tasks = {{{"/bin/sh", "-c", "exit 0"}, "/dev/null"},
                                      {{"/bin/sh", "-c", "exit 3"}, "/dev/null"},
                                      {{"/bin/sh", "-c", "kill -9 $$"}, "/dev/null"},
                                      {{"/nonexistent/x"}, "/dev/null"}};
    sweep::pool_options o;
    o.jobs = 2;
    o.progress = nullptr;
    std::vector<sweep::task_end> ends(tasks.size());
    size_t n = sweep::run_tasks(tasks, o, [&](size_t i, const sweep::task_end& e) {
        ends[i] = e;
        return !e.ok();
    });
    REQUIRE(n == 4);
    REQUIRE(ends[0].ok());
    REQUIRE(ends[1].exit_code == 3);
    REQUIRE(ends[2].signal == 9);
    REQUIRE(ends[2].describe().find("signal 9") != std::string::npos);
    REQUIRE(ends[3].exit_code == 127);
    REQUIRE(sweep::clock_text(3725) == "1:02:05");
    REQUIRE(sweep::clock_text(65) == "1:05");
}

TEST_CASE("process pool runs functions in forked children: results, exit codes, exceptions, signals", "[sweep]") {
    char dir[] = "/tmp/trnsim-pool-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string out = std::string(dir) + "/out";
    int in_parent = 0;
    std::vector<sweep::task> tasks(4);
    tasks[0].body = [&] {
        in_parent = 1;  // the child's copy: the parent's stays 0
        std::ofstream(out) << "written by the child";
        return 0;
    };
    tasks[1].body = [] { return 5; };
    tasks[2].body = []() -> int { throw std::runtime_error("job failed"); };
    tasks[2].log_file = std::string(dir) + "/log2";
    tasks[3].body = [] {
        raise(SIGKILL);
        return 0;
    };
    sweep::pool_options o;
    o.jobs = 2;
    o.progress = nullptr;
    std::vector<sweep::task_end> ends(tasks.size());
    REQUIRE(sweep::run_tasks(tasks, o, [&](size_t i, const sweep::task_end& e) {
                ends[i] = e;
                return !e.ok();
            }) == 4);
    REQUIRE(in_parent == 0);
    REQUIRE(ends[0].ok());
    std::ifstream f(out);
    std::string text;
    std::getline(f, text);
    REQUIRE(text == "written by the child");
    REQUIRE(ends[1].exit_code == 5);
    REQUIRE(ends[2].exit_code == 1);
    std::ifstream l(tasks[2].log_file);
    std::getline(l, text);
    REQUIRE(text == "job failed");
    REQUIRE(ends[3].signal == SIGKILL);
    std::filesystem::remove_all(dir);
}

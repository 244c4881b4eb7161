#include "apps/hbm.h"

#include <algorithm>
#include <functional>
#include <iostream>

#include <nlohmann/json.hpp>

#include "tlm/config/config_node.h"
#include "apps/report.h"
#include "testbench/tools/hbm_trace.h"

namespace trnsim::app {

const char* HBM_USAGE = R"(trnsim hbm [--memspec hbm2e|hbm3|hbm3e|FILE.json] [--stacks N]
           (--trace FILE | --pattern sequential|random|strided [--requests N] [--size BYTES] [--stride BYTES]
            [--mix R:W] [--seed S])
           [--scheduler fr_fcfs|fcfs] [--page-policy open|closed|closed_adaptive] [--refresh per_bank|all_bank|none]
           [--mapping FIELDS] [--queue-depth N] [--write-queue-depth N] [--outstanding N|max] [--config-dir DIR]
           [--stats] [--max-host-gib G]
  Drives the HBM DRAM timing model directly (no SystemC) and prints bandwidth, efficiency, read latency,
  row-buffer hit rate and simulation speed; --stats adds every statistic.
  trace lines: `time_ns R|W address size` (time 0 = as fast as possible, # comments; numbers decimal or 0x hex;
  a trace spans at most 1e9 ns / stacks); --max-host-gib bounds the memory of the requests in flight
  --outstanding: requests in flight, at least 1 (default max: pseudo-channels x queue depth); latency is from
  presentation
  defaults: --memspec hbm3 --stacks 1 --pattern random --requests 100000 --size 64 --stride 8192 --mix 1:0 --seed 1
)";

const option_set HBM_OPTIONS = {{"memspec", "stacks", "trace", "pattern", "requests", "size", "stride", "mix", "seed",
                                 "scheduler", "page-policy", "refresh", "mapping", "queue-depth", "write-queue-depth",
                                 "outstanding", "config-dir", "max-host-gib"},
                                {"stats"},
                                {}};

namespace {

// The model's configuration, built through the same JSON path as a platform config, so every check applies.
hbm::hbm_dram_config hbm_config(const args& a) {
    const std::string dir = a.config_dir();
    const std::string ms = a.str("memspec", "hbm3");
    bool is_file = ms.find('/') != std::string::npos || (ms.size() > 5 && ms.substr(ms.size() - 5) == ".json");
    std::string msfile = is_file ? ms : dir + "/memspecs/" + ms + ".json";
    nlohmann::json j = nlohmann::json::object();
    j["memspec"] = config::load_json_file(msfile);
    j["stacks"] = a.u64("stacks", 1);
    for (auto [opt, key] : {std::pair<const char*, const char*>{"scheduler", "scheduler"},
                            {"page-policy", "page_policy"},
                            {"refresh", "refresh"},
                            {"mapping", "mapping"}})
        if (a.has(opt)) j[key] = a.str(opt, "");
    if (a.has("queue-depth")) j["read_queue_depth"] = a.u64("queue-depth", 32);
    if (a.has("write-queue-depth")) j["write_queue_depth"] = a.u64("write-queue-depth", 32);
    return hbm::parse_hbm_dram_config(config::node::root(j, "trnsim hbm options (memspec " + msfile + ")"));
}

std::vector<tb::hbm_request> pattern_requests(const args& a, uint64_t capacity) {
    tb::hbm_pattern p;
    std::string k = a.str("pattern", "random");
    if (k == "sequential") p.kind = tb::hbm_pattern_kind::sequential;
    else if (k == "random") p.kind = tb::hbm_pattern_kind::random;
    else if (k == "strided") p.kind = tb::hbm_pattern_kind::strided;
    else throw usage_error("--pattern: '" + k + "' is not one of sequential, random, strided");
    if (p.kind != tb::hbm_pattern_kind::strided) a.refuse({"stride"}, "applies to --pattern strided only");
    p.requests = a.u64("requests", p.requests);
    if (p.requests == 0 || p.requests > 100000000)
        throw usage_error("--requests: " + std::to_string(p.requests) +
                          " is outside 1 .. 100000000 (they are generated in memory)");
    p.size = a.u64("size", p.size);
    p.stride = a.u64("stride", p.stride);
    p.seed = a.u64("seed", p.seed);
    const std::string mix = a.str("mix", "1:0");
    const auto colon = mix.find(':');
    auto part = [&](const std::string& s, uint64_t& v) {
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 7) return false;
        v = std::stoull(s);
        return v <= 1000000;
    };
    uint64_t r = 0, w = 0;
    if (colon == std::string::npos || !part(mix.substr(0, colon), r) || !part(mix.substr(colon + 1), w) || r + w == 0)
        throw usage_error("--mix: expected R:W with whole numbers, e.g. 2:1, got '" + mix + "'");
    p.mix_reads = uint32_t(r);
    p.mix_writes = uint32_t(w);
    if (p.size == 0 || p.size > capacity) throw usage_error("--size must be in [1, capacity]");
    return tb::make_hbm_pattern(p, capacity);
}

} // namespace

int cmd_hbm(const args& a) {
    a.no_positional();
    if (a.has("trace")) {
        a.refuse({"pattern"}, "cannot go with --trace: give --trace or --pattern, not both");
        a.refuse({"requests", "size", "stride", "mix", "seed"}, "applies to --pattern, not --trace");
    }
    // 0 used to mean "as many as the queues hold" silently: that is spelled `max`.
    uint64_t outstanding = 0;
    if (a.has("outstanding") && a.str("outstanding", "") != "max") {
        outstanding = a.u64("outstanding", 0);
        if (outstanding == 0)
            throw usage_error("--outstanding: at least 1 request in flight (or 'max', the default: pseudo-channels x "
                              "queue depth)");
    }
    const auto cfg = hbm_config(a);
    const uint64_t capacity = cfg.spec.stack_bytes() * cfg.stacks;
    const auto reqs = a.has("trace") ? tb::read_hbm_trace_file(a.str("trace", ""), capacity, cfg.stacks) : pattern_requests(a, capacity);
    {
        // The model holds the bursts of every request in flight: measured 0.68 host bytes per requested byte for one
        // 256 MiB request (docs/RELIABILITY.md), estimated as 0.75 x the bytes of the largest requests that can be in
        // flight at once, plus the request list.
        const uint64_t window = outstanding ? outstanding : uint64_t(cfg.spec.pcs_per_stack()) * cfg.stacks * cfg.ctrl.read_queue_depth;
        std::vector<uint64_t> sizes;
        sizes.reserve(reqs.size());
        for (const auto& r : reqs) sizes.push_back(r.size);
        const size_t w = size_t(std::min<uint64_t>(window, sizes.size()));
        std::partial_sort(sizes.begin(), sizes.begin() + w, sizes.end(), std::greater<uint64_t>());
        double in_flight = 0;
        for (size_t i = 0; i < w; ++i) in_flight += double(sizes[i]);
        check_host_memory(a, "this HBM run (" + count_text(reqs.size(), "request") + ", the largest " +
                                 std::to_string(w ? sizes[0] : 0) + " bytes)",
                          0.75 * in_flight + 64.0 * double(reqs.size()) + 64.0 * 1048576,
                          "smaller requests (--size or the trace's sizes) or fewer in flight (--outstanding)");
    }
    const auto res = tb::run_hbm_requests(cfg, reqs, outstanding);
    std::cout << tb::format_hbm_result(cfg, res);
    if (a.has("stats"))
        for (const auto& [k, v] : res.stats) std::cout << "  " << k << " = " << v << "\n";
    return 0;
}

} // namespace trnsim::app

#include "testbench/tools/hbm_trace.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "models/hbm/dram/dram_system.h"
#include "tlm/config/config_node.h"
#include "tlm/config/preset.h"
#include "tlm/time_text.h"

namespace trnsim::tb {

namespace {

// Decimal or 0x hex (a leading zero is decimal, never octal).
bool parse_u64(const std::string& s, uint64_t& v) { return config::parse_whole(s, v, /*hex=*/true); }

} // namespace

double max_trace_ns(uint32_t stacks) { return 1e9 / double(std::max<uint32_t>(stacks, 1)); }

std::vector<hbm_request> read_hbm_trace(std::istream& in, const std::string& name, uint64_t capacity, uint32_t stacks) {
    const double max_ns = max_trace_ns(stacks);
    std::vector<hbm_request> out;
    std::string line;
    uint64_t lineno = 0;
    auto fail = [&](const std::string& msg) {
        throw std::runtime_error(name + ":" + std::to_string(lineno) + ": " + msg);
    };
    while (std::getline(in, line)) {
        ++lineno;
        auto hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        std::istringstream ls(line);
        std::vector<std::string> f;
        for (std::string w; ls >> w;) f.push_back(w);
        if (f.empty()) continue;
        if (f.size() != 4) fail("expected `time_ns R|W address size`, got " + std::to_string(f.size()) + " fields");
        hbm_request r;
        try {
            size_t pos = 0;
            r.time_ns = std::stod(f[0], &pos);
            if (pos != f[0].size() || !(r.time_ns >= 0) || !std::isfinite(r.time_ns)) throw std::invalid_argument("");
        } catch (const std::exception&) {
            fail("bad time '" + f[0] + "' (expected a non-negative number of ns)");
        }
        // The model steps through every refresh of an idle gap, on every stack (1 s of one stack takes about 25 s of
        // wall time), and far larger times overflowed its clock cycles (1e20 wrapped to 0.04 us).
        if (r.time_ns > max_ns) {
            char lim[64];
            std::snprintf(lim, sizeof lim, "%g", max_ns);  // 1e+09 shown as 1e9
            std::string l = lim;
            if (const auto e = l.find("e+"); e != std::string::npos) l.erase(e + 1, l[e + 2] == '0' ? 2 : 1);
            fail("time '" + f[0] + "' is beyond " + l + " ns (1e9 ns / " + std::to_string(stacks) + " stack" +
                 (stacks == 1 ? "" : "s") + ": the most a trace may span, as the model steps through every refresh)");
        }
        if (f[1] == "R" || f[1] == "r") r.write = false;
        else if (f[1] == "W" || f[1] == "w") r.write = true;
        else fail("bad command '" + f[1] + "' (expected R or W)");
        if (!parse_u64(f[2], r.addr)) fail("bad address '" + f[2] + "'");
        if (!parse_u64(f[3], r.size) || r.size == 0) fail("bad size '" + f[3] + "' (expected a positive byte count)");
        if (r.addr >= capacity || r.size > capacity - r.addr)
            fail("request [" + f[2] + ", +" + f[3] + ") is beyond the HBM capacity (" + std::to_string(capacity) + " bytes)");
        out.push_back(r);
    }
    return out;
}

std::vector<hbm_request> read_hbm_trace_file(const std::string& file, uint64_t capacity, uint32_t stacks) {
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) throw std::runtime_error(file + ": is a directory, not a trace file");
    if (std::filesystem::exists(file, ec) && !std::filesystem::is_regular_file(file, ec))
        throw std::runtime_error(file + ": not a regular file (a trace is a text file of `time_ns R|W address size` lines)");
    std::ifstream in(file);
    if (!in) throw std::runtime_error(file + ": cannot open trace file");
    return read_hbm_trace(in, file, capacity, stacks);
}

std::vector<hbm_request> make_hbm_pattern(const hbm_pattern& p, uint64_t capacity) {
    if (p.size == 0 || p.size > capacity) throw std::invalid_argument("pattern request size must be in [1, capacity]");
    if (p.mix_reads + p.mix_writes == 0) throw std::invalid_argument("read:write mix must not be 0:0");
    std::vector<hbm_request> out(p.requests);
    std::mt19937_64 rng(p.seed);
    const uint64_t slots = capacity / p.size;
    const uint32_t total = p.mix_reads + p.mix_writes;
    for (uint64_t i = 0; i < p.requests; ++i) {
        hbm_request& r = out[i];
        r.size = p.size;
        switch (p.kind) {
        case hbm_pattern_kind::sequential: r.addr = (p.base + i * p.size) % (slots * p.size); break;
        case hbm_pattern_kind::strided: r.addr = (p.base + i * p.stride) % (slots * p.size); break;
        case hbm_pattern_kind::random: r.addr = (rng() % slots) * p.size; break;
        }
        r.write = p.mix_writes == 0 ? false : p.mix_reads == 0 ? true : (rng() % total) >= p.mix_reads;
    }
    return out;
}

hbm_run_result run_hbm_requests(const hbm::hbm_dram_config& cfg, const std::vector<hbm_request>& reqs,
                                uint64_t outstanding) {
    hbm::dram_system sys(cfg);
    if (outstanding == 0) outstanding = uint64_t(sys.num_pcs()) * cfg.ctrl.read_queue_depth;
    const double tck = sys.tck_ns();
    auto cpu_now = [] {
        timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
    };
    double c0 = cpu_now();
    auto t0 = std::chrono::steady_clock::now();
    hbm::cycle_t at_prev = 0;
    uint64_t in_flight = 0;
    for (size_t i = 0; i < reqs.size(); ++i) {
        const hbm_request& r = reqs[i];
        hbm::cycle_t at = std::max(at_prev, hbm::cycle_t(std::ceil(r.time_ns / tck - 1e-9)));
        // Closed loop: wait for a completion while the window is full.
        while (in_flight >= outstanding) {
            hbm::cycle_t c = sys.next_completion();
            if (c == hbm::NEVER) throw std::logic_error("hbm: requests in flight but the model makes no progress");
            at = std::max(at, c);
            sys.retire_completion();
            --in_flight;
        }
        sys.submit(i, r.write, r.addr, r.size, at);
        ++in_flight;
        at_prev = at;
    }
    sys.finish();
    auto t1 = std::chrono::steady_clock::now();
    double c1 = cpu_now();

    hbm_run_result res;
    res.stats = sys.stats().flatten();
    const std::string g = sys.stats().name() + ".";
    auto v = [&](const std::string& k) { return res.stats.at(g + k); };
    res.reads = uint64_t(v("reads"));
    res.writes = uint64_t(v("writes"));
    res.sim_ns = v("elapsed");
    res.bandwidth_gbps = v("bandwidth");
    res.peak_gbps = v("peak_bandwidth");
    res.efficiency_pct = v("efficiency");
    res.read_avg_ns = v("read_latency.mean");
    res.read_p50_ns = v("read_latency.p50");
    res.read_p99_ns = v("read_latency.p99");
    res.write_avg_ns = v("write_latency.mean");
    res.write_p99_ns = v("write_latency.p99");
    res.row_hit_rate_pct = v("row_hit_rate");
    res.refreshes = uint64_t(v("refreshes"));
    res.wall_s = std::chrono::duration<double>(t1 - t0).count();
    res.requests_per_s = res.wall_s > 0 ? double(reqs.size()) / res.wall_s : 0;
    res.cpu_s = c1 - c0;
    res.requests_per_s_cpu = res.cpu_s > 0 ? double(reqs.size()) / res.cpu_s : 0;
    return res;
}

std::string default_hbm_config_dir() {
#ifdef TRNSIM_CONFIG_DIR
    return TRNSIM_CONFIG_DIR;
#else
    return "configs";
#endif
}

hbm::memspec load_memspec(const std::string& name_or_file, const std::string& config_dir) {
    std::string file = config::resolve_preset(name_or_file, config_dir + "/memspecs", "memspec");
    auto j = config::load_json_file(file);
    return hbm::parse_memspec(config::node::root(j, file));
}

std::string format_hbm_result(const hbm::hbm_dram_config& cfg, const hbm_run_result& r) {
    const auto& m = cfg.spec;
    // Latencies of a direction with no request are "none", not an average of nothing.
    char rd[128] = "none (no reads)", wr[128] = "none (no writes)";
    if (r.reads) std::snprintf(rd, sizeof rd, "avg %.1f ns, p50 %.0f ns, p99 %.0f ns", r.read_avg_ns, r.read_p50_ns, r.read_p99_ns);
    if (r.writes) std::snprintf(wr, sizeof wr, "avg %.1f ns, p99 %.0f ns", r.write_avg_ns, r.write_p99_ns);
    char buf[2048];
    std::snprintf(buf, sizeof buf,
                  "hbm           %s, %u stack%s x %u pseudo-channels, %s, %s page, %s refresh, mapping %s\n"
                  "requests      %llu (%llu R, %llu W)\n"
                  "simulated     %s\n"
                  "bandwidth     %.1f GB/s of %.1f GB/s peak (efficiency %.1f %%)\n"
                  "read latency  %s\n"
                  "write latency %s\n"
                  "row hit rate  %.1f %%\n"
                  "refreshes     %llu\n"
                  "speed         %.2f M requests/s (%.3f s wall), %.2f M requests/s of CPU time (%.3f s)\n",
                  m.name.c_str(), cfg.stacks, cfg.stacks == 1 ? "" : "s", m.pcs_per_stack(), hbm::name(cfg.ctrl.scheduler),
                  hbm::name(cfg.ctrl.page_policy), hbm::name(cfg.ctrl.refresh),
                  (cfg.mapping.empty() ? hbm::default_mapping(m) : cfg.mapping).c_str(),
                  (unsigned long long)(r.reads + r.writes), (unsigned long long)r.reads, (unsigned long long)r.writes,
                  tlmx::time_text(r.sim_ns).c_str(), r.bandwidth_gbps, r.peak_gbps, r.efficiency_pct, rd, wr,
                  r.row_hit_rate_pct, (unsigned long long)r.refreshes, r.requests_per_s / 1e6, r.wall_s,
                  r.requests_per_s_cpu / 1e6, r.cpu_s);
    return buf;
}

} // namespace trnsim::tb

// Prints the HBM model figures of docs/hbm.md: efficiency and read latency for the standard access patterns, the
// closed-page random-read analytic bound, and simulation speed. Each row names the equivalent `trnsim hbm` command.
//   hbm_bench [--memspec hbm3] [--requests 1000000] [--queue-depth 32] [--config-dir DIR]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "testbench/tools/hbm_trace.h"

using namespace trnsim;

namespace {

struct row {
    const char* name;
    tb::hbm_pattern_kind kind;
    uint32_t reads, writes;
    const char* args;
};

double closed_random_bound(const hbm::memspec& m) {
    double per_act = std::max({double(m.burst_cycles()), double(m.tRRD_S), m.tFAW / 4.0, double(m.tRC) / m.banks_per_pc()});
    return 100.0 * m.burst_cycles() / per_act;
}

} // namespace

int main(int argc, char** argv) {
    std::string memspec = "hbm3", dir = tb::default_hbm_config_dir();
    uint64_t n = 1000000, depth = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--memspec")) memspec = argv[i + 1];
        else if (!std::strcmp(argv[i], "--requests")) n = std::stoull(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--config-dir")) dir = argv[i + 1];
        else if (!std::strcmp(argv[i], "--queue-depth")) depth = std::stoull(argv[i + 1]);
        else {
            std::fprintf(stderr, "usage: hbm_bench [--memspec NAME] [--requests N] [--queue-depth N] [--config-dir DIR]\n");
            return 2;
        }
    }
    hbm::hbm_dram_config cfg;
    cfg.spec = tb::load_memspec(memspec, dir);
    cfg.ctrl.refresh = cfg.spec.has_per_bank_refresh() ? hbm::refresh_kind::per_bank : hbm::refresh_kind::all_bank;
    if (depth) cfg.ctrl.read_queue_depth = cfg.ctrl.write_queue_depth = uint32_t(depth);
    hbm::validate_hbm_dram_config(cfg, "hbm_bench");
    const std::string qopt = depth ? " --queue-depth " + std::to_string(depth) + " --write-queue-depth " + std::to_string(depth) : "";
    const uint64_t cap = cfg.spec.stack_bytes();

    std::printf("%s, 1 stack, %u pseudo-channels, peak %.1f GB/s, %s, %s page, %s refresh, queues %u/%u, mapping %s\n",
                cfg.spec.name.c_str(), cfg.spec.pcs_per_stack(), cfg.spec.stack_peak_gbps(), hbm::name(cfg.ctrl.scheduler),
                hbm::name(cfg.ctrl.page_policy), hbm::name(cfg.ctrl.refresh), cfg.ctrl.read_queue_depth,
                cfg.ctrl.write_queue_depth, hbm::default_mapping(cfg.spec).c_str());
    std::printf("%llu requests of 64 B per pattern, at most %u in flight\n\n", (unsigned long long)n,
                cfg.spec.pcs_per_stack() * cfg.ctrl.read_queue_depth);
    std::printf("| pattern | efficiency | bandwidth GB/s | read avg ns | read p50 ns | read p99 ns | row hits | Mreq/s (CPU) | command |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    const row rows[] = {
        {"sequential reads", tb::hbm_pattern_kind::sequential, 1, 0, "--pattern sequential"},
        {"random reads", tb::hbm_pattern_kind::random, 1, 0, "--pattern random"},
        {"strided 8 KiB reads", tb::hbm_pattern_kind::strided, 1, 0, "--pattern strided --stride 8192"},
        {"sequential writes", tb::hbm_pattern_kind::sequential, 0, 1, "--pattern sequential --mix 0:1"},
        {"random 2:1 read/write", tb::hbm_pattern_kind::random, 2, 1, "--pattern random --mix 2:1"},
    };
    for (const auto& r : rows) {
        tb::hbm_pattern p;
        p.kind = r.kind;
        p.requests = n;
        p.size = 64;
        p.stride = 8192;
        p.mix_reads = r.reads;
        p.mix_writes = r.writes;
        p.seed = 1;
        auto reqs = tb::make_hbm_pattern(p, cap);
        auto res = tb::run_hbm_requests(cfg, reqs);
        bool reads = res.reads > 0;
        std::printf("| %s | %.1f %% | %.1f | %s | %s | %s | %.1f %% | %.2f | `trnsim hbm --memspec %s %s%s --requests %llu` |\n",
                    r.name, res.efficiency_pct, res.bandwidth_gbps,
                    reads ? std::to_string(int(res.read_avg_ns + 0.5)).c_str() : "-",
                    reads ? std::to_string(int(res.read_p50_ns)).c_str() : "-",
                    reads ? std::to_string(int(res.read_p99_ns)).c_str() : "-", res.row_hit_rate_pct,
                    res.requests_per_s_cpu / 1e6, memspec.c_str(), r.args, qopt.c_str(), (unsigned long long)n);
        std::fflush(stdout);
    }

    // Closed page, no refresh, 32-byte random reads: compare with the activate-rate bound.
    auto c2 = cfg;
    c2.ctrl.page_policy = hbm::page_policy_kind::closed;
    c2.ctrl.refresh = hbm::refresh_kind::none;
    tb::hbm_pattern p;
    p.kind = tb::hbm_pattern_kind::random;
    p.requests = n;
    p.size = 32;
    auto res = tb::run_hbm_requests(c2, tb::make_hbm_pattern(p, cap));
    std::printf("\nclosed page, no refresh, random 32 B reads: efficiency %.2f %% (analytic bound %.2f %%), "
                "read avg %.0f ns p99 %.0f ns, %.2f Mreq/s (CPU)\n"
                "  `trnsim hbm --memspec %s --pattern random --size 32 --page-policy closed --refresh none --requests %llu`\n",
                res.efficiency_pct, closed_random_bound(cfg.spec), res.read_avg_ns, res.read_p99_ns,
                res.requests_per_s_cpu / 1e6, memspec.c_str(), (unsigned long long)n);
    return 0;
}

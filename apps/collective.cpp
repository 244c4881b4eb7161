#include "apps/collective.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/args.h"
#include "apps/observers.h"
#include "apps/report.h"
#include "platforms/config/platform_config.h"
#include "testbench/workloads/collective/collective_run.h"

namespace trnsim::app {

const char* COLLECTIVE_USAGE = R"(trnsim collective [--platform NAME | --config FILE] [--set key.path=value ...] [--config-dir DIR]
                  --op allreduce|reduce_scatter|allgather|alltoall|broadcast --bytes SIZE
                  [--algo ring|bidir_ring|torus|hierarchical|direct] [--dtype fp32|bf16|fp16|...] [--chunks N]
                  [--root CHIP (broadcast)] [--timing-only | [--check] [--seed S] [--max-data-gib G]]
                  [--stats FILE.json] [--max-host-gib G] [--quiet]
                  [--timeline FILE.json [--timeline-max-events N] [--timeline-window B:E]] (full chips)
                  [--link-down A-B ...] [--link-degraded A-B:FACTOR[:EXTRA_NS] ...] [--chip-start CHIP:NS ...] (full chips)
  runs one collective on a server / cluster platform (trnsim list: ring-8, torus-4x4, trn2-ultraserver-64,
  cluster-...); SIZE in bytes, or with a suffix K/KiB, M/MiB, G/GiB (powers of 1024). Prints the simulated time,
  algbw = bytes / time and busbw = algbw * bus factor (nccl-tests), and link / network port utilisation.
  defaults: --platform trn2-ultraserver-64 --algo ring --dtype fp32 --chunks 1 (at most one per element)
  --timing-only stores no data (same timing; transfers keep their sizes); --check compares every element of every
  chip's output with the reference execution. Real data needs about 3 x SIZE per chip (4 x with --check); above
  --max-data-gib (default 4) of it a run is timing only (said in the report) and --check is refused;
  --max-host-gib (default: what the host has available) bounds the schedule's memory (its steps, --chunks times one
  chunk's), checked before it is built
  --link-down A-B: the link direction chip A -> chip B carries nothing (routing and the ring algorithms avoid it);
  --link-degraded A-B:F[:NS]: its bandwidth times F (0 < F < 1), its latency plus NS (>= 0); both add to the
  config's server.faults.links (docs/RELIABILITY.md "Link faults")
  --chip-start CHIP:NS: chip CHIP's part starts NS ns late (chips arriving out of step from the compute before it;
  the simulated time counts from 0)
)";

uint64_t parse_size(const std::string& option, const std::string& s) {
    size_t i = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    std::string num = s.substr(0, i), suf = s.substr(i);
    if (num.empty() || num.size() > 18)
        throw usage_error(option + ": '" + s + "' is not a size (e.g. 4096, 64MiB, 1GiB)");
    uint64_t v = std::stoull(num), m = 1;
    if (suf.empty() || suf == "B") m = 1;
    else if (suf == "K" || suf == "KiB" || suf == "k") m = 1ull << 10;
    else if (suf == "M" || suf == "MiB") m = 1ull << 20;
    else if (suf == "G" || suf == "GiB") m = 1ull << 30;
    else throw usage_error(option + ": unknown suffix '" + suf + "' in '" + s + "' (K, KiB, M, MiB, G, GiB)");
    if (v > (~0ull) / m) throw usage_error(option + ": '" + s + "' is too large");
    return v * m;
}

namespace {

std::string topo_text(const collective::topology& t) {
    auto dims = [&] {
        std::string s = std::to_string(t.dims[0]);
        if (t.dims[1] > 1 || t.dims[2] > 1) s += "x" + std::to_string(t.dims[1]);
        if (t.dims[2] > 1) s += "x" + std::to_string(t.dims[2]);
        return s;
    };
    switch (t.k) {
    case collective::topology::kind::ring: return "ring of " + std::to_string(t.dims[0]);
    case collective::topology::kind::torus: return dims() + " torus";
    case collective::topology::kind::cluster:
        return std::to_string(t.servers) + " servers x " + std::to_string(t.chips_per_server) + " chips (" + dims() +
               (t.dims[1] > 1 ? " torus" : " ring") + "), switched network";
    }
    return "";
}

// A finite number written whole (nothing after it), or nothing.
std::optional<double> finite_number(const std::string& t) {
    size_t used = 0;
    double x = 0;
    try {
        x = std::stod(t, &used);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (t.empty() || used != t.size() || !std::isfinite(x)) return std::nullopt;
    return x;
}

// A chip id (at most 9 decimal digits), or nothing.
std::optional<uint32_t> chip_id(const std::string& t) {
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || t.size() > 9) return std::nullopt;
    return uint32_t(std::stoul(t));
}

// "A-B" or "A-B:F[:NS]" of --link-down / --link-degraded.
platform::link_fault parse_fault(const std::string& opt, const std::string& v, bool down) {
    std::string form = down ? "A-B (e.g. 3-4)" : "A-B:FACTOR[:EXTRA_NS] (e.g. 3-4:0.5)";
    auto bad = [&](const std::string& why) {
        return usage_error("--" + opt + ": '" + v + "' " + why + ", expected " + form);
    };
    platform::link_fault f;
    f.down = down;
    size_t dash = v.find('-'), colon = v.find(':');
    if (dash == std::string::npos || dash == 0) throw bad("has no chip pair");
    auto number = [&](const std::string& t, const char* what) {
        const auto x = finite_number(t);
        if (!x) throw bad(std::string("has a bad ") + what);
        return *x;
    };
    auto chip = [&](const std::string& t) {
        const auto c = chip_id(t);
        if (!c) throw bad("has a bad chip id '" + t + "'");
        return *c;
    };
    f.from = chip(v.substr(0, dash));
    f.to = chip(v.substr(dash + 1, colon == std::string::npos ? std::string::npos : colon - dash - 1));
    if (down) {
        if (colon != std::string::npos) throw bad("has a factor (a down link has none)");
        return f;
    }
    if (colon == std::string::npos) throw bad("has no bandwidth factor");
    std::string rest = v.substr(colon + 1);
    size_t c2 = rest.find(':');
    f.bandwidth_factor = number(rest.substr(0, c2), "bandwidth factor");
    if (c2 != std::string::npos) f.extra_latency_ns = number(rest.substr(c2 + 1), "extra latency");
    // The values are judged by add_link_fault (platforms/server/multichip_config.h), as the config's are.
    return f;
}

// --chip-start CHIP:NS (repeatable): per chip, the time its part of the collective starts.
std::vector<double> parse_chip_starts(const args& a, uint32_t chips) {
    std::vector<double> at;
    for (const std::string& v : a.list("chip-start")) {
        auto bad = [&](const std::string& why) {
            std::string msg = "--chip-start: '" + v + "' ";
            msg += why;
            msg += ", expected CHIP:NS (e.g. 3:4000)";
            return usage_error(msg);
        };
        const size_t colon = v.find(':');
        if (colon == std::string::npos) throw bad("has no ':'");
        const std::string c = v.substr(0, colon);
        const auto chip = chip_id(c);
        if (!chip) throw bad("has a bad chip id '" + c + "'");
        if (*chip >= chips) throw bad("names chip " + c + ", the platform has " + std::to_string(chips));
        const auto ns = finite_number(v.substr(colon + 1));
        if (!ns || *ns < 0) throw bad("has a bad time (ns >= 0)");
        if (at.size() <= *chip) at.resize(*chip + 1, 0.0);
        at[*chip] = *ns;
    }
    return at;
}

}  // namespace

platform::platform_config load_multichip(const args& a, const std::vector<std::string>& sets, const std::string& who) {
    if (a.has("platform") && a.has("config")) throw usage_error("give --platform or --config, not both");
    platform::platform_config cfg;
    std::string what = a.has("config") ? a.str("config", "") : a.str("platform", "trn2-ultraserver-64");
    if (a.has("config") && what.find('/') == std::string::npos) what = "./" + what;
    try {
        cfg = platform::load_platform(what, sets, a.config_dir());
    } catch (const std::exception& e) {
        throw usage_error(std::string("--") + (a.has("config") ? "config" : "platform") + ": " + e.what());
    }
    cfg.preset = what;
    if (cfg.multichip.kind == platform::platform_kind::single_chip)
        throw usage_error(std::string("--") + (a.has("config") ? "config" : "platform") + ": '" + what +
                          "' is a single chip; " + who + " a server or cluster (" +
                          "e.g. ring-8, torus-4x4, trn2-ultraserver-64, cluster-4x16)");
    return cfg;
}

const option_set COLLECTIVE_OPTIONS = {{"platform", "config", "set", "config-dir", "op", "bytes", "algo", "dtype", "chunks",
                                        "root", "seed", "stats", "max-data-gib", "max-host-gib", "wall-limit", "link-down",
                                        "link-degraded", "timeline", "timeline-max-events", "timeline-window",
                                        "chip-start"},
                                       {"timing-only", "check", "quiet"},
                                       {"set", "link-down", "link-degraded", "chip-start"}};

void require_single_chip(const platform::platform_config& cfg, const std::string& where, const std::string& who,
                         const std::string& platform_option) {
    if (cfg.multichip.kind == platform::platform_kind::single_chip) return;
    throw usage_error(where + ": a platform of " + std::to_string(cfg.multichip.chips()) + " chips; " + who +
                      " simulates one chip: use trnsim collective " + platform_option +
                      " (a collective) or trnsim train (a training step)");
}

int cmd_collective(const args& a) {
    a.no_positional();
    if (!a.has("op")) throw usage_error("--op is required (allreduce, reduce_scatter, allgather, alltoall, broadcast)");
    if (!a.has("bytes")) throw usage_error("--bytes is required (e.g. 1GiB)");
    if (a.has("timing-only") && a.has("check")) throw usage_error("--check needs data: it cannot go with --timing-only");
    if (a.has("stats")) check_writable("--stats", a.str("stats", ""));
    collective::params p;
    try {
        p.o = collective::parse_op(a.str("op", ""));
        p.a = collective::parse_algo(a.str("algo", "ring"));
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    std::string dt = a.str("dtype", "fp32");
    auto t = numerics::parse_dtype(dt);
    if (!t) throw usage_error("--dtype: unknown type '" + dt + "' (fp32, tf32, bf16, fp16, fp8_e4m3, fp8_e5m2)");
    p.dt = *t;
    p.bytes = parse_size("--bytes", a.str("bytes", ""));
    if (p.bytes == 0) throw usage_error("--bytes must be > 0");
    p.chunks = a.u32("chunks", 1);
    if (p.chunks == 0 || p.chunks > 1u << 20) throw usage_error("--chunks must be in 1 .. 1048576");
    // A transfer is cut into at most one piece per element: more chunks than the message has elements would be
    // cut silently while the report printed the number asked for.
    if (const uint64_t elems = p.bytes / numerics::size_of(p.dt); elems > 0 && p.chunks > elems)
        throw usage_error("--chunks " + std::to_string(p.chunks) + ": the message has only " + std::to_string(elems) +
                          " " + std::string(numerics::name_of(p.dt)) + " elements (a chunk is at least one)");
    if (p.o != collective::op::broadcast) a.refuse({"root"}, "applies to broadcast only (the rooted collective)");
    p.root = a.u32("root", 0);
    if (a.has("timing-only")) a.refuse({"seed", "max-data-gib"}, "applies to real data, not --timing-only");
    const double max_data_gib = a.num("max-data-gib", 4);
    if (!(max_data_gib > 0)) throw usage_error("--max-data-gib: must be > 0 (GiB of real data a run may hold)");

    const std::vector<std::string> sets = config_overrides(a);
    platform::platform_config cfg = load_multichip(a, sets, "collectives need");
    check_distinct_files(a, &cfg);
    const std::string what = cfg.preset;
    for (const char* opt : {"link-down", "link-degraded"})
        for (const std::string& v : a.list(opt)) {
            platform::link_fault f = parse_fault(opt, v, std::string(opt) == "link-down");
            try {
                platform::fault_origin o;
                o.where = std::string("--") + opt + " " + v;
                o.sep = " ";
                o.factor = "FACTOR";
                o.extra = "EXTRA_NS";
                o.down = "--link-down";
                platform::add_link_fault(cfg.multichip, f, o);
            } catch (const std::exception& e) {
                throw usage_error(e.what());
            }
        }
    uint32_t n = cfg.multichip.chips();
    const bool opt_check = a.has("check");
    if (p.o == collective::op::broadcast && p.root >= n)
        throw usage_error("--root: chip " + std::to_string(p.root) + " does not exist (" + std::to_string(n) + " chips)");
    // Real data: every chip's memory holds input, output and scratch (about three times the message), plus the
    // reference's outputs with --check. Without --check, a run whose data would not fit is timing only (the same
    // timing), and the report says so; --check (which needs the data) is refused instead.
    std::string timing_only_why;
    if (cfg.functional) {
        double gib = (opt_check ? 4.0 : 3.0) * double(p.bytes) * double(n) / double(1ull << 30);
        const double lim = max_data_gib;
        if (gib > lim && opt_check)
            throw usage_error("--check on " + std::to_string(p.bytes) + " bytes on " + std::to_string(n) +
                              " chips needs about " + fmt("%.1f", gib) + " GiB of real data (limit --max-data-gib " +
                              fmt("%g", lim) + "); drop --check for a timing-only run (as --timing-only), or use fewer bytes or chips");
        if (gib > lim) {
            platform::set_functional(cfg, false);
            timing_only_why = "real data would need about " + fmt("%.1f", gib) + " GiB, over --max-data-gib " +
                              fmt("%g", lim);
        }
    }
    // Host memory of the schedule and its run, estimated before anything is built: about 250 bytes a step with light
    // chips (measured: 1.76 M steps, 446 MB RSS) and 2 KiB with full chips (their instruction streams; figures in
    // docs/RELIABILITY.md); a schedule is --chunks times the steps of one chunk. The builder stops at the budget too.
    const double per_step = cfg.multichip.any_full() ? 2048.0 : 256.0;
    const double host_limit = host_memory_limit(a);
    p.max_steps = uint64_t(std::min(host_limit / per_step, double(UINT32_MAX)));
    const std::string fewer = "fewer --chunks, chips or a smaller topology";
    auto too_large = [&](const std::string& why) {
        return usage_error("the " + std::string(collective::name_of(p.o)) + " schedule on " + std::to_string(n) +
                           " chips with --chunks " + std::to_string(p.chunks) + " " + why);
    };
    collective::params one = p;  // one chunk: the closed-form bound, then (chunks > 1) the steps of one built
    one.chunks = 1;
    // The closed-form bound first: a schedule far beyond the memory is refused without building anything.
    if (const double bound1 = collective::step_bound(cfg.multichip.topo, one); bound1 * per_step > host_limit)
        check_host_memory(a, "the " + std::string(collective::name_of(p.o)) + " schedule on " + std::to_string(n) +
                                 " chips (up to " + fmt("%.3g", bound1) + " steps a chunk)",
                          bound1 * per_step * p.chunks, fewer);
    if (p.chunks > 1) {
        uint64_t steps1 = 0;
        try {
            steps1 = collective::build(cfg.multichip.topo, one).steps.size();
        } catch (const collective::schedule_too_large&) {
            throw too_large("would take more than the host memory it may use even with one chunk (" + fewer +
                            "; --max-host-gib raises the limit)");
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
        check_host_memory(a, "the schedule (" + std::to_string(steps1) + " steps a chunk x --chunks " +
                                 std::to_string(p.chunks) + ")",
                          double(steps1) * p.chunks * per_step, fewer);
    }
    // --timeline (full chips): every chip's engines, queues, DMA engines and HBM channels, a track group per chip.
    if (a.has("timeline") && !cfg.multichip.all_full())
        throw usage_error("--timeline records the full chips' engines: add --set chips.model=full (light chips have none)");
    if (a.has("chip-start") && !cfg.multichip.all_full())
        throw usage_error("--chip-start holds back the full chips' instruction streams: add --set chips.model=full");
    observers obs(a, cfg, "trnsim collective");
    tb::collective_options opt;
    opt.chip_start_ns = parse_chip_starts(a, n);
    opt.on_platform = [&obs](platform::multichip_platform& plat) { obs.attach_platform(plat); };
    opt.check = opt_check;
    opt.seed = a.u64("seed", 1);
    opt.sim.wall_limit_s = a.wall_limit_s();
    if (a.has("quiet")) opt.sim.progress_after_s = 0;
    tb::collective_result r;
    try {
        r = tb::run_collective(cfg, p, opt);
    } catch (const collective::schedule_too_large& e) {
        throw too_large(std::string("would take more than the host memory it may use: ") + e.what() + " (" + fewer +
                        "; --max-host-gib raises the limit)");
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    obs.finish();
    obs.warnings(std::cout);

    std::cout << "collective " << collective::name_of(p.o) << " (" << collective::name_of(p.a) << ") on " << what
              << ": " << n << " chips, " << topo_text(cfg.multichip.topo) << "\n";
    for (const auto& f : cfg.multichip.faults)
        std::cout << "  link fault      " << f.from << "->" << f.to << " "
                  << (f.down ? std::string("down")
                             : fmt("degraded: bandwidth x %g, latency +%g ns", f.factor(), f.extra_ns()))
                  << "\n";
    for (uint32_t c = 0; c < opt.chip_start_ns.size(); ++c)
        if (opt.chip_start_ns[c] > 0) std::cout << "  chip start      chip " << c << " at " << time_str(opt.chip_start_ns[c]) << "\n";
    std::cout << "  message         " << p.bytes << " bytes " << numerics::name_of(p.dt) << ", chunks " << p.chunks
              << (cfg.functional ? ", real data"
                                 : timing_only_why.empty() ? ", timing only (sim.functional=false): transfers keep their sizes, no byte is stored"
                                                           : ", timing only: " + timing_only_why + " (transfers keep their sizes, no byte is stored)")
              << "\n";
    std::cout << "  schedule        " << r.steps << " steps (" << r.copies << " copies, " << r.reduces
              << " reduces), " << fmt("%.1f", double(r.copy_bytes) / 1048576.0) << " MiB moved by DMA\n";
    if (r.lowered_dma)
        std::cout << "  full chips      lowered to " << r.lowered_dma << " DMA and " << r.lowered_vector
                  << " Vector Engine instructions, " << r.remote_signals
                  << " semaphore-register signals between cores and chips\n";
    std::cout << "  simulated time  " << time_str(r.sim_ns) << "\n";
    double bf = collective::bus_factor(p.o, n);
    std::cout << "  algbw           " << fmt("%.2f GB/s", r.algbw_gbps) << "\n";
    std::cout << "  busbw           " << fmt("%.2f GB/s (bus factor %.4f)", r.busbw_gbps, bf) << "\n";
    std::cout << "  utilisation     busy / simulated time per link direction and network port:\n";
    for (const auto& u : r.util)
        std::cout << "    " << u.kind << std::string(10 - std::min<size_t>(10, u.kind.size()), ' ')
                  << fmt("max %5.1f%%  avg %5.1f%%", 100 * u.max, 100 * u.avg) << "  (" << u.count
                  << (u.kind.rfind("link", 0) == 0 ? " directions" : " ports") << ", "
                  << fmt("%.1f MiB", double(u.bytes) / 1048576.0) << ", queued " << time_str(u.wait_ns)
                  << ")\n";
    if (r.checked)
        std::cout << "  check           " << (r.pass ? "PASS" : "FAIL") << ": every element of " << n
                  << " chips' outputs vs the reference execution"
                  << (r.pass ? "" : ", " + std::to_string(r.mismatches) + " mismatches, first " + r.first_mismatch)
                  << "\n";
    else
        std::cout << "  check           not checked" << (cfg.functional ? " (--check compares with the reference)" : " (timing only)") << "\n";
    std::cout << "  wall time       " << fmt("%.3f s simulation, %.3f s schedule build", r.wall_s, r.build_s) << "\n";

    if (a.has("stats")) {
        nlohmann::json j;
        j["command"] = "collective";
        j["platform"] = what;
        j["op"] = std::string(collective::name_of(p.o));
        j["algo"] = std::string(collective::name_of(p.a));
        j["dtype"] = std::string(numerics::name_of(p.dt));
        j["bytes"] = p.bytes;
        j["chunks"] = p.chunks;
        j["chips"] = n;
        j["functional"] = cfg.functional;
        if (!timing_only_why.empty()) j["timing_only_reason"] = timing_only_why;
        j["result"] = {{"sim_ns", r.sim_ns},       {"algbw_gbps", r.algbw_gbps}, {"busbw_gbps", r.busbw_gbps},
                       {"bus_factor", bf},         {"steps", r.steps},           {"copies", r.copies},
                       {"reduces", r.reduces},     {"copy_bytes", r.copy_bytes}, {"wall_s", r.wall_s},
                       {"checked", r.checked},     {"pass", r.pass},             {"mismatches", r.mismatches},
                       {"full_chips", r.lowered_dma > 0},   {"lowered_dma", r.lowered_dma},
                       {"lowered_vector", r.lowered_vector}, {"semaphore_signals", r.remote_signals}};
        for (const auto& u : r.util)
            j["utilisation"][u.kind] = {{"count", u.count}, {"max", u.max}, {"avg", u.avg}, {"bytes", u.bytes},
                                        {"queued_ns", u.wait_ns}};
        j["link_faults"] = nlohmann::json::array();
        for (const auto& f : cfg.multichip.faults)
            j["link_faults"].push_back({{"from", f.from}, {"to", f.to}, {"state", f.down ? "down" : "degraded"},
                                        {"bandwidth_factor", f.factor()},
                                        {"extra_latency_ns", f.extra_ns()}});
        j["stats"] = r.stats;
        j["config"] = cfg.source;
        write_file_atomic(a.str("stats", ""), j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    }
    obs.report(std::cout);
    return r.checked && !r.pass ? 1 : 0;
}

}  // namespace trnsim::app

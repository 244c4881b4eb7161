#include "apps/platform_run.h"

#include <algorithm>
#include <functional>
#include <iostream>
#include <sstream>

#include "apps/collective.h"
#include "apps/cosim.h"
#include "apps/observers.h"
#include "apps/report.h"
#include "testbench/forked.h"
#include "testbench/workloads/gemm/platform_gemm.h"
#include "tlm/config/config_node.h"

namespace trnsim::app {

tb::gemm_spec gemm_spec_from(const args& a, const platform::platform_config& cfg) {
    tb::gemm_spec g;
    g.m = a.u64("m", g.m);
    g.k = a.u64("k", g.k);
    g.n = a.u64("n", g.n);
    g.seed = a.u64("seed", g.seed);
    const std::string dt = a.str("dtype", "bf16");
    auto t = numerics::parse_dtype(dt);
    if (!t) throw usage_error("--dtype: unknown type '" + dt + "' (fp32, tf32, bf16, fp16, fp8_e4m3, fp8_e5m2)");
    g.dtype = *t;
    const std::string al = a.str("a-layout", "km"), bl = a.str("b-layout", "kn"), ct = a.str("c-dtype", "fp32");
    if (al != "km" && al != "mk") throw usage_error("--a-layout: '" + al + "' is not km (A^T stored) or mk (A stored)");
    if (bl != "kn" && bl != "nk") throw usage_error("--b-layout: '" + bl + "' is not kn (B stored) or nk (B^T stored)");
    g.a_rows = al == "mk";
    g.b_cols = bl == "nk";
    auto c = numerics::parse_dtype(ct);
    if (!c || (*c != numerics::dtype::fp32 && *c != g.dtype))
        throw usage_error("--c-dtype: '" + ct + "' is not fp32 or the input dtype (" + dt + ")");
    g.c_type = *c;
    if (cfg.chip.core.te.impl == te::te_impl::rtl) {
        check_rtl_dtype("--dtype", g.dtype);
        if (cfg.chip.core.te.fp8_double_row && numerics::size_of(g.dtype) == 1)
            throw usage_error("--dtype " + dt + ": FP8 with chip.core.te.fp8_double_row=true (two MACs per PE) is "
                              "TLM-only; the RTL has one MAC per PE: add --set chip.core.te.fp8_double_row=false");
    }
    return g;
}

void check_gemm_host_memory(const args& a, const platform::platform_config& cfg, const tb::gemm_spec& g, uint32_t chips,
                            double more) {
    if (!cfg.functional) return;
    // Operands, results and their golden copies live on the host as well as in the modelled HBM: measured RSS is
    // 3.2-4x the operand and result bytes plus about 50 MiB (docs/RELIABILITY.md), estimated as 4x + 64 MiB a chip.
    const tb::gemm_layout l = tb::plan_layout(g, cfg.chip);  // also checks the dimensions and the chip's HBM
    check_host_memory(a,
                      "the functional gemm " + std::to_string(g.m) + "x" + std::to_string(g.k) + "x" + std::to_string(g.n) +
                          (chips > 1 ? " on " + std::to_string(chips) + " chips" : ""),
                      double(chips) * (4.0 * double(l.a_bytes + l.b_bytes + l.c_bytes) + 64.0 * 1048576) + more,
                      "--timing-only runs the same timing without data");
}

std::vector<uint32_t> parse_chip_list(const std::string& text, uint32_t chips) {
    std::vector<uint32_t> out;
    if (text == "all") {
        for (uint32_t c = 0; c < chips; ++c) out.push_back(c);
        return out;
    }
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = text.find(',', start);
        const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        uint64_t v = 0;
        if (!config::parse_whole(item, v, false) || item.find('_') != std::string::npos)
            throw usage_error("--chips: '" + config::printable(item) + "' is not a chip id (give ids like 0,3,5, or all)");
        if (v >= chips)
            throw usage_error("--chips: chip " + std::to_string(v) + " does not exist (the platform has " +
                              std::to_string(chips) + " chips, 0 .. " + std::to_string(chips - 1) + ")");
        if (std::find(out.begin(), out.end(), uint32_t(v)) != out.end())
            throw usage_error("--chips: chip " + std::to_string(v) + " given twice");
        out.push_back(uint32_t(v));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    std::sort(out.begin(), out.end());
    return out;
}

tb::concurrent_collective parse_concurrent(const std::string& text) {
    tb::concurrent_collective c;
    std::vector<std::string> f;
    size_t start = 0;
    while (true) {
        const size_t colon = text.find(':', start);
        f.push_back(text.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
    if (f.size() < 2 || f.size() > 4)
        throw usage_error("--concurrent: '" + config::printable(text) +
                          "' is not OP:SIZE[:ALGO[:DTYPE]] (e.g. allreduce:256MiB:ring)");
    try {
        c.p.o = collective::parse_op(f[0]);
        c.p.a = collective::parse_algo(f.size() > 2 ? f[2] : "ring");
    } catch (const std::invalid_argument& e) {
        throw usage_error(std::string("--concurrent: ") + e.what());
    }
    c.p.bytes = parse_size("--concurrent", f[1]);
    if (c.p.bytes == 0) throw usage_error("--concurrent: the size must be > 0");
    const std::string dt = f.size() > 3 ? f[3] : "fp32";
    auto t = numerics::parse_dtype(dt);
    if (!t) throw usage_error("--concurrent: unknown type '" + config::printable(dt) + "' (fp32, bf16, fp16, ...)");
    c.p.dt = *t;
    return c;
}

namespace {

// What the interference comparison needs of one run: the two times and where the traffic went.
nlohmann::json run_summary(const tb::platform_gemm_result& r) {
    double hbm = 0, dma = 0;
    for (const auto& c : r.per_chip) {
        hbm += c.hbm_gbps;
        dma += c.dma_gbps;
    }
    const double n = r.per_chip.empty() ? 1.0 : double(r.per_chip.size());
    auto links_of = [](const std::vector<platform::multichip_platform::utilisation>& util) {
        nlohmann::json links = nlohmann::json::object();
        for (const auto& u : util) links[u.kind] = {{"max", u.max}, {"avg", u.avg}};
        return links;
    };
    nlohmann::json j = {{"gemm_ns", r.sim_ns},       {"collective_ns", r.collective.sim_ns}, {"hbm_gbps", hbm / n},
                        {"dma_gbps", dma / n},       {"links", links_of(r.util)},
                        {"dma_queue_depth", r.dma_queue_depth}, {"dma_wait_ns", r.dma_wait_ns}};
    if (r.overlap)  // both together: the same figures over the overlap only
        j["overlap"] = {{"window_ns", r.overlap->window_ns},   {"hbm_gbps", r.overlap->hbm_gbps},
                        {"dma_gbps", r.overlap->dma_gbps},     {"links", links_of(r.overlap->links)},
                        {"dma_queue_depth", r.overlap->dma_queue_depth}, {"dma_wait_ns", r.overlap->dma_wait_ns}};
    return j;
}

std::string format_interference(const nlohmann::json& f) {
    const auto& g = f["gemm_alone"];
    const auto& c = f["collective_alone"];
    const auto& b = f["together"];
    auto ratio = [](double x, double y) { return y > 0 ? x / y : 0.0; };
    std::ostringstream o;
    o << fmt("  interference    alone -> together (the same layout, SBUF split and queues; alone runs timing only):\n");
    o << fmt("                  GEMM        %s -> %s (x%.3f)\n", time_str(g["gemm_ns"]).c_str(), time_str(b["gemm_ns"]).c_str(),
             ratio(b["gemm_ns"], g["gemm_ns"]));
    o << fmt("                  collective  %s -> %s (x%.3f)\n", time_str(c["collective_ns"]).c_str(),
             time_str(b["collective_ns"]).c_str(), ratio(b["collective_ns"], c["collective_ns"]));
    // Together: over the overlap (until the first of the two is done) where it was measured, else over the run.
    const bool ov = b.contains("overlap");
    const auto& t = ov ? b["overlap"] : b;
    if (ov)
        o << fmt("                  each alone over its run; together over the overlap, 0 to %s (until the first is "
                 "done)\n", time_str(t["window_ns"]).c_str());
    o << fmt("                  HBM GB/s per chip  GEMM alone %.1f, collective alone %.1f, together %.1f\n",
             double(g["hbm_gbps"]), double(c["hbm_gbps"]), double(t["hbm_gbps"]));
    o << fmt("                  DMA GB/s per chip  GEMM alone %.1f, collective alone %.1f, together %.1f\n",
             double(g["dma_gbps"]), double(c["dma_gbps"]), double(t["dma_gbps"]));
    o << fmt("                  DMA queues: descriptors per engine (mean) GEMM alone %.2f, collective alone %.2f, "
             "together %.2f;\n                  a descriptor's wait for its first burst (mean) %s, %s, %s\n",
             double(g["dma_queue_depth"]), double(c["dma_queue_depth"]), double(t["dma_queue_depth"]),
             time_str(g["dma_wait_ns"]).c_str(), time_str(c["dma_wait_ns"]).c_str(), time_str(t["dma_wait_ns"]).c_str());
    for (auto it = b["links"].begin(); it != b["links"].end(); ++it) {  // the network's ports: over the run
        const double alone = c["links"].contains(it.key()) ? double(c["links"][it.key()]["max"]) : 0.0;
        const bool in_overlap = t["links"].contains(it.key());
        o << fmt("                  %-9s max utilisation: collective alone %.1f%%, together %.1f%%%s\n", it.key().c_str(),
                 100 * alone, 100 * double((in_overlap ? t : b)["links"][it.key()]["max"]),
                 ov && !in_overlap ? " (over the run)" : "");
    }
    return o.str();
}

std::string chip_list_text(const std::vector<uint32_t>& chips, uint32_t all) {
    if (chips.size() == all) return "every chip";
    std::string s;
    for (uint32_t c : chips) s += (s.empty() ? "chip " : ", ") + std::to_string(c);
    return s;
}

std::string format_platform_gemm(const platform::platform_config& cfg, const tb::platform_gemm_result& r,
                                 const tb::concurrent_collective& conc) {
    const auto& c = cfg.chip;
    const tb::gemm_spec& g = r.per_chip.front().spec;
    std::ostringstream o;
    o << "trnsim platform GEMM report\n";
    o << fmt("  platform        %s: %u chips; %s of %s: %s, TE %ux%u @ %.2f GHz\n", cfg.preset.c_str(),
             cfg.multichip.chips(), chip_list_text(r.chips, cfg.multichip.chips()).c_str(), c.name.c_str(),
             count_text(c.cores, "core").c_str(), c.core.te.rows, c.core.te.cols, c.core.te.clock_ghz);
    o << fmt("  workload        GEMM M=%llu K=%llu N=%llu %s -> FP32 on each (SPMD; chip c's operands from seed %llu + c x "
             "0x9e3779b97f4a7c15)\n",
             (unsigned long long)g.m, (unsigned long long)g.k, (unsigned long long)g.n,
             std::string(numerics::name_of(g.dtype)).c_str(), (unsigned long long)tb::chip_seed(g.seed, 0));
    o << fmt("  simulated time  %s (the last chip to finish%s)\n", time_str(std::max(r.sim_ns, r.collective.sim_ns)).c_str(),
             r.concurrent ? ", GEMM or collective; the GEMM alone below" : "");
    if (r.concurrent) o << fmt("  GEMM time       %s (its last completion on any chip)\n", time_str(r.sim_ns).c_str());
    o << fmt("  throughput      %.1f TFLOP/s of %.1f peak (%.1f%%) over the chosen chips; energy %.3f mJ\n",
             r.achieved_tflops, r.peak_tflops, r.peak_tflops > 0 ? 100 * r.achieved_tflops / r.peak_tflops : 0,
             r.energy_j * 1e3);
    if (r.concurrent) {
        const auto& x = r.collective;
        const std::string chk = !x.checked ? std::string(r.functional ? "skipped (--no-check)" : "none (timing only)")
                                : x.pass   ? std::string("PASS")
                                           : "FAIL: " + std::to_string(x.mismatches) + " differ; first " + x.first_mismatch;
        o << fmt("  concurrent      %s (%s) of %s on every chip: %s, algbw %.1f GB/s, busbw %.1f GB/s; %llu steps as "
                 "%llu DMA and %llu Vector Engine instructions beside the GEMM; check %s\n",
                 std::string(collective::name_of(conc.p.o)).c_str(), std::string(collective::name_of(conc.p.a)).c_str(),
                 (std::to_string(conc.p.bytes) + " bytes " + std::string(numerics::name_of(conc.p.dt))).c_str(),
                 time_str(x.sim_ns).c_str(), x.algbw_gbps, x.busbw_gbps, (unsigned long long)x.steps,
                 (unsigned long long)x.dma_instructions, (unsigned long long)x.vector_instructions, chk.c_str());
    }
    o << "  per chip        chip   time         TE util  HBM GB/s  DMA GB/s  energy mJ  check\n";
    for (const auto& x : r.per_chip) {
        const std::string chk = x.checked ? (x.pass ? "PASS" : "FAIL: " + std::to_string(x.mismatches) + " differ; first " +
                                                                   x.first_mismatch)
                                          : x.functional ? "not checked (--no-check)" : "timing only";
        const size_t i = size_t(&x - r.per_chip.data());
        o << fmt("                  %-5u  %-11s  %6.1f%%  %8.1f  %8.1f  %9.3f  %s\n", r.chips[i], time_str(x.sim_ns).c_str(),
                 100 * x.te_utilisation, x.hbm_gbps, x.dma_gbps, x.energy.total_j * 1e3, chk.c_str());
    }
    o << fmt("  wall time       %.2f s in all: set-up %.2f s, operands %.2f s, simulation %.2f s, check %.2f s\n",
             std::max(process_wall_s(), r.wall_s), r.setup_wall_s, r.operands_wall_s, r.wall_s, r.check_wall_s);
    if (r.checked)
        o << fmt("  result check    %s: %llu elements differ over %s (every chip's C against the golden GEMM of its "
                 "operands)\n",
                 r.pass ? "PASS" : "FAIL", (unsigned long long)r.mismatches, count_text(r.chips.size(), "chip").c_str());
    else
        o << (r.functional ? "  result check    skipped (--no-check)\n"
                           : "  result check    none: timing-only run (sim.functional=false): no value is stored or computed\n");
    return o.str();
}

nlohmann::json platform_gemm_json(const platform::platform_config& cfg, const tb::platform_gemm_result& r,
                                  const tb::concurrent_collective& conc) {
    nlohmann::json j;
    j["config"] = cfg.source;
    j["preset"] = cfg.preset;
    const tb::gemm_spec& g = r.per_chip.front().spec;
    j["workload"] = {{"name", "gemm"}, {"m", g.m}, {"k", g.k}, {"n", g.n}, {"dtype", std::string(numerics::name_of(g.dtype))},
                     {"seed", tb::chip_seed(g.seed, 0)}, {"chips", r.chips}};
    j["result"] = {{"sim_ns", r.sim_ns},           {"achieved_tflops", r.achieved_tflops},
                   {"peak_tflops", r.peak_tflops}, {"energy_j", r.energy_j},
                   {"functional", r.functional},   {"checked", r.checked},
                   {"pass", r.pass},               {"mismatches", r.mismatches},
                   {"wall_s", r.wall_s},           {"setup_wall_s", r.setup_wall_s},
                   {"operands_wall_s", r.operands_wall_s}, {"check_wall_s", r.check_wall_s}};
    nlohmann::json chips = nlohmann::json::array();
    for (size_t i = 0; i < r.per_chip.size(); ++i) {
        const auto& x = r.per_chip[i];
        nlohmann::json c = gemm_figures_json(x);
        c.update({{"chip", r.chips[i]}, {"seed", x.spec.seed}, {"c_digest", x.c_digest}, {"stats", x.stats}});
        chips.push_back(std::move(c));
    }
    j["chips"] = chips;
    if (r.concurrent) {
        const auto& x = r.collective;
        j["concurrent"] = {{"op", std::string(collective::name_of(conc.p.o))}, {"algo", std::string(collective::name_of(conc.p.a))},
                           {"bytes", conc.p.bytes}, {"dtype", std::string(numerics::name_of(conc.p.dt))},
                           {"sim_ns", x.sim_ns}, {"algbw_gbps", x.algbw_gbps}, {"busbw_gbps", x.busbw_gbps},
                           {"steps", x.steps}, {"dma_instructions", x.dma_instructions},
                           {"vector_instructions", x.vector_instructions}, {"remote_signals", x.remote_signals},
                           {"checked", x.checked}, {"pass", x.pass}, {"mismatches", x.mismatches}};
        j["result"]["gemm_sim_ns"] = r.sim_ns;
        j["result"]["sim_ns"] = std::max(r.sim_ns, x.sim_ns);
    }
    return j;
}

} // namespace

int cmd_run_platform(const args& a) {
    if (a.has("preset") || a.has("config"))
        throw usage_error("--platform names the platform: give it instead of --preset / --config");
    if (a.str("workload", "gemm") != "gemm")
        throw usage_error("--platform runs --workload gemm (on every chosen chip); '" + a.str("workload", "") +
                          "' runs on one chip (--preset)");
    a.refuse({"program", "vcd", "wave", "wave-cores", "fault", "seq", "hidden", "heads", "ffn", "rows", "cols", "step", "lr", "norm",
              "forward-only", "no-causal"},
             "applies to a run on one chip (--preset), not yet to --platform");
    if (a.has("stats")) check_writable("--stats", a.str("stats", ""));
    else a.refuse({"no-wall-time"}, "applies to --stats FILE");
    if (a.has("timing-only")) a.refuse({"seed"}, "applies to real data, not --timing-only");
    platform::platform_config cfg = load_multichip(a, config_overrides(a), "run --platform needs");
    check_distinct_files(a, &cfg);
    const std::vector<uint32_t> chips = parse_chip_list(a.str("chips", "all"), cfg.multichip.chips());
    for (uint32_t c : chips)
        if (!cfg.multichip.full_chip[c])
            throw usage_error("--chips: chip " + std::to_string(c) + " of " + cfg.preset +
                              " is a light chip, which runs no programs: add --set chips.model=full (or list it in "
                              "chips.full)");
    const tb::gemm_spec g = gemm_spec_from(a, cfg);
    tb::concurrent_collective conc;
    if (a.has("concurrent")) {
        conc = parse_concurrent(a.str("concurrent", ""));
        conc.check = !a.has("no-check");
        conc.seed = g.seed;
        for (uint32_t c = 0; c < cfg.multichip.chips(); ++c)
            if (!cfg.multichip.full_chip[c])
                throw usage_error("--concurrent: the collective runs on every chip of " + cfg.preset + ", and chip " +
                                  std::to_string(c) + " is a light chip: add --set chips.model=full");
    }
    check_gemm_host_memory(a, cfg, g, uint32_t(chips.size()),
                           a.has("concurrent") ? double(cfg.multichip.chips()) * 4.0 * double(conc.p.bytes) : 0.0);
    tb::gemm_options opt;
    opt.check = !a.has("no-check");
    opt.sim = sim_options_from(a);
    // --timeline: every chip's engines, queues, DMA engines and HBM channels, a track group per chip (its id); checked
    // before anything runs.
    observers obs(a, cfg, "trnsim run --platform");
    // The interference: the GEMM alone and the collective alone, each in a child (SystemC elaborates once per
    // process) before this process runs both together; timing only (the same timing as with data).
    nlohmann::json interference;
    if (a.has("concurrent")) {
        platform::platform_config alone_cfg = cfg;
        platform::set_functional(alone_cfg, false);
        tb::gemm_options alone_opt = opt;
        alone_opt.sim.progress_after_s = 0;
        std::vector<std::function<nlohmann::json()>> jobs;
        for (auto part : {tb::concurrent_collective::part::gemm_alone, tb::concurrent_collective::part::collective_alone})
            jobs.push_back([&, part] {
                tb::concurrent_collective c = conc;
                c.run = part;
                try {
                    return run_summary(tb::run_platform_gemm(alone_cfg, g, chips, alone_opt, &c));
                } catch (const std::invalid_argument& e) {  // bad input (the algorithm, the buffers): a usage error
                    return nlohmann::json{{"usage_error", e.what()}};
                }
            });
        const auto res = tb::run_forked(jobs, 2, true);
        for (const auto& j : res) {
            if (j.contains("usage_error")) throw usage_error(j["usage_error"].get<std::string>());
            if (j.contains("error")) throw std::runtime_error("the run alone: " + j["error"].get<std::string>());
        }
        interference["gemm_alone"] = res[0];
        interference["collective_alone"] = res[1];
    }
    tb::platform_gemm_result r;
    try {
        r = tb::run_platform_gemm(cfg, g, chips, opt, a.has("concurrent") ? &conc : nullptr,
                                  [&obs](platform::multichip_platform& p) { obs.attach_platform(p); });
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    obs.finish();
    obs.warnings(std::cout);
    std::cout << format_platform_gemm(cfg, r, conc);
    if (a.has("concurrent")) {
        interference["together"] = run_summary(r);
        const double ga = interference["gemm_alone"]["gemm_ns"], ca = interference["collective_alone"]["collective_ns"];
        interference["gemm_slowdown"] = ga > 0 ? r.sim_ns / ga : 0.0;
        interference["collective_slowdown"] = ca > 0 ? r.collective.sim_ns / ca : 0.0;
        std::cout << format_interference(interference);
    }
    obs.report(std::cout);
    if (a.has("stats")) {
        nlohmann::json j = platform_gemm_json(cfg, r, conc);
        if (a.has("concurrent")) j["interference"] = interference;
        write_stats(a, std::move(j));
    }
    return r.checked && !r.pass ? 1 : 0;
}

} // namespace trnsim::app

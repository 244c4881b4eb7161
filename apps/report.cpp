#include "apps/report.h"

#include <fstream>
#include <unistd.h>

#include "apps/args.h"
#include "tlm/output_file.h"
#include "tlm/time_text.h"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>


namespace trnsim::app {

std::string fmt(const char* f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}
std::string count_text(uint64_t n, const std::string& noun, const std::string& plural) {
    return std::to_string(n) + " " + (n == 1 ? noun : plural.empty() ? noun + "s" : plural);
}

std::string time_str(double ns) {
    return tlmx::time_text(ns);
}

namespace {
const auto process_start = std::chrono::steady_clock::now();  // static initialisation: the process's start
} // namespace

double process_wall_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - process_start).count(); }

namespace {
// The Tensor Engine back end, when it is not the C++ model: " on the Verilated RTL".
const char* te_backend_text(const te::te_config& te) { return te.impl == te::te_impl::rtl ? " (Verilated RTL)" : ""; }
} // namespace

std::string format_gemm_report(const platform::platform_config& cfg, const tb::gemm_result& r) {
    const auto& g = r.spec;
    const auto& c = cfg.chip;
    const auto& t = r.tiling;
    std::ostringstream o;
    o << "trnsim GEMM report\n";
    o << fmt("  platform        %s (%s): %s, TE %ux%u @ %.2f GHz%s, HBM %s %.0f GB/s (%s model)\n",
             cfg.preset.c_str(), c.name.c_str(), count_text(c.cores, "core").c_str(), c.core.te.rows, c.core.te.cols,
             c.core.te.clock_ghz, te_backend_text(c.core.te), count_text(c.hbm.stacks, "stack").c_str(),
             c.hbm.bandwidth_gbps, c.hbm.model.c_str());
    o << fmt("  workload        GEMM M=%llu K=%llu N=%llu %s -> %s, seed %llu%s%s\n", (unsigned long long)g.m,
             (unsigned long long)g.k, (unsigned long long)g.n, std::string(numerics::name_of(g.dtype)).c_str(),
             g.c_type == numerics::dtype::fp32 ? "FP32" : std::string(numerics::name_of(g.c_type)).c_str(),
             (unsigned long long)g.seed, g.a_rows ? ", A stored M x K" : "", g.b_cols ? ", B stored N x K" : "");
    o << fmt("  tiling          MATMUL %ux%ux%u (KxMxN), %llu x %llu x %llu tiles, blocks of %ux%u accumulators, %s\n",
             t.kt, t.mt, t.nt, (unsigned long long)t.k_tiles, (unsigned long long)t.m_tiles, (unsigned long long)t.n_tiles,
             t.block_m, t.block_n, count_text(t.blocks, "block").c_str());
    double turns = 0, casts = 0;  // Vector Engine transposes of turned operands, Scalar Engine casts of C
    for (uint32_t core = 0; core < c.cores; ++core) {
        const std::string k = "chip0.core" + std::to_string(core);
        auto v = r.stats.find(k + ".vector.instructions"), s = r.stats.find(k + ".scalar.instructions");
        if (v != r.stats.end()) turns += v->second;
        if (s != r.stats.end()) casts += s->second;
    }
    o << fmt("  instructions    %llu MATMUL, %llu DMA", (unsigned long long)t.matmuls, (unsigned long long)t.dmas);
    if (turns > 0) o << fmt(", %.0f VECTOR (operand transposes)", turns);
    if (casts > 0) o << fmt(", %.0f SCALAR (C casts)", casts);
    o << "\n";
    o << fmt("  simulated time  %s\n", time_str(r.sim_ns).c_str());
    o << fmt("  throughput      %.1f TFLOP/s achieved of %.1f peak (%.1f%%)", r.achieved_tflops, r.peak_tflops,
             100 * r.te_utilisation);
    // The preset's published figure is for BF16 on the chip as shipped: quoted only for that dtype and design.
    if (c.headline_bf16_tflops > 0 && g.dtype == numerics::dtype::bf16 && !cfg.modified)
        o << fmt("; published %s BF16 figure %.0f TFLOP/s", cfg.preset.c_str(), c.headline_bf16_tflops);
    o << "\n";
    o << fmt("  bounds          compute %s, HBM traffic of A+B+C %s\n", time_str(r.min_time_compute_ns).c_str(),
             time_str(r.min_time_hbm_ns).c_str());
    o << fmt("  tensor engine   utilisation %.1f%% of elapsed, %.1f%% while streaming\n", 100 * r.te_utilisation,
             100 * r.te_stream_utilisation);
    o << fmt("  HBM             %.1f MiB moved, %.1f GB/s (%.1f%% of %.0f)\n", r.hbm_bytes / 1048576, r.hbm_gbps,
             100 * r.hbm_gbps / r.hbm_peak_gbps, r.hbm_peak_gbps);
    o << fmt("  DMA             %.1f MiB moved, %.1f GB/s (%.1f%% of %.0f)\n", r.dma_bytes / 1048576, r.dma_gbps,
             100 * r.dma_gbps / r.dma_peak_gbps, r.dma_peak_gbps);
    o << fmt("  DMA queues      %.2f descriptors per engine (mean), a descriptor waits %s for its first burst (mean)\n",
             r.dma_queue_depth, time_str(r.dma_wait_ns).c_str());
    const auto& e = r.energy;
    o << fmt("  energy          %.3g J (dynamic %.3g J, static %.3g J), average power %.1f W, %.3f TFLOP/s per W\n",
             e.total_j, e.dynamic_j, e.static_j, e.avg_power_w(), r.tflops_per_w);
    std::string parts;
    for (const auto& p : e.parts)
        if (p.joules > 0) parts += fmt("%s%s %.1f%%", parts.empty() ? "" : ", ", p.name.c_str(), 100 * p.joules / e.total_j);
    o << "                  " << parts << "\n";
    const double parts_s = r.setup_wall_s + r.operands_wall_s + r.wall_s + r.check_wall_s;
    const double all_s = std::max(process_wall_s(), parts_s);
    o << fmt("  wall time       %.2f s in all: set-up %.2f s, operands %.2f s, simulation %.2f s (%.3g simulated s per "
             "wall s), check %.2f s, other %.2f s\n",
             all_s, r.setup_wall_s, r.operands_wall_s, r.wall_s, r.wall_s > 0 ? r.sim_ns * 1e-9 / r.wall_s : 0,
             r.check_wall_s, all_s - parts_s);
    if (r.checked) {
        o << fmt("  result check    %s: %llu of %llu elements differ from the golden GEMM (bit exact)",
                 r.pass ? "PASS" : "FAIL", (unsigned long long)r.mismatches, (unsigned long long)(g.m * g.n));
        if (!r.first_mismatch.empty()) o << "; first: " << r.first_mismatch;
        o << fmt("\n                  max error vs FP64 over %llu elements: abs %.3g, rel %.3g\n",
                 (unsigned long long)r.error_samples, r.max_abs_err, r.max_rel_err);
    } else {
        o << (r.functional ? "  result check    skipped (--no-check)\n"
                           : "  result check    none: timing-only run (sim.functional=false): the transactions keep their "
                             "addresses and sizes (same timing), but no operand is generated and no value is stored or "
                             "computed\n");
    }
    o << format_faults(cfg, r.stats);
    return o.str();
}

std::string format_faults(const platform::platform_config& cfg, const std::map<std::string, double>& stats) {
    std::ostringstream o;
    auto sum = [&](const std::string& suffix) {
        double v = 0;
        for (const auto& [k, x] : stats)
            if (k.size() >= suffix.size() && k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0) v += x;
        return v;
    };
    if (cfg.chip.core.dma.checksum)
        o << fmt("  checksums       %.0f DMA instructions verified end to end (%.1f MiB), no mismatch\n",
                 sum(".checksums_verified"), sum(".checksum_bytes") / 1048576);
    if (cfg.chip.faults.empty()) return o.str();
    o << "  faults          ";
    for (size_t i = 0; i < cfg.chip.faults.size(); ++i) o << (i ? "; " : "") << cfg.chip.faults[i].label;
    o << "\n";
    o << fmt("                  HBM: %.0f requests failed, %.0f blocks remapped, %.0f slowed, %.0f corrupted\n",
             sum("hbm.fault_errors"), sum("hbm.remapped_blocks"), sum("hbm.slowed_requests"), sum("hbm.corrupted_transfers"));
    o << fmt("                  DMA: %.0f injected errors (a DMA fault's after/count apply to each engine it names)\n",
             sum(".injected_errors"));
    return o.str();
}

std::string format_program_report(const platform::platform_config& cfg, const tb::program_file& p,
                                  const tb::program_result& r) {
    const auto& c = cfg.chip;
    std::ostringstream o;
    o << "trnsim program report\n";
    o << fmt("  platform        %s (%s): %s, TE %ux%u @ %.2f GHz%s\n", cfg.preset.c_str(), c.name.c_str(),
             count_text(c.cores, "core").c_str(), c.core.te.rows, c.core.te.cols, c.core.te.clock_ghz, te_backend_text(c.core.te));
    o << "  program         " << p.file << (p.description.empty() ? "" : " - " + p.description) << "\n";
    o << fmt("  instructions    %llu MATMUL, %llu DMA completed\n", (unsigned long long)r.te_instructions,
             (unsigned long long)r.dma_instructions);
    o << fmt("  simulated time  %s\n", time_str(r.sim_ns).c_str());
    o << fmt("  DMA             %.3f MiB moved\n", r.dma_bytes / 1048576);
    o << fmt("  wall time       %.2f s in all, %.2f s of it simulation\n", std::max(process_wall_s(), r.wall_s), r.wall_s);
    if (r.checked) {
        o << fmt("  result check    %s: %llu of %llu regions differ", r.pass ? "PASS" : "FAIL", (unsigned long long)r.failed,
                 (unsigned long long)r.checks);
        if (!r.first_failure.empty()) o << "; first: " << r.first_failure;
        o << "\n";
    } else {
        o << (!cfg.functional     ? "  result check    none: timing-only run (sim.functional=false): no value is stored or computed\n"
              : p.checks.empty() ? "  result check    none (the program has no \"check\" entries)\n"
                                 : "  result check    skipped (--no-check): " + count_text(p.checks.size(), "check entry", "check entries") +
                                       " not compared\n");
    }
    o << format_faults(cfg, r.stats);
    return o.str();
}

nlohmann::json program_result_json(const platform::platform_config& cfg, const tb::program_file& p,
                                   const tb::program_result& r) {
    nlohmann::json j;
    j["config"] = cfg.source;
    j["preset"] = cfg.preset;
    j["workload"] = {{"name", "program"}, {"file", p.file}};
    j["result"] = {{"sim_ns", r.sim_ns},         {"wall_s", r.wall_s},   {"te_instructions", r.te_instructions},
                   {"dma_instructions", r.dma_instructions}, {"dma_bytes", r.dma_bytes}, {"checked", r.checked},
                   {"pass", r.pass},             {"checks", r.checks},   {"failed_checks", r.failed},
                   {"region_digests", r.digests}};
    j["stats"] = r.stats;
    return j;
}

void strip_wall_time(nlohmann::json& j) {
    if (!j.contains("result") || !j["result"].is_object()) return;
    for (const char* k : {"wall_s", "setup_wall_s", "operands_wall_s", "check_wall_s"}) j["result"].erase(k);
}

tb::sim_options sim_options_from(const args& a) {
    tb::sim_options o;
    o.wall_limit_s = a.wall_limit_s();
    // 0 = no limit; else at least 1 ps, the simulation's time resolution (shorter limits never advance time).
    o.stall_limit_us = a.num("stall-limit-us", 0, 0, 1e12);
    if (o.stall_limit_us > 0 && o.stall_limit_us < 1e-6)
        throw usage_error("option --stall-limit-us: must be 0 (no limit) or at least 0.000001 (1 ps)");
    if (a.has("quiet")) o.progress_after_s = 0;
    return o;
}

void write_stats(const args& a, nlohmann::json j) {
    if (!a.has("stats")) return;
    if (a.has("no-wall-time")) strip_wall_time(j);
    write_file_atomic(a.str("stats", ""), j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

std::vector<std::string> config_overrides(const args& a) {
    std::vector<std::string> sets = a.list("set");
    if (!a.has("timing-only")) return sets;
    for (const auto& s : sets)
        if (s.rfind("sim.functional=", 0) == 0 || (s.rfind("sim=", 0) == 0 && s.find("functional") != std::string::npos))
            throw usage_error("--timing-only sets sim.functional=false: drop --set " + s);
    sets.push_back("sim.functional=false");
    return sets;
}

double host_memory_limit(const args& a) {
    if (a.has("max-host-gib")) return a.num("max-host-gib", 0, 1e-6, 1e6) * 1073741824.0;
    std::ifstream in("/proc/meminfo");
    std::string key;
    double kib = 0;
    while (in >> key >> kib) {
        if (key == "MemAvailable:") return kib * 1024.0;
        in.ignore(256, '\n');
    }
    return double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE));
}

void check_host_memory(const args& a, const std::string& what, double bytes, const std::string& how) {
    const double limit = host_memory_limit(a);
    if (bytes <= limit) return;
    throw usage_error(what + " would take about " + fmt("%.1f", bytes / 1073741824.0) + " GiB of host memory, more than " +
                      (a.has("max-host-gib") ? "--max-host-gib " + a.str("max-host-gib", "") : "the " +
                       fmt("%.1f", limit / 1073741824.0) + " GiB this host has available") + " (" + how +
                      "; --max-host-gib raises the limit)");
}

void check_writable(const std::string& option, const std::string& file) {
    const std::string why = platform::output_file_problem(file);
    if (!why.empty()) throw usage_error(option + " '" + file + "': " + why);
}

void check_distinct_files(const args& a, const platform::platform_config* cfg, std::vector<platform::named_file> files) {
    using platform::named_file;
    if (cfg) {
        for (size_t i = 0; i < cfg->files.size(); ++i)
            files.push_back({i == 0 ? (a.has("config") ? "--config" : "--preset") : "the extends chain of " +
                                         std::string(a.has("config") ? "--config" : "--preset"), cfg->files[i], false});
        const std::string& wave = cfg->chip.core.te.wave_file;
        if (!wave.empty() && !a.has("wave")) {
            files.push_back({"chip.core.te.wave", wave, true});
            files.push_back({"chip.core.te.wave (its transactor VCD)", te::wave_wrapper_file(wave), true});
        }
    } else if (a.has("config")) {
        files.push_back({"--config", a.str("config", ""), false});
    }
    for (const char* k : {"program", "trace", "model"}) {
        // --model may name a preset (not a file): only a path is an input file.
        const std::string v = a.has(k) ? a.str(k, "") : "";
        if (!v.empty() && (std::string(k) != "model" || v.find('/') != std::string::npos || std::filesystem::exists(v)))
            files.push_back({std::string("--") + k, v, false});
    }
    for (const char* k : {"stats", "timeline", "vcd", "wave"})
        if (a.has(k)) files.push_back({std::string("--") + k, a.str(k, ""), true});
    if (a.has("wave")) files.push_back({"--wave (its transactor VCD)", te::wave_wrapper_file(a.str("wave", "")), true});
    const std::string why = platform::same_file_problem(files);
    if (!why.empty()) throw usage_error(why);
}

nlohmann::json gemm_figures_json(const tb::gemm_result& r) {
    return {{"sim_ns", r.sim_ns},
            {"achieved_tflops", r.achieved_tflops},
            {"te_utilisation", r.te_utilisation},
            {"te_stream_utilisation", r.te_stream_utilisation},
            {"hbm_gbps", r.hbm_gbps},
            {"dma_gbps", r.dma_gbps},
            {"dma_queue_depth", r.dma_queue_depth},
            {"dma_wait_ns", r.dma_wait_ns},
            {"energy_j", r.energy.total_j},
            {"checked", r.checked},
            {"pass", r.pass},
            {"mismatches", r.mismatches}};
}

nlohmann::json gemm_result_json(const platform::platform_config& cfg, const tb::gemm_result& r) {
    nlohmann::json j;
    j["config"] = cfg.source;
    j["preset"] = cfg.preset;
    j["workload"] = {{"name", "gemm"}, {"m", r.spec.m}, {"k", r.spec.k}, {"n", r.spec.n},
                     {"dtype", std::string(numerics::name_of(r.spec.dtype))}, {"seed", r.spec.seed},
                     {"a_layout", r.spec.a_rows ? "mk" : "km"}, {"b_layout", r.spec.b_cols ? "nk" : "kn"},
                     {"c_dtype", std::string(numerics::name_of(r.spec.c_type))}};
    j["result"] = gemm_figures_json(r);
    j["result"].update({{"wall_s", r.wall_s},
                   {"setup_wall_s", r.setup_wall_s},
                   {"operands_wall_s", r.operands_wall_s},
                   {"check_wall_s", r.check_wall_s},
                   {"flops", r.flops},
                   {"peak_tflops", r.peak_tflops},
                   {"hbm_bytes", r.hbm_bytes},
                   {"dma_bytes", r.dma_bytes},
                   {"matmuls", r.tiling.matmuls},
                   {"dmas", r.tiling.dmas},
                   {"max_abs_err", r.max_abs_err},
                   {"max_rel_err", r.max_rel_err},
                   {"hbm_peak_gbps", r.hbm_peak_gbps},
                   {"dma_peak_gbps", r.dma_peak_gbps},
                   {"min_time_compute_ns", r.min_time_compute_ns},
                   {"min_time_hbm_ns", r.min_time_hbm_ns},
                   {"arithmetic_intensity", r.arithmetic_intensity},
                   {"dynamic_energy_j", r.energy.dynamic_j},
                   {"static_energy_j", r.energy.static_j},
                   {"avg_power_w", r.energy.avg_power_w()},
                   {"tflops_per_w", r.tflops_per_w},
                   {"pe_count", double(cfg.chip.core.te.rows) * cfg.chip.core.te.cols * cfg.chip.cores}});
    nlohmann::json parts = nlohmann::json::object();
    for (const auto& p : r.energy.parts) parts[p.name] = p.joules;
    j["energy_j"] = parts;
    if (!r.c_digest.empty()) j["result"]["c_digest"] = r.c_digest;
    j["stats"] = r.stats;
    nlohmann::json units = nlohmann::json::object();
    for (const auto& [path, m] : r.stat_meta) units[path] = {{"unit", m.unit}, {"desc", m.desc}};
    j["stat_units"] = units;
    return j;
}

void write_file_atomic(const std::string& file, const std::string& text) { platform::write_file(file, text); }

} // namespace trnsim::app

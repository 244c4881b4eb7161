// Human-readable and JSON reports of a run (writers live outside the models).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "apps/args.h"
#include "tlm/output_file.h"
#include "platforms/config/platform_config.h"
#include "testbench/workloads/gemm/gemm_run.h"
#include "testbench/workloads/program/program.h"

namespace trnsim::app {

// printf-style formatting into a std::string (up to 511 characters), and a simulated time in ns as the reports print
// it (tlmx::time_text: microseconds, three decimals).
std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string time_str(double ns);
// Wall-clock seconds since the process started (the whole run, for the reports' wall time).
double process_wall_s();
// "1 core", "8 cores": a count and its noun (`plural`, by default the noun with an s, unless n is 1).
std::string count_text(uint64_t n, const std::string& noun, const std::string& plural = "");

std::string format_gemm_report(const platform::platform_config& cfg, const tb::gemm_result& r);
nlohmann::json gemm_result_json(const platform::platform_config& cfg, const tb::gemm_result& r);
// The figures a GEMM result has on one chip (time, throughput, utilisations, bandwidths, DMA queues, energy, check):
// the single-chip result and every chip of run --platform report them under the same keys.
nlohmann::json gemm_figures_json(const tb::gemm_result& r);
std::string format_program_report(const platform::platform_config& cfg, const tb::program_file& p,
                                  const tb::program_result& r);
nlohmann::json program_result_json(const platform::platform_config& cfg, const tb::program_file& p,
                                   const tb::program_result& r);
// The configured faults and what the models counted of them ("" if none), for the text reports.
std::string format_faults(const platform::platform_config& cfg, const std::map<std::string, double>& stats);
// Removes the host-dependent fields (wall-clock times) so that two runs of the same config and seed give
// byte-identical files (--no-wall-time).
void strip_wall_time(nlohmann::json& j);
// Writes text to `file` atomically (platform::write_file: a unique temporary, then rename; devices in place).
void write_file_atomic(const std::string& file, const std::string& text);
// Throws usage_error (exit 2) if `file` could not be written later (no such directory, not writable, a directory),
// so a long run does not end in a write failure.
// --wall-limit, --stall-limit-us (0, or at least 1 ps) and --quiet as the run loop's options.
tb::sim_options sim_options_from(const args& a);
// --stats FILE: `j` written through the output writer (wall-clock times left out with --no-wall-time); nothing
// without --stats.
void write_stats(const args& a, nlohmann::json j);
// The --set overrides, with sim.functional=false for --timing-only (a --set of sim.functional beside it is a usage
// error: the run would not do what one of them says).
std::vector<std::string> config_overrides(const args& a);
// Host memory a run may take: --max-host-gib G if given (0 < G <= 1e6), else what the host has available now
// (MemAvailable of /proc/meminfo, physical memory where that is missing).
double host_memory_limit(const args& a);
// Refuses (usage error, exit 2) a run whose estimated host memory exceeds the limit, before anything is built:
// "WHAT would take about X GiB of host memory, more than the Y GiB available (HOW; --max-host-gib raises the limit)".
void check_host_memory(const args& a, const std::string& what, double bytes, const std::string& how);
void check_writable(const std::string& option, const std::string& file);

class args;
// Refuses (usage_error, exit 2) before anything runs an output that is the same file as an input or as another
// output (platform::same_file_problem): the outputs --stats, --timeline, --vcd, --wave and its transactor VCD (or
// cfg's chip.core.te.wave), the inputs cfg's files (--config / --preset and its extends chain, or --config itself
// without cfg), --program, --trace, --model (when a file), and `files` (a command's own).
void check_distinct_files(const args& a, const platform::platform_config* cfg, std::vector<platform::named_file> files = {});

} // namespace trnsim::app

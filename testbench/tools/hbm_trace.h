// Trace-driven and synthetic-pattern front end for the plain-C++ HBM model (models/hbm/dram/dram_system.h); no
// SystemC. Used by `trnsim hbm` (apps/hbm.cpp) and bench/hbm_bench.cpp.
//
// Trace file: one request per line, `time_ns R|W address size`, e.g. `0 R 0x1000 64`. Time 0 means "as soon as
// possible"; requests are presented in file order (a request is never presented before the one above it). Addresses
// and sizes are decimal or 0x-hex; `#` starts a comment. Errors name file:line.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "models/hbm/dram/hbm_dram_config.h"

namespace trnsim::tb {

struct hbm_request {
    double time_ns = 0;
    bool write = false;
    uint64_t addr = 0;
    uint64_t size = 64;
};

enum class hbm_pattern_kind { sequential, random, strided };

struct hbm_pattern {
    hbm_pattern_kind kind = hbm_pattern_kind::random;
    uint64_t requests = 100000;
    uint64_t size = 64;       // bytes per request
    uint64_t stride = 8192;   // strided: bytes between request starts
    uint64_t base = 0;
    uint32_t mix_reads = 1, mix_writes = 0;  // read:write ratio (each request is a write with p = W / (R + W))
    uint64_t seed = 1;
};

// Reads a trace; throws std::runtime_error("name:line: ...") on malformed lines or addresses beyond `capacity`.
// `stacks`: the HBM's stack count. The model steps through every refresh of every pseudo-channel, idle or not
// (1 s of one stack takes about 25 s of wall time), so a trace may span at most 1e9 / stacks ns: a run of a trace
// accepted here takes tens of seconds at most, whatever its stacks.
std::vector<hbm_request> read_hbm_trace(std::istream& in, const std::string& name, uint64_t capacity,
                                        uint32_t stacks = 1);
std::vector<hbm_request> read_hbm_trace_file(const std::string& file, uint64_t capacity, uint32_t stacks = 1);
// The longest a trace may span with `stacks` stacks (ns of simulated time).
double max_trace_ns(uint32_t stacks);
// Synthetic requests (all at time 0, i.e. as fast as the HBM accepts them). Addresses wrap at `capacity`.
std::vector<hbm_request> make_hbm_pattern(const hbm_pattern& p, uint64_t capacity);

struct hbm_run_result {
    uint64_t reads = 0, writes = 0;
    double sim_ns = 0;
    double bandwidth_gbps = 0, peak_gbps = 0, efficiency_pct = 0;
    double read_avg_ns = 0, read_p50_ns = 0, read_p99_ns = 0;
    double write_avg_ns = 0, write_p99_ns = 0;
    double row_hit_rate_pct = 0;
    uint64_t refreshes = 0;
    double wall_s = 0, requests_per_s = 0;        // wall clock of the simulation loop
    double cpu_s = 0, requests_per_s_cpu = 0;     // CPU time of this thread (robust on a shared machine)
    std::map<std::string, double> stats;  // every statistic by path
};

// Simulates the requests to completion. The front end is an in-order initiator that keeps at most `outstanding`
// requests in flight (0, which `trnsim hbm --outstanding max` gives: enough to fill every request queue,
// pseudo-channels x read_queue_depth): request i is
// presented at the earliest cycle >= its time and >= the presentation of request i-1 at which fewer than
// `outstanding` requests are in flight. Latency is measured from presentation to the last data beat.
hbm_run_result run_hbm_requests(const hbm::hbm_dram_config& cfg, const std::vector<hbm_request>& reqs,
                                uint64_t outstanding = 0);

// A memspec preset ("hbm3" -> <config_dir>/memspecs/hbm3.json) or a JSON file path.
hbm::memspec load_memspec(const std::string& name_or_file, const std::string& config_dir);
std::string default_hbm_config_dir();

std::string format_hbm_result(const hbm::hbm_dram_config& cfg, const hbm_run_result& r);

} // namespace trnsim::tb

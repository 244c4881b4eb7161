// Simulations in forked children: SystemC elaborates once per process, so a command that needs several simulations
// (train's operations, the platform run's "alone" runs) runs each in a child with a fresh kernel.
#pragma once
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

namespace trnsim::tb {

// Runs every job in a forked child through the process pool (testbench/tools/sweep), `parallel` at a time; a child
// returns its JSON through a temporary file, with "rss_kib" (its peak RSS) added. A job that throws returns
// {"error": what}; a child that dies is reported by how it ended ({"error": ...}). `quiet`: no progress line.
std::vector<nlohmann::json> run_forked(const std::vector<std::function<nlohmann::json()>>& jobs, unsigned parallel,
                                       bool quiet);

} // namespace trnsim::tb

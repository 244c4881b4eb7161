// trnsim run --platform NAME: a GEMM on every chosen full chip of a server or cluster preset (SPMD), every chip's
// result checked, a report per chip and for the platform (testbench/workloads/gemm/platform_gemm.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "apps/args.h"
#include "platforms/config/platform_config.h"
#include "testbench/workloads/gemm/gemm.h"
#include "testbench/workloads/gemm/platform_gemm.h"

namespace trnsim::app {

// The GEMM of --m --k --n --dtype --seed (run's defaults), with the RTL back end's limits checked.
tb::gemm_spec gemm_spec_from(const args& a, const platform::platform_config& cfg);
// Refuses a functional GEMM whose host memory (on `chips` chips) exceeds the limit (check_host_memory).
// `more`: bytes of host memory something else in the run takes (a concurrent collective's data).
void check_gemm_host_memory(const args& a, const platform::platform_config& cfg, const tb::gemm_spec& g, uint32_t chips,
                            double more = 0);
// --chips LIST: "all" or chip ids ("0,3,5"), ascending, each once and < chips; a usage error naming the option.
std::vector<uint32_t> parse_chip_list(const std::string& text, uint32_t chips);
// --concurrent OP:SIZE[:ALGO[:DTYPE]] (ALGO ring, DTYPE fp32 by default); a usage error naming the option.
tb::concurrent_collective parse_concurrent(const std::string& text);
int cmd_run_platform(const args& a);

} // namespace trnsim::app

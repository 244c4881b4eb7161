// trnsim run --workload attention|mlp|decoder|adam: the transformer workloads (testbench/workloads/transformer/).
#pragma once
#include <string>
#include <vector>

#include "apps/args.h"
#include "platforms/config/platform_config.h"
#include "testbench/sim_run.h"

namespace trnsim::app {

bool is_transformer_workload(const std::string& workload);
// The options of the transformer workloads (attention, mlp, decoder, adam), refused by the others.
extern const std::vector<std::string> TRANSFORMER_OPTIONS;
extern const char* const TRANSFORMER_USAGE;  // their part of trnsim run's usage (the options are in its synopsis)
// Runs the workload, prints the report (and --stats JSON); returns the exit status (0 pass, 1 failed check).
// `sim` holds run's simulation options (--wall-limit, --stall-limit-us, --quiet).
int cmd_transformer(const args& a, const platform::platform_config& cfg, const std::string& workload,
                    const tb::sim_options& sim);

} // namespace trnsim::app

// trnsim hbm: drives the plain-C++ HBM DRAM model from a trace or a synthetic pattern (testbench/tools/hbm_trace.h).
#pragma once
#include "apps/args.h"

namespace trnsim::app {

extern const char* HBM_USAGE;
extern const option_set HBM_OPTIONS;
// Prints the report (and every statistic with --stats); throws usage_error for bad options. Exit status 0.
int cmd_hbm(const args& a);

} // namespace trnsim::app

// trnsim sweep: design-space sweeps run as parallel trnsim processes (or as Slurm / GNU parallel tasks).
#pragma once
#include "apps/args.h"

namespace trnsim::app {

extern const char* SWEEP_USAGE;
extern const option_set SWEEP_OPTIONS;
// Returns the process exit status: 0 all points ok, 1 some failed (or missing on --collect), 130 interrupted.
int cmd_sweep(const args& a);

} // namespace trnsim::app

// What run_to_completion needs to know about a single chip: done, what is stuck (for deadlock reports) and how
// much work has completed (for the stall watchdog); plus when the chip's last completion happened.
#pragma once
#include <systemc>

#include "platforms/single_chip/chip.h"
#include "testbench/sim_run.h"

namespace trnsim::tb {

sim_probe make_chip_probe(platform::chip& chip);
sc_core::sc_time last_completion(platform::chip& chip);

} // namespace trnsim::tb

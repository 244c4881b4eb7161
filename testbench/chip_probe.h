// What run_to_completion needs to know about a single chip (or a set of cores): done, what is stuck (for deadlock reports) and how
// much work has completed (for the stall watchdog); plus when the chip's last completion happened.
#pragma once
#include <vector>

#include <systemc>

#include "platforms/single_chip/chip.h"
#include "testbench/sim_run.h"

namespace trnsim::tb {

sim_probe make_chip_probe(platform::chip& chip);
sc_core::sc_time last_completion(platform::chip& chip);
// The same for any set of cores (of one chip or of several), which must outlive the probe.
sim_probe make_cores_probe(std::vector<core::neuron_core*> cores);
sc_core::sc_time last_completion(const std::vector<core::neuron_core*>& cores);

} // namespace trnsim::tb

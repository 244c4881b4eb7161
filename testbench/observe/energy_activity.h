// Reads one chip's activity for the energy model out of its flattened statistics (after a run).
#pragma once
#include <map>
#include <string>

#include "models/energy/energy_model.h"
#include "platforms/config/platform_config.h"

namespace trnsim::tb {

// `prefix` is the chip's stats group name ("chip0"); `seconds` the elapsed simulated time of the run.
// Throws std::out_of_range naming a statistic the chip should have but the map lacks.
energy::activity chip_activity(const std::map<std::string, double>& stats, const std::string& prefix,
                               const platform::chip_config& chip, double seconds);

} // namespace trnsim::tb

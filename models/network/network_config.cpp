#include "models/network/network_config.h"

#include <cmath>

namespace trnsim::network {

std::string network_config::check() const {
    std::string e = nic.check();
    if (!e.empty()) return "nic: " + e;
    if (!(switch_latency_ns >= 0)) return "switch_latency_ns must be >= 0";
    if (servers_per_leaf == 0) return "servers_per_leaf must be > 0";
    if (!(oversubscription >= 1)) return "oversubscription must be >= 1";
    return "";
}

}  // namespace trnsim::network

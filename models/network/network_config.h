// Parameters of the switched network (switched_network.h), plain C++.
#pragma once
#include <cstdint>
#include <string>

#include "models/link/link_timing.h"

namespace trnsim::network {

struct network_config {
    link::link_config nic{25, 6000, 8192, 64, 64, 0};  // EFA 200 Gbps = 25 GB/s per chip
    double switch_latency_ns = 600;
    uint32_t servers_per_leaf = 1;
    double oversubscription = 1.0;  // leaf downlink bandwidth / leaf uplink bandwidth (>= 1)
    // Empty if valid, else what is wrong.
    std::string check() const;
};

}  // namespace trnsim::network

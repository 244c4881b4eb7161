// Configuration of multi-chip platforms (docs/multichip.md): a server of N chips joined by links as a ring, 2D or
// 3D torus ("platform": "server"), or M such servers behind the switched network ("platform": "cluster").
//
//   "server":  { "topology": "ring" | "torus", "dims": [x, y, z],
//                "link": { gbps, latency_ns, payload_bytes, overhead_bytes, credits, credit_return_ns },
//                "link_x" / "link_y" / "link_z": the same keys, overriding "link" for that dimension's links }
//   "cluster": { "servers": M, "network": { "nic": {link keys}, switch_latency_ns, servers_per_leaf,
//                oversubscription } }
//   "chips":   { "model": "light" | "full", "full": [chip ids using the full chip model], "light": { light chip keys } }
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/chip_light/light_chip_params.h"
#include "models/collective/schedule.h"
#include "models/link/link_timing.h"
#include "models/network/network_params.h"
#include "platforms/config/config_node.h"

namespace trnsim::platform {

enum class platform_kind : uint8_t { single_chip, server, cluster };

struct multichip_config {
    platform_kind kind = platform_kind::single_chip;
    collective::topology topo;                  // the chips and their numbering
    std::array<link::link_params, 3> links;     // per dimension (x, y, z)
    network::network_params network;            // clusters only
    chip_light::light_chip_params light;
    std::vector<uint8_t> full_chip;             // per chip: 1 = the full chip model (platforms/single_chip)

    uint32_t n_chips = 1;
    uint32_t chips() const { return n_chips; }
};

// Reads "server", "cluster" and "chips" of the platform document (root) for a platform of `kind`; a single-chip
// platform must not have them. Errors name the key path.
multichip_config parse_multichip(const config::node& root, platform_kind kind, bool functional);

}  // namespace trnsim::platform

// Configuration of multi-chip platforms (docs/multichip.md): a server of N chips joined by links as a ring, 2D or
// 3D torus ("platform": "server"), or M such servers behind the switched network ("platform": "cluster").
//
//   "server":  { "topology": "ring" | "torus", "dims": [x, y, z],
//                "link": { gbps, latency_ns, payload_bytes, overhead_bytes, credits, credit_return_ns },
//                "link_x" / "link_y" / "link_z": the same keys, overriding "link" for that dimension's links,
//                "faults": { "links": [ { "from": A, "to": B, "state": "down" | "degraded",
//                                         "bandwidth_factor": 0 < f < 1, "extra_latency_ns": L >= 0 } ] } }
//              a fault hits one link direction (A -> B, neighbours of one server; docs/RELIABILITY.md "Link faults")
//   "cluster": { "servers": M, "network": { "nic": {link keys}, switch_latency_ns, servers_per_leaf,
//                oversubscription } }
//   "chips":   { "model": "light" | "full", "full": [chip ids using the full chip model], "light": { light chip keys } }
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/chip_light/light_chip_config.h"
#include "models/collective/schedule.h"
#include "models/link/link_timing.h"
#include "models/link/torus_routing.h"
#include "models/network/network_config.h"
#include "tlm/config/config_node.h"

namespace trnsim::platform {

enum class platform_kind : uint8_t { single_chip, server, cluster };

// A fault of one link direction: down (carries nothing; routing and the ring algorithms avoid it) or degraded (its
// raw bandwidth times bandwidth_factor, its latency plus extra_latency_ns). A value not given leaves that part of
// the link unchanged; add_link_fault checks them all (one rule for every front end).
struct link_fault {
    uint32_t from = 0, to = 0;   // global chip ids
    bool down = false;
    std::optional<double> bandwidth_factor;
    std::optional<double> extra_latency_ns;
    double factor() const { return bandwidth_factor.value_or(1); }
    double extra_ns() const { return extra_latency_ns.value_or(0); }
    // The link parameters of a degraded direction.
    link::link_config apply(link::link_config p) const {
        p.gbps *= factor();
        p.latency_ns += extra_ns();
        return p;
    }
};

// Where a link fault was written, so that add_link_fault's errors name it: the fault itself (`where`) and each
// value, named `where + sep + name`. The defaults are the config's (where = "server.faults.links[0]"); the command
// line gives e.g. where = "--link-degraded 0-1:1.5", sep = " ", names FACTOR / EXTRA_NS, down = "--link-down".
struct fault_origin {
    std::string where;
    std::string sep = ".";
    std::string factor = "bandwidth_factor", extra = "extra_latency_ns";
    std::string down = "\"state\": \"down\"";   // how a down link is written
    std::string at(const std::string& name) const { return where + sep + name; }
};

struct multichip_config {
    platform_kind kind = platform_kind::single_chip;
    collective::topology topo;                  // the chips and their numbering
    std::array<link::link_config, 3> links;     // per dimension (x, y, z)
    network::network_config network;            // clusters only
    chip_light::light_chip_config light;
    std::vector<uint8_t> full_chip;             // per chip: 1 = the full chip model (platforms/single_chip)
    bool any_full() const {
        for (uint8_t f : full_chip)
            if (f) return true;
        return false;
    }
    bool all_full() const {
        for (uint8_t f : full_chip)
            if (!f) return false;
        return true;
    }
    std::vector<link_fault> faults;             // see add_link_fault; down ones are also in topo.down

    // The fault of link direction from -> to, or null.
    const link_fault* fault(uint32_t from, uint32_t to) const {
        for (const auto& f : faults)
            if (f.from == from && f.to == to) return &f;
        return nullptr;
    }

    uint32_t n_chips = 1;
    uint32_t chips() const { return n_chips; }
};

// Reads "server", "cluster" and "chips" of the platform document (root) for a platform of `kind`; a single-chip
// platform must not have them. Errors name the key path.
multichip_config parse_multichip(const config::node& root, platform_kind kind, bool functional);

// Adds a link fault after checking it (the only place the rules live): both chips exist, are neighbours of one
// server (a link joins them), the direction has no fault yet; a down link has neither value; a degraded one has a
// bandwidth_factor 0 < f < 1 if given, an extra_latency_ns 0 .. 1e9 if given, and changes at least one of them.
// Throws config::config_error starting with the origin's key path or command-line option, naming what is wrong.
void add_link_fault(multichip_config& c, const link_fault& f, const fault_origin& o);

// The server-local link port of chip `from` that leads to `to` (both global ids), or -1 if no link joins them.
int link_port(const multichip_config& c, uint32_t from, uint32_t to);

// Server `index`'s torus with its down link directions (server-local chip numbers), as its routers route.
link::torus_shape server_shape(const multichip_config& c, uint32_t index);

// Empty if every copy step of `s` between two chips of one server has a route that avoids the down links, else
// the report of the first that has none, naming the copy, the down link and the algorithm.
std::string unroutable_copy(const multichip_config& c, const collective::schedule& s);

}  // namespace trnsim::platform

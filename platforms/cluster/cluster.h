// A multi-chip platform built from config: one server ("platform": "server") or several servers behind the
// switched network ("platform": "cluster"; chip i's NIC is the network's i-th port). Wiring only.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "models/chip_light/light_chip_if.h"
#include "models/network/switched_network.h"
#include "platforms/config/platform_config.h"
#include "platforms/server/server.h"

namespace trnsim::platform {

class multichip_platform : public sc_core::sc_module {
public:
    // cfg must outlive the platform; throws std::invalid_argument for a single-chip config.
    multichip_platform(sc_core::sc_module_name name, const platform_config& cfg);

    uint32_t chips() const { return m_cfg.multichip.chips(); }
    const collective::topology& topology() const { return m_cfg.multichip.topo; }
    // Chip `id` as a light chip (throws std::invalid_argument naming it if it is a full chip), or as a full chip
    // (null if it is a light one).
    chip_light::light_chip_if& chip(uint32_t id);
    platform::chip* full_chip(uint32_t id);
    bool any_full() const { return m_cfg.multichip.any_full(); }
    bool all_full() const { return m_cfg.multichip.all_full(); }
    std::vector<std::unique_ptr<server>> servers;
    std::unique_ptr<network::switched_network> net;  // clusters only

    // Utilisation of every link direction and network port over `elapsed_ps`.
    struct utilisation {
        std::string kind;       // "link_x", "link_y", "link_z", "nic_tx", "nic_rx", "leaf_up", "leaf_down"
        size_t count = 0;       // resources of that kind
        double max = 0, avg = 0;  // busy / elapsed
        uint64_t bytes = 0;
        double wait_ns = 0;     // total queueing
    };
    std::vector<utilisation> utilisation_summary(uint64_t elapsed_ps) const;
    // The kind of a server link of dimension `dim` ("link_x", "link_y", "link_z"; "link" out of range): the name
    // utilisation_summary, the timelines and the overlap figures give its directions.
    static std::string link_kind(int dim) { return dim >= 0 && dim < 3 ? std::string("link_") + "xyz"[dim] : "link"; }
    stats::group& stats() { return m_stats; }

private:
    const platform_config& m_cfg;
    stats::group m_stats;
};

}  // namespace trnsim::platform

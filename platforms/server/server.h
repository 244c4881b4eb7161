// One server: the chips of a ring / 2D / 3D torus and the links between them, from multichip_config. Wiring only.
//
// Each chip's fabric router has up to six link ports (models/link/torus_routing.h): port 2d goes + in dimension d,
// port 2d+1 goes -. In a dimension of size n > 2 the link between chip c and its + neighbour carries c's port 2d
// (a2b) and the neighbour's port 2d+1 (b2a); in a dimension of size 2 there is one link, used by both chips' + port;
// a dimension of size 1 has none. Link parameters come per dimension (server.link_x / link_y / link_z).
#pragma once
#include <memory>
#include <vector>

#include <systemc>

#include "models/chip_light/light_chip.h"
#include "models/link/link.h"
#include "platforms/config/platform_config.h"
#include "platforms/server/multichip_config.h"
#include "platforms/single_chip/chip.h"

namespace trnsim::platform {

class server : public sc_core::sc_module {
public:
    struct link_info {
        uint32_t a, b;   // global chip ids: a2b goes a -> b, b2a b -> a
        int dim;
        std::unique_ptr<link::link> l;
    };
    // A member chip: the light chip model or the full chip (chips.model / chips.full), one of the two.
    struct member {
        std::unique_ptr<chip_light::light_chip> light;
        std::unique_ptr<chip> full;
        link::fabric_router& router() { return full ? *full->fabric : light->router; }
        stats::group& stats() { return full ? full->stats() : light->stats(); }
    };
    // Server `index` of the platform (its chips are index * per .. index * per + per - 1). Full members are built
    // from `full_chip` (the platform's chip section).
    server(sc_core::sc_module_name name, const multichip_config& cfg, const chip_config& full_chip, uint32_t index);

    uint32_t first_chip() const { return m_first; }
    const link::torus_shape& shape() const { return m_shape; }
    std::vector<member> chips;
    std::vector<link_info> links;
    stats::group& stats() { return m_stats; }

private:
    uint32_t m_first;
    link::torus_shape m_shape;
    stats::group m_stats;
};

}  // namespace trnsim::platform

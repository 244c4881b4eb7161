#include "platforms/server/server.h"

#include <string>

namespace trnsim::platform {

server::server(sc_core::sc_module_name name, const multichip_config& cfg, const chip_config& full_chip,
               uint32_t index)
    : sc_module(name), m_first(index * cfg.topo.chips_per_server), m_stats(basename()) {
    m_shape = server_shape(cfg, index);
    uint32_t per = m_shape.chips();
    for (uint32_t i = 0; i < per; ++i) {
        std::string n = "chip" + std::to_string(m_first + i);
        member m;
        if (cfg.full_chip[m_first + i]) {
            const fabric_place place{m_first + i, m_first, cfg.chips(), m_shape};
            m.full = std::make_unique<chip>(n.c_str(), full_chip, &place);
        } else {
            m.light = std::make_unique<chip_light::light_chip>(n.c_str(), cfg.light, m_first + i, m_first, m_shape,
                                                               cfg.chips());
        }
        m_stats.add(m.stats());
        chips.push_back(std::move(m));
    }
    for (uint32_t i = 0; i < per; ++i)
        for (int d = 0; d < 3; ++d) {
            uint32_t n = m_shape.dims[size_t(d)];
            if (n < 2) continue;
            if (n == 2 && m_shape.coords(i)[size_t(d)] == 1) continue;  // one link per pair
            uint32_t j = m_shape.neighbour(i, 2 * d);
            std::string ln = "link_" + std::to_string(m_first + i) + "_" + std::to_string(m_first + j);
            // A degraded direction gets its own parameters; a down one is left alone (routing never uses it).
            auto params = [&](uint32_t from, uint32_t to) {
                const link_fault* f = cfg.fault(from, to);
                return f && !f->down ? f->apply(cfg.links[size_t(d)]) : cfg.links[size_t(d)];
            };
            link_info li{m_first + i, m_first + j, d,
                         std::make_unique<link::link>(ln.c_str(), params(m_first + i, m_first + j),
                                                      params(m_first + j, m_first + i))};
            auto& a = chips[i].router();
            auto& b = chips[j].router();
            a.bind_port(2 * d, li.l->a2b.in);
            li.l->a2b.out.bind(b.in);
            b.bind_port(n == 2 ? 2 * d : 2 * d + 1, li.l->b2a.in);
            li.l->b2a.out.bind(a.in);
            m_stats.add(li.l->stats());
            links.push_back(std::move(li));
        }
}

}  // namespace trnsim::platform

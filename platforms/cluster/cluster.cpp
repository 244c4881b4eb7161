#include "platforms/cluster/cluster.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace trnsim::platform {

multichip_platform::multichip_platform(sc_core::sc_module_name name, const platform_config& cfg)
    : sc_module(name), m_cfg(cfg), m_stats(basename()) {
    const auto& mc = cfg.multichip;
    if (mc.kind == platform_kind::single_chip)
        throw std::invalid_argument("platform '" + cfg.preset + "' is a single chip (\"platform\": \"single_chip\"), "
                                    "not a server or cluster");
    std::string e;
    for (int d = 0; d < 3; ++d)
        if (!(e = mc.links[size_t(d)].check()).empty())
            throw std::invalid_argument(std::string("server.link_") + "xyz"[d] + ": " + e);
    if (!(e = mc.light.check()).empty()) throw std::invalid_argument("chips.light: " + e);
    if (mc.kind == platform_kind::cluster && !(e = mc.network.check()).empty())
        throw std::invalid_argument("cluster.network: " + e);
    for (uint32_t s = 0; s < mc.topo.servers; ++s) {
        std::string n = "server" + std::to_string(s);
        servers.push_back(std::make_unique<server>(n.c_str(), mc, cfg.chip, s));
        m_stats.add(servers.back()->stats());
    }
    if (mc.kind == platform_kind::cluster) {
        net = std::make_unique<network::switched_network>("network", mc.network, mc.topo.servers,
                                                          mc.topo.chips_per_server);
        // Chip order: the network's i-th in/out binding is chip i.
        for (auto& s : servers)
            for (auto& c : s->chips) {
                c.router().bind_nic(net->in);
                net->out.bind(c.router().in);
            }
        m_stats.add(net->stats());
    }
}

chip_light::light_chip_if& multichip_platform::chip(uint32_t id) {
    uint32_t per = m_cfg.multichip.topo.chips_per_server;
    if (id >= chips()) throw std::out_of_range("chip " + std::to_string(id) + " of " + std::to_string(chips()));
    auto& m = servers[id / per]->chips[id % per];
    if (m.full)
        throw std::invalid_argument("chip " + std::to_string(id) + " is a full chip (chips.model / chips.full): it runs "
                                    "instruction streams, not the light chip's copy and reduce calls");
    return *m.light;
}

platform::chip* multichip_platform::full_chip(uint32_t id) {
    uint32_t per = m_cfg.multichip.topo.chips_per_server;
    if (id >= chips()) throw std::out_of_range("chip " + std::to_string(id) + " of " + std::to_string(chips()));
    return servers[id / per]->chips[id % per].full.get();
}



std::vector<multichip_platform::utilisation> multichip_platform::utilisation_summary(uint64_t elapsed_ps) const {
    std::map<std::string, utilisation> m;
    auto add = [&](const std::string& kind, const link::direction_timeline& t) {
        auto& u = m[kind];
        u.kind = kind;
        double x = elapsed_ps ? double(t.busy_ps()) / double(elapsed_ps) : 0.0;
        u.max = std::max(u.max, x);
        u.avg += x;
        u.bytes += t.bytes();
        u.wait_ns += double(t.wait_ps()) / 1000.0;
        ++u.count;
    };
    for (const auto& s : servers)
        for (const auto& l : s->links) {
            const std::string k = link_kind(l.dim);
            add(k, l.l->a2b.timeline());
            add(k, l.l->b2a.timeline());
        }
    if (net) {
        for (const auto& t : net->tx()) add("nic_tx", t);
        for (const auto& t : net->rx()) add("nic_rx", t);
        if (net->leaves() > 1) {
            for (const auto& t : net->up()) add("leaf_up", t);
            for (const auto& t : net->down()) add("leaf_down", t);
        }
    }
    std::vector<utilisation> out;
    for (const char* k : {"link_x", "link_y", "link_z", "nic_tx", "nic_rx", "leaf_up", "leaf_down"}) {
        auto it = m.find(k);
        if (it == m.end()) continue;
        it->second.avg /= double(it->second.count);
        out.push_back(it->second);
    }
    return out;
}

}  // namespace trnsim::platform

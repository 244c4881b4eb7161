#include "platforms/single_chip/chip.h"

#include <algorithm>
#include <stdexcept>

#include "models/link/global_address.h"
#include "platforms/single_chip/factories.h"
#include "tlm/transport.h"

namespace trnsim::platform {

chip::chip(sc_core::sc_module_name name, const chip_config& cfg, const fabric_place* place)
    : sc_module(name), noc("noc", sc_core::sc_time(cfg.noc.hop_latency_ns, sc_core::SC_NS)), host("host"), m_cfg(cfg),
      m_te_untraced(cfg.core.te), m_pool(cfg.compute_threads), m_stats(basename()) {
    m_te_untraced.wave_file.clear();
    m_hbm = make_hbm("hbm", cfg.hbm);
    size_t port = 0;
    noc.map(cfg.hbm_base, cfg.hbm.capacity_bytes, port, "hbm");
    noc.out.bind(m_hbm->in);
    if (cfg.noc.hbm_port_gbps > 0) noc.limit_port(port, cfg.noc.hbm_port_gbps);
    for (uint32_t i = 0; i < cfg.cores; ++i) {
        std::string cn = "core" + std::to_string(i);
        const auto& wc = cfg.wave_cores;
        const bool traced = wc.empty() || std::find(wc.begin(), wc.end(), i) != wc.end();
        auto be = make_te_backend(cn + "_te_backend", traced ? cfg.core.te : m_te_untraced, &m_pool);
        auto faults = tlmx::faults_under(cfg.faults, cn);
        for (const auto& f : cfg.faults)
            if (f.target == "dma") faults.push_back(f);  // every engine of every core
        cores.push_back(std::make_unique<core::neuron_core>(cn.c_str(), cfg.core, *be.backend, faults));
        m_backends.push_back(std::move(be.module));
        ++port;
        noc.map(core_window(i), cfg.core.window, port, cn);
        noc.out.bind(cores.back()->local.in);
        if (cfg.noc.core_port_gbps > 0) noc.limit_port(port, cfg.noc.core_port_gbps);
        for (auto& d : cores.back()->dma) d->out.bind(noc.in);
    }
    if (place) {
        fabric = std::make_unique<link::fabric_router>("fabric", place->chip, place->first_chip, place->shape,
                                                       place->total_chips);
        // [2^63, 2^64 - 1): every chip id (the last byte of the top chip id's map is the one address left out).
        noc.map(link::GLOBAL_BIT, ~link::GLOBAL_BIT, ++port, "fabric");
        noc.out.bind(fabric->in);
        fabric->bind_local(noc.in);
    }
    host.bind(noc.in);
    m_stats.add(noc.stats());
    if (fabric) m_stats.add(fabric->stats());
    m_stats.add(m_hbm->stats());
    for (auto& c : cores) m_stats.add(c->stats());
}

chip::~chip() = default;

void chip::host_write(uint64_t addr, const void* data, uint64_t len) {
    if (tlmx::debug_transport(host, tlm::TLM_WRITE_COMMAND, addr, const_cast<void*>(data), len) != len)
        throw std::out_of_range(std::string(name()) + ".host: write of " + std::to_string(len) + " bytes at " +
                                tlmx::hex(addr) + " is not mapped" + (noc.last_error().empty() ? "" : " (" + noc.last_error() + ")"));
}

void chip::host_read(uint64_t addr, void* data, uint64_t len) {
    if (tlmx::debug_transport(host, tlm::TLM_READ_COMMAND, addr, data, len) != len)
        throw std::out_of_range(std::string(name()) + ".host: read of " + std::to_string(len) + " bytes at " +
                                tlmx::hex(addr) + " is not mapped");
}

} // namespace trnsim::platform

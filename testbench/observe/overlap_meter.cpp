#include "testbench/observe/overlap_meter.h"

#include <algorithm>
#include <map>

#include "tlm/time.h"

namespace trnsim::tb {

void overlap_meter::attach(platform::multichip_platform& p) {
    for (uint32_t c = 0; c < p.chips(); ++c) {
        platform::chip* chip = p.full_chip(c);
        if (!chip) continue;
        ++m_chips;
        for (auto& core : chip->cores)
            for (auto& e : core->dma) {
                ++m_engines;
                e->observe([this](const dma::dma_event& ev) {
                    const uint64_t sub = tlmx::to_ps(ev.submitted), begin = tlmx::to_ps(ev.issue_begin),
                                   done = tlmx::to_ps(ev.done), elig = tlmx::to_ps(ev.eligible);
                    m_dma.add(begin, done, double(ev.d->total_bytes()));
                    m_queued.add(sub, done, double(done - sub) / 1000.0);
                    m_wait.add(begin, begin, double(begin - std::min(begin, elig)) / 1000.0);
                    m_started.add(begin, begin, 1.0);
                });
            }
        chip->hbm().observe([this](const hbm::hbm_event& ev) { m_hbm.add(ev.begin_ps, ev.end_ps, double(ev.bytes)); });
    }
    for (auto& s : p.servers)
        for (auto& l : s->links) {
            if (!p.full_chip(l.a) || !p.full_chip(l.b)) continue;
            for (link::link_direction* d : {&l.l->a2b, &l.l->b2a}) {
                m_links.push_back(std::make_unique<direction>(direction{platform::multichip_platform::link_kind(l.dim),
                                                                        tlmx::time_bins()}));
                direction* dir = m_links.back().get();
                d->observe([dir](const link::link_event& ev) {
                    dir->busy.add(ev.begin_ps, ev.end_ps, double(ev.end_ps - ev.begin_ps));
                });
            }
        }
}

overlap_meter::figures overlap_meter::until(uint64_t t_ps) const {
    figures f;
    f.window_ns = double(t_ps) / 1000.0;
    if (t_ps == 0) return f;
    const double chips = std::max<uint32_t>(m_chips, 1), ns = f.window_ns;
    f.hbm_gbps = m_hbm.until(t_ps) / ns / chips;
    f.dma_gbps = m_dma.until(t_ps) / ns / chips;
    f.dma_queue_depth = m_engines ? m_queued.until(t_ps) / ns / m_engines : 0.0;
    const double started = m_started.until(t_ps);
    f.dma_wait_ns = started > 0 ? m_wait.until(t_ps) / started : 0.0;
    std::map<std::string, platform::multichip_platform::utilisation> by_kind;
    for (const auto& d : m_links) {
        auto& u = by_kind[d->kind];
        u.kind = d->kind;
        const double x = d->busy.until(t_ps) / double(t_ps);
        u.max = std::max(u.max, x);
        u.avg += x;
        ++u.count;
    }
    for (auto& [k, u] : by_kind) {
        u.avg /= double(u.count);
        f.links.push_back(u);
    }
    return f;
}

}  // namespace trnsim::tb

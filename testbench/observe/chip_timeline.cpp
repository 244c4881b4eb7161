#include "testbench/observe/chip_timeline.h"

#include "models/vector_engine/ve_kernels.h"

#include <map>
#include <memory>

#include "tlm/time.h"

namespace trnsim::tb {

void chip_timeline::attach(platform::chip& chip, uint32_t pid) {
    using tlmx::to_ps;
    const auto& cfg = chip.config();
    m_w.process(pid, std::string(chip.name()) + " (" + cfg.name + ")");
    for (uint32_t c = 0; c < cfg.cores; ++c) {
        auto& core = *chip.cores[c];
        const std::string cn = "core" + std::to_string(c);
        const size_t te = m_w.track(pid, cn + ".te");
        const size_t weights = m_w.track(pid, cn + ".te.weights");
        core.te().observe([this, te, weights](const te::matmul_event& e) {
            const auto& a = *e.args;
            tlmx::trace_args args;
            args.num("tile", a.tag).num("id", e.id).str("dtype", numerics::name_of(a.in_type));
            args.num("k", uint64_t(a.k)).num("m", uint64_t(a.m)).num("n", uint64_t(a.n));
            args.hex("s_addr", a.s_addr).hex("x_addr", a.x_addr).hex("y_addr", a.y_addr);
            args.num("accumulate", uint64_t(a.accumulate));
            args.num("done_ns", e.done.to_seconds() * 1e9).num("retired_ns", e.retired.to_seconds() * 1e9);
            m_w.span(te, "MATMUL", "te", to_ps(e.stream_start), to_ps(e.stream_end), args);
            tlmx::trace_args la;
            la.num("tile", a.tag).num("id", e.id).num("rows", uint64_t(a.k)).hex("s_addr", a.s_addr);
            m_w.span(weights, "LoadStationary", "te", to_ps(e.load_start), to_ps(e.load_end), la);
        });
        // Queue tracks are declared on first use (the program, loaded later, decides how many there are).
        auto queue_tracks = std::make_shared<std::vector<size_t>>();
        const int64_t queue_order = m_w.order_of(weights) + 1;
        core.observe([this, pid, cn, queue_tracks, queue_order](const core::queue_event& e) {
            while (queue_tracks->size() <= e.queue) queue_tracks->push_back(SIZE_MAX);
            size_t& t = (*queue_tracks)[e.queue];
            if (t == SIZE_MAX) t = m_w.track(pid, cn + "." + *e.queue_name + (e.queue == 0 ? ".queue" : ""),
                                          queue_order + int64_t(e.queue));
            tlmx::trace_args args;
            args.num("index", uint64_t(e.index)).num("signal", double(e.in->signal));
            std::string name = "MATMUL";
            if (e.in->op == core::opcode::dma) {
                const auto& d = e.in->dma;
                args.num("bytes", d.total_bytes()).hex("src", d.src).hex("dst", d.dst);
                args.num("rows", uint64_t(d.rows)).num("planes", uint64_t(d.planes));
                name = "DMA";
            } else if (e.in->op == core::opcode::vector || e.in->op == core::opcode::scalar) {
                const auto& v = e.in->vec;
                args.num("parts", uint64_t(v.parts)).num("free", uint64_t(v.free)).num("tag", v.tag);
                name = std::string(e.in->op == core::opcode::vector ? "VECTOR " : "SCALAR ") + ve::name_of(v.op);
            } else {
                args.num("tile", e.in->mm.tag);
            }
            m_w.span(t, name, "queue", to_ps(e.issued), to_ps(e.completed), args);
        });
        if (m_opt.dma_engines)
            for (size_t i = 0; i < core.dma.size(); ++i) {
                const size_t t = m_w.track(pid, cn + ".dma" + std::to_string(i));
                core.dma[i]->observe([this, t](const dma::dma_event& e) {
                    tlmx::trace_args args;
                    args.num("bytes", e.d->total_bytes()).hex("src", e.d->src).hex("dst", e.d->dst);
                    args.num("rows", uint64_t(e.d->rows)).num("bursts", e.bursts);
                    args.num("submitted_ns", e.submitted.to_seconds() * 1e9).num("landed_ns", e.done.to_seconds() * 1e9);
                    m_w.span(t, "descriptor", "dma", to_ps(e.issue_begin), to_ps(e.issue_end), args);
                });
            }
    }
    if (m_opt.noc) attach_router(chip.noc, pid, "noc");
    if (m_opt.hbm_channels) {
        auto& hbm = chip.hbm();
        auto tracks = std::make_shared<std::vector<size_t>>();
        for (uint32_t ch = 0; ch < hbm.channels(); ++ch) tracks->push_back(m_w.track(pid, "hbm.ch" + std::to_string(ch)));
        hbm.observe([this, tracks](const hbm::hbm_event& e) {
            tlmx::trace_args args;
            args.hex("addr", e.addr).num("bytes", e.bytes);
            m_w.span((*tracks)[e.channel], e.read ? "read" : "write", "hbm", e.begin_ps, e.end_ps, args);
        });
    }
}

void chip_timeline::attach_link(link::link_direction& d, uint32_t pid, const std::string& name) {
    const size_t t = m_w.track(pid, name);
    d.observe([this, t](const link::link_event& e) {
        tlmx::trace_args args;
        args.hex("addr", e.address).num("bytes", e.bytes);
        m_w.span(t, e.write ? "write" : "read", "link", e.begin_ps, e.end_ps, args);
    });
}

void chip_timeline::attach_router(tlmx::router& r, uint32_t pid, const std::string& prefix) {
    auto tracks = std::make_shared<std::map<const tlmx::address_range*, size_t>>();
    r.observe([this, pid, prefix, tracks](const tlmx::tx_event& e) {
        auto it = tracks->find(e.target);
        if (it == tracks->end())
            it = tracks->emplace(e.target, m_w.track(pid, prefix + "->" + (e.target ? e.target->name : "unmapped"))).first;
        tlmx::trace_args args;
        args.hex("addr", e.gp->get_address()).num("bytes", uint64_t(e.gp->get_data_length()));
        m_w.span(it->second, e.gp->is_read() ? "read" : "write", "noc", tlmx::to_ps(e.begin), tlmx::to_ps(e.end), args);
    });
}

} // namespace trnsim::tb

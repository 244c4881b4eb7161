#include "models/dma/dma_engine.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "tlm/ext_error.h"
#include "tlm/time.h"
#include "tlm/transport.h"

namespace trnsim::dma {

dma_engine::dma_engine(sc_core::sc_module_name name, const dma_config& cfg, const std::vector<tlmx::fault_spec>& faults)
    : sc_module(name), out("out"), m_cfg(cfg), m_rank(tlmx::scheduler::next_rank()), m_port(cfg.engine_gbps, 0),
      m_stats(basename()) {
    for (const auto& f : faults) m_faults.emplace_back(f);
    start_thread_if_blocking();  // the memories are built before the cores
    if (cfg.signals) m_waves = std::make_unique<waves>();
    for (auto* s : {static_cast<stats::stat*>(&m_descriptors), static_cast<stats::stat*>(&m_bursts),
                    static_cast<stats::stat*>(&m_bytes), static_cast<stats::stat*>(&m_busy),
                    static_cast<stats::stat*>(&m_injected), static_cast<stats::stat*>(&m_queued_ns),
                    static_cast<stats::stat*>(&m_wait_ns)})
        m_stats.add(*s);
}

void dma_engine::submit(const dma_descriptor& d, std::function<void()> on_done, std::shared_ptr<checksum_state> check) {
    if (d.reduce && m_cfg.max_burst % numerics::size_of(*d.reduce)) {
        const std::string msg = "an accumulating copy of " + std::string(numerics::name_of(*d.reduce)) +
                                " elements needs a burst size (chip.core.dma.max_burst " +
                                std::to_string(m_cfg.max_burst) + ") of whole elements; descriptor " + to_string(d);
        SC_REPORT_ERROR(name(), msg.c_str());
        return;
    }
    job j;
    j.d = d;
    j.on_done = std::move(on_done);
    j.submitted = sc_core::sc_time_stamp();
    j.eligible_ps = tlmx::now_ps() + tlmx::to_ps(sc_core::sc_time(m_cfg.descriptor_latency_ns, sc_core::SC_NS));
    if (m_cfg.checksum && !d.reduce) j.check = std::move(check);
    m_jobs.push_back(std::move(j));
    if (d.control) m_controls.push_back(std::prev(m_jobs.end()));
    wake_at(m_jobs.back().eligible_ps);
    update_waves();
}

void dma_engine::wake_at(uint64_t t_ps) {
    if (t_ps == NEVER) return;
    auto at = std::lower_bound(m_wakes.begin(), m_wakes.end(), t_ps);
    if (at != m_wakes.end() && *at == t_ps) return;
    m_wakes.insert(at, t_ps);
    tlmx::scheduler::get().call_at(t_ps, m_rank, this, t_ps);
}

void dma_engine::on_time(uint64_t t_ps) {
    m_wakes.erase(std::lower_bound(m_wakes.begin(), m_wakes.end(), t_ps));
    if (m_blocking) m_kick.notify();  // the thread issues
    else wake_at(advance());
}

void dma_engine::start_thread_if_blocking() {
    if (m_blocking || !tlmx::scheduler::blocking_targets()) return;
    m_blocking = true;
    sc_core::sc_spawn(sc_bind(&dma_engine::issue_thread, this), "issue");
}

void dma_engine::issue_thread() {
    while (true) {
        wake_at(advance());
        sc_core::wait(m_kick);
    }
}

void dma_engine::update_waves() {
    if (!m_waves) return;
    m_waves->busy.write(!m_jobs.empty());
    m_waves->queue_depth.write(uint32_t(m_jobs.size()));
    m_waves->bursts_in_flight.write(uint32_t(m_flights.size()));
}

void dma_engine::trace(sc_core::sc_trace_file* tf) const {
    if (!m_waves) return;
    sc_core::sc_trace(tf, m_waves->busy, m_waves->busy.name());
    sc_core::sc_trace(tf, m_waves->queue_depth, m_waves->queue_depth.name());
    sc_core::sc_trace(tf, m_waves->bursts_in_flight, m_waves->bursts_in_flight.name());
}

void dma_engine::next_burst(job& j, uint64_t& src, uint64_t& dst, uint64_t& len) {
    const dma_descriptor& d = j.d;
    src = row_address(d.src, j.plane, d.src_plane_stride, j.row, d.src_stride) + j.off;
    dst = row_address(d.dst, j.plane, d.dst_plane_stride, j.row, d.dst_stride) + j.off;
    len = std::min(d.row_bytes - j.off, m_cfg.max_burst - dst % m_cfg.max_burst);
    j.off += len;
    if (j.off == d.row_bytes) {
        j.off = 0;
        if (++j.row == d.rows) {
            j.row = 0;
            if (++j.plane == d.planes) j.all_issued = true;
        }
    }
}

uint64_t dma_engine::advance() {
    while (true) {
        const uint64_t now = tlmx::now_ps();
        retire(now);
        const uint64_t done = m_completions.empty() ? NEVER : m_completions.front();
        // The oldest eligible control write, else the oldest descriptor that still has bursts to issue (data goes out
        // in descriptor order).
        auto it = !m_controls.empty() && m_controls.front()->eligible_ps <= now ? m_controls.front() : m_jobs.end();
        if (it == m_jobs.end()) it = std::find_if(m_jobs.begin(), m_jobs.end(), [](const job& j) { return !j.all_issued; });
        if (it == m_jobs.end()) return done;
        uint64_t ready = std::max(it->eligible_ps, m_port.free_at_ps());  // the datapath streams one burst at a time
        if (m_flights.size() >= m_cfg.outstanding) ready = std::max(ready, m_flights.front().lands_ps);
        if (ready > now) return std::min(done, ready);
        issue_burst(it);
    }
}

void dma_engine::issue_burst(std::list<job>::iterator it) {
    job& j = *it;
    uint64_t src, dst, len;
    if (j.bursts++ == 0) j.issue_begin = sc_core::sc_time_stamp();
    next_burst(j, src, dst, len);
    ++j.in_flight;

    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    // An accumulating copy streams both operands through the datapath: half the copy rate.
    const uint64_t port_done = m_port.reserve(tlmx::now_ps(), j.d.reduce ? 2 * len : len);
    tlm::tlm_generic_payload* gp = m_pool.acquire(len);
    gp->set_command(tlm::TLM_READ_COMMAND);
    gp->set_address(src);
    for (auto& f : m_faults)
        if (f.spec().kind == "error" && f.hit(sc_core::sc_time_stamp().to_seconds() * 1e9)) {
            ++m_injected;
            burst_failed(j, gp, "injected fault " + f.spec().label);
        }
    out->b_transport(*gp, delay);
    if (gp->get_response_status() != tlm::TLM_OK_RESPONSE) burst_failed(j, gp, tlmx::error_text(*gp));
    if (j.check) {
        j.check->source = checksum_update(j.check->source, dst, gp->get_data_ptr(), len);
        j.check->bytes += len;
    }
    if (j.d.reduce) {
        // The destination's operand, read after the source's; the sum is written from its buffer.
        tlm::tlm_generic_payload* acc = m_pool.acquire(len);
        acc->set_command(tlm::TLM_READ_COMMAND);
        acc->set_address(dst);
        out->b_transport(*acc, delay);
        if (acc->get_response_status() != tlm::TLM_OK_RESPONSE) {
            gp->release();
            burst_failed(j, acc, tlmx::error_text(*acc));
        }
        if (m_cfg.functional)
            numerics::accumulate(*j.d.reduce, acc->get_data_ptr(), gp->get_data_ptr(), len / numerics::size_of(*j.d.reduce),
                                 m_sum_a, m_sum_b);
        gp->release();
        gp = acc;
    }
    gp->set_command(tlm::TLM_WRITE_COMMAND);
    gp->set_address(dst);
    gp->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    out->b_transport(*gp, delay);
    if (gp->get_response_status() != tlm::TLM_OK_RESPONSE) burst_failed(j, gp, tlmx::error_text(*gp));
    gp->release();
    if (j.check) {
        // What actually landed (a zero-time backdoor read of the destination right after the write).
        m_readback.resize(len);
        if (tlmx::debug_transport(out, tlm::TLM_READ_COMMAND, dst, m_readback.data(), len) == len)
            j.check->destination = checksum_update(j.check->destination, dst, m_readback.data(), len);
        else
            j.check->unverifiable = true;
    }
    const uint64_t now = tlmx::now_ps();  // later than at the start if a target blocked
    const uint64_t lands = std::max(port_done, now + tlmx::to_ps(delay));
    j.issue_end = tlmx::from_ps(std::max(port_done, now));
    j.last_lands_ps = std::max(j.last_lands_ps, lands);
    m_flights.push_back({lands, it, len});
    std::push_heap(m_flights.begin(), m_flights.end(), std::greater<>());
    if (j.all_issued) {
        if (j.d.control) {  // the oldest unissued control write: the one the control path or the FIFO picked
            sc_assert(!m_controls.empty() && m_controls.front() == it);
            m_controls.pop_front();
        }
        m_completions.push_back(j.last_lands_ps);
        std::push_heap(m_completions.begin(), m_completions.end(), std::greater<>());
    }
    if (m_waves) wake_at(lands);  // the waveform shows each landing at its instant
    update_waves();
}

void dma_engine::burst_failed(const job& j, tlm::tlm_generic_payload* gp, const std::string& why) {
    const std::string burst = tlmx::describe(*gp);
    std::string msg = why + (why.find(burst) == std::string::npos ? " on " + burst : "") + " (descriptor " +
                      to_string(j.d) + ")";
    gp->release();
    SC_REPORT_ERROR(name(), msg.c_str());
    throw std::logic_error(msg);  // not reached: SC_REPORT_ERROR throws (or aborts) under every action we set
}

std::string dma_engine::in_flight_text() const {
    if (m_flights.empty()) return {};
    char buf[96];
    std::snprintf(buf, sizeof buf, ", %zu bursts in flight, the next lands at %.3f us", m_flights.size(),
                  double(m_flights.front().lands_ps) * 1e-6);
    return buf;
}

void dma_engine::retire(uint64_t now) {
    while (!m_completions.empty() && m_completions.front() <= now) {
        std::pop_heap(m_completions.begin(), m_completions.end(), std::greater<>());
        m_completions.pop_back();
    }
    while (!m_flights.empty() && m_flights.front().lands_ps <= now) {
        std::pop_heap(m_flights.begin(), m_flights.end(), std::greater<>());
        in_flight f = m_flights.back();
        m_flights.pop_back();
        ++m_bursts;
        m_bytes += double(f.bytes);
        m_landed_bytes += f.bytes;
        update_waves();
        if (--f.owner->in_flight == 0 && f.owner->all_issued) {
            auto cb = std::move(f.owner->on_done);
            if (!m_observers.empty()) {
                const job& j = *f.owner;
                m_observers.notify({this, &j.d, j.submitted, j.issue_begin, j.issue_end, sc_core::sc_time_stamp(), j.bursts,
                                    tlmx::from_ps(j.eligible_ps)});
            }
            m_queued_ns += double(now - tlmx::to_ps(f.owner->submitted)) / 1000.0;
            m_wait_ns += double(tlmx::to_ps(f.owner->issue_begin) - f.owner->eligible_ps) / 1000.0;
            m_jobs.erase(f.owner);
            ++m_descriptors;
            update_waves();
            if (cb) cb();
        }
    }
}

} // namespace trnsim::dma

#include "models/dma/dma_engine.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "tlm/ext_error.h"
#include "tlm/time.h"
#include "tlm/transport.h"

namespace trnsim::dma {

dma_engine::dma_engine(sc_core::sc_module_name name, const dma_config& cfg, const std::vector<tlmx::fault_spec>& faults)
    : sc_module(name), out("out"), m_cfg(cfg), m_port(cfg.engine_gbps, 0), m_stats(basename()) {
    for (const auto& f : faults) m_faults.emplace_back(f);
    SC_HAS_PROCESS(dma_engine);
    SC_THREAD(issue_thread);
    SC_THREAD(retire_thread);
    if (cfg.signals) m_waves = std::make_unique<waves>();
    for (auto* s : {static_cast<stats::stat*>(&m_descriptors), static_cast<stats::stat*>(&m_bursts),
                    static_cast<stats::stat*>(&m_bytes), static_cast<stats::stat*>(&m_busy),
                    static_cast<stats::stat*>(&m_injected)})
        m_stats.add(*s);
}

void dma_engine::submit(const dma_descriptor& d, std::function<void()> on_done, std::shared_ptr<checksum_state> check) {
    job j;
    j.d = d;
    j.on_done = std::move(on_done);
    j.submitted = sc_core::sc_time_stamp();
    j.eligible = j.submitted + sc_core::sc_time(m_cfg.descriptor_latency_ns, sc_core::SC_NS);
    if (m_cfg.checksum) j.check = std::move(check);
    j.eligible = sc_core::sc_time_stamp() + sc_core::sc_time(m_cfg.descriptor_latency_ns, sc_core::SC_NS);
    m_jobs.push_back(std::move(j));
    m_new_job.notify(sc_core::SC_ZERO_TIME);
    update_waves();
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

void dma_engine::issue_thread() {
    while (true) {
        // The oldest descriptor that still has bursts to issue (bursts go out in descriptor order).
        auto it = m_jobs.begin();
        while (it != m_jobs.end() && it->all_issued) ++it;
        if (it == m_jobs.end()) {
            sc_core::wait(m_new_job);
            continue;
        }
        if (sc_core::sc_time_stamp() < it->eligible) {
            sc_core::wait(it->eligible - sc_core::sc_time_stamp());
            continue;  // an older descriptor may have arrived meanwhile
        }
        if (m_flights.size() >= m_cfg.outstanding) {
            sc_core::wait(m_landed);
            continue;
        }
        uint64_t src, dst, len;
        if (it->bursts++ == 0) it->issue_begin = sc_core::sc_time_stamp();
        next_burst(*it, src, dst, len);
        ++it->in_flight;

        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        uint64_t start = tlmx::now_ps();
        uint64_t port_done = m_port.reserve(start, len);
        tlm::tlm_generic_payload* gp = m_pool.acquire(len);
        gp->set_command(tlm::TLM_READ_COMMAND);
        gp->set_address(src);
        for (auto& f : m_faults)
            if (f.spec().kind == "error" && f.hit(sc_core::sc_time_stamp().to_seconds() * 1e9)) {
                ++m_injected;
                burst_failed(*it, gp, "injected fault " + f.spec().label);
            }
        out->b_transport(*gp, delay);
        if (gp->get_response_status() != tlm::TLM_OK_RESPONSE) burst_failed(*it, gp, tlmx::error_text(*gp));
        if (it->check) {
            it->check->source = checksum_update(it->check->source, dst, gp->get_data_ptr(), len);
            it->check->bytes += len;
        }
        gp->set_command(tlm::TLM_WRITE_COMMAND);
        gp->set_address(dst);
        gp->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        out->b_transport(*gp, delay);
        if (gp->get_response_status() != tlm::TLM_OK_RESPONSE) burst_failed(*it, gp, tlmx::error_text(*gp));
        gp->release();
        if (it->check) {
            // What actually landed (a zero-time backdoor read of the destination right after the write).
            m_readback.resize(len);
            if (tlmx::debug_transport(out, tlm::TLM_READ_COMMAND, dst, m_readback.data(), len) == len)
                it->check->destination = checksum_update(it->check->destination, dst, m_readback.data(), len);
            else
                it->check->unverifiable = true;
        }
        sc_core::sc_time lands = std::max(tlmx::from_ps(port_done), sc_core::sc_time_stamp() + delay);
        it->issue_end = std::max(tlmx::from_ps(port_done), sc_core::sc_time_stamp());
        m_flights.push_back({lands, it, len});
        std::push_heap(m_flights.begin(), m_flights.end(), std::greater<>());
        m_new_flight.notify(sc_core::SC_ZERO_TIME);
        update_waves();
        // The datapath is busy until this burst has streamed through it.
        uint64_t now = tlmx::now_ps();
        if (port_done > now) sc_core::wait(tlmx::from_ps(port_done - now));
    }
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
                  m_flights.front().lands.to_seconds() * 1e6);
    return buf;
}

void dma_engine::retire_thread() {
    while (true) {
        if (m_flights.empty()) {
            sc_core::wait(m_new_flight);
            continue;
        }
        sc_core::sc_time t = m_flights.front().lands;
        if (t > sc_core::sc_time_stamp()) {
            sc_core::wait(t - sc_core::sc_time_stamp(), m_new_flight);  // an earlier landing may be queued meanwhile
            continue;
        }
        std::pop_heap(m_flights.begin(), m_flights.end(), std::greater<>());
        in_flight f = m_flights.back();
        m_flights.pop_back();
        ++m_bursts;
        m_bytes += double(f.bytes);
        m_landed_bytes += f.bytes;
        m_landed.notify(sc_core::SC_ZERO_TIME);
        update_waves();
        if (--f.owner->in_flight == 0 && f.owner->all_issued) {
            auto cb = std::move(f.owner->on_done);
            if (!m_observers.empty()) {
                const job& j = *f.owner;
                m_observers.notify({this, &j.d, j.submitted, j.issue_begin, j.issue_end, sc_core::sc_time_stamp(), j.bursts});
            }
            m_jobs.erase(f.owner);
            ++m_descriptors;
            update_waves();
            if (cb) cb();
        }
    }
}

} // namespace trnsim::dma

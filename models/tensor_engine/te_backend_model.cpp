#include "models/tensor_engine/te_backend_model.h"

#include <cmath>

#include "models/tensor_engine/pe_array.h"

namespace trnsim::te {

uint64_t te_clock::cycle_at_or_after(const sc_core::sc_time& t) const {
    double c = t.to_seconds() * ghz * 1e9;
    return uint64_t(std::ceil(c - 1e-6));
}

sc_core::sc_time te_clock::time_of(uint64_t cycle) const {
    return sc_core::sc_time(std::round(double(cycle) * 1000.0 / ghz), sc_core::SC_PS);
}

te_backend_model::te_backend_model(sc_core::sc_module_name name, const te_config& cfg, compute_pool* pool)
    : sc_module(name), m_cfg(cfg), m_timing(cfg), m_clock{cfg.clock_ghz}, m_pool(pool) {
    SC_HAS_PROCESS(te_backend_model);
    SC_THREAD(completion_thread);
}

void te_backend_model::compute(te_job& job) {
    // Per-thread decode buffers: sized once per tile shape, never zero-filled again (decode writes every element).
    thread_local std::vector<float> S, X;
    S.resize(size_t(job.k) * job.m);
    X.resize(size_t(job.k) * job.n);
    numerics::decode(job.in_type, job.stationary.data(), S.data(), S.size());
    numerics::decode(job.in_type, job.moving.data(), X.data(), X.size());
    job.out.resize(size_t(job.m) * job.n);
    pe_array_compute(S.data(), X.data(), job.k, job.m, job.n, job.out.data());
}

void te_backend_model::submit(te_job&& job) {
    uint64_t ready = m_clock.cycle_at_or_after(sc_core::sc_time_stamp());
    te_schedule s = m_timing.schedule(job.in_type, job.k, job.n, ready);
    job.load_start = s.load_start;
    job.stream_start = s.stream_start;
    job.done = s.done;
    m_pending.push_back({std::move(job), {}});
    te_job& j = m_pending.back().job;
    // Timing-only: no result (the tensor engine carries no bytes in this mode, the PSUM stores nothing).
    if (!m_cfg.functional) {
    } else if (m_pool) m_pending.back().result = m_pool->run([&j] { compute(j); });  // deque keeps j in place
    else compute(j);
    m_pushed.notify();
    // Accepted when its weights start loading (the background weight buffer is free).
    sc_core::sc_time accept = m_clock.time_of(s.load_start);
    if (accept > sc_core::sc_time_stamp()) m_submit_clock.wait_for(accept - sc_core::sc_time_stamp());
}

void te_backend_model::completion_thread() {
    while (true) {
        if (m_pending.empty()) sc_core::wait(m_pushed);
        if (m_pending.empty()) continue;
        sc_core::sc_time t = m_clock.time_of(m_pending.front().job.done);
        if (t > sc_core::sc_time_stamp()) m_completion_clock.wait_for(t - sc_core::sc_time_stamp());
        if (m_pending.front().result.valid()) m_pending.front().result.get();  // rethrows what compute threw
        te_job job = std::move(m_pending.front().job);
        m_pending.pop_front();
        if (job.on_done) job.on_done(job);
    }
}

} // namespace trnsim::te

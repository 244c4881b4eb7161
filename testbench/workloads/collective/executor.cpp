#include "testbench/workloads/collective/executor.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <stdexcept>
#include <string>

#include "models/link/global_address.h"

namespace trnsim::tb {

namespace {
uint64_t align(uint64_t v) { return (v + 4095) & ~uint64_t(4095); }
}  // namespace

collective_executor::collective_executor(sc_core::sc_module_name name, platform::multichip_platform& plat,
                                         const collective::schedule& s)
    : sc_module(name), m_plat(plat), m_s(s) {
    if (s.topo.chips() != plat.chips())
        throw std::invalid_argument("the schedule is for " + std::to_string(s.topo.chips()) +
                                    " chips, the platform has " + std::to_string(plat.chips()));
    // Each buffer alone must fit first, so that the offsets below cannot overflow.
    uint64_t most = 0;
    for (uint32_t c = 0; c < plat.chips(); ++c) most = std::max(most, plat.chip(c).buffer_bytes());
    for (uint64_t b : {s.input_bytes, s.output_bytes, s.scratch_bytes})
        if (b > most)
            throw std::invalid_argument("the collective needs a buffer of " + std::to_string(b) +
                                        " bytes (input, output or scratch); a chip's memory has at most " +
                                        std::to_string(most));
    m_in_off = 0;
    m_out_off = align(s.input_bytes);
    m_scratch_off = m_out_off + align(s.output_bytes);
    uint64_t need = m_scratch_off + align(s.scratch_bytes);
    for (uint32_t c = 0; c < plat.chips(); ++c)
        if (need > plat.chip(c).buffer_bytes())
            throw std::invalid_argument("chip " + std::to_string(c) + ": the collective needs " + std::to_string(need) +
                                        " bytes of buffers (input, output, scratch), its memory has " +
                                        std::to_string(plat.chip(c).buffer_bytes()));
    size_t n = s.steps.size();
    m_pending.assign(n, 0);
    m_dep_begin.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
        m_pending[i] = uint32_t(s.steps[i].deps.size());
        for (uint32_t d : s.steps[i].deps) {
            if (d >= i) throw std::invalid_argument("step " + std::to_string(i) + " depends on a later step " +
                                                    std::to_string(d));
            ++m_dep_begin[d + 1];
        }
    }
    for (size_t i = 0; i < n; ++i) m_dep_begin[i + 1] += m_dep_begin[i];
    m_dependents.resize(m_dep_begin[n]);
    std::vector<uint32_t> fill(m_dep_begin.begin(), m_dep_begin.end() - 1);
    for (size_t i = 0; i < n; ++i)
        for (uint32_t d : s.steps[i].deps) m_dependents[fill[d]++] = uint32_t(i);
    SC_HAS_PROCESS(collective_executor);
    SC_THREAD(run);
}

uint64_t collective_executor::buffer_address(uint32_t chip, collective::buffer b) const {
    uint64_t base = m_plat.chip(chip).buffer_base();
    switch (b) {
    case collective::buffer::input: return base + m_in_off;
    case collective::buffer::output: return base + m_out_off;
    case collective::buffer::scratch: return base + m_scratch_off;
    }
    return base;
}

uint64_t collective_executor::local_address(const collective::region& r) const {
    return buffer_address(r.chip, r.buf) + r.offset;
}

uint64_t collective_executor::issue(uint32_t i) {
    const auto& st = m_s.steps[i];
    ++m_issued;
    if (st.kind == collective::step_kind::copy) {
        return m_plat.chip(st.src.chip).copy(local_address(st.src),
                                             link::global_address(st.dst.chip, local_address(st.dst)), st.src.bytes);
    }
    return m_plat.chip(st.dst.chip).reduce(local_address(st.dst), local_address(st.src), st.src.bytes, m_s.p.dt);
}

uint32_t collective_executor::chip_of(uint32_t i) const {
    const auto& st = m_s.steps[i];
    return st.kind == collective::step_kind::copy ? st.src.chip : st.dst.chip;
}

void collective_executor::run() {
    using item = std::pair<uint64_t, uint32_t>;  // completion (or release) time, step
    std::priority_queue<item, std::vector<item>, std::greater<item>> flying, releasing;
    std::vector<uint64_t> ready_at(m_s.steps.size(), 0);
    std::vector<uint32_t> ready;
    for (uint32_t i = 0; i < m_s.steps.size(); ++i)
        if (m_pending[i] == 0) ready.push_back(i);
    m_start_ps = m_end_ps = sc_core::sc_time_stamp().value();
    std::vector<uint32_t> next;
    while (true) {
        // Issue in step order among those released at the same time (deterministic, and the order the
        // algorithm listed them).
        for (uint32_t i : ready) flying.emplace(issue(i), i);
        ready.clear();
        if (flying.empty() && releasing.empty()) break;
        uint64_t t = std::min(flying.empty() ? UINT64_MAX : flying.top().first,
                              releasing.empty() ? UINT64_MAX : releasing.top().first);
        uint64_t now = sc_core::sc_time_stamp().value();
        if (t > now) sc_core::wait(sc_core::sc_time::from_value(t - now));
        now = sc_core::sc_time_stamp().value();
        while (!flying.empty() && flying.top().first <= now) {
            uint32_t i = flying.top().second;
            flying.pop();
            ++m_done;
            m_end_ps = std::max(m_end_ps, now);
            // A dependent starts once its last dependency has ended and signalled it (the producing chip's
            // signal cost, to its own or another chip).
            const uint32_t from = chip_of(i);
            for (uint32_t k = m_dep_begin[i]; k < m_dep_begin[i + 1]; ++k) {
                const uint32_t d = m_dependents[k];
                ready_at[d] = std::max(ready_at[d], now + m_plat.chip(from).signal_ps(chip_of(d) != from));
                if (--m_pending[d] > 0) continue;
                if (ready_at[d] > now) releasing.emplace(ready_at[d], d);
                else next.push_back(d);
            }
        }
        while (!releasing.empty() && releasing.top().first <= now) {
            next.push_back(releasing.top().second);
            releasing.pop();
        }
        std::sort(next.begin(), next.end());
        ready.swap(next);
    }
}

}  // namespace trnsim::tb

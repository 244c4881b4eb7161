#include "tlm/scheduler.h"

#include <algorithm>
#include <functional>
#include <memory>

#include "tlm/time.h"

namespace trnsim::tlmx {

namespace {
uint32_t g_ranks = 0;
bool g_blocking = false;
} // namespace

void scheduler::note_blocking_target() { g_blocking = true; }
bool scheduler::blocking_targets() { return g_blocking; }

uint32_t scheduler::next_rank() { return g_ranks++; }

scheduler& scheduler::get() {
    static std::unique_ptr<scheduler> s(new scheduler);
    return *s;
}

scheduler::scheduler() {
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.set_sensitivity(&m_due);
    o.dont_initialize();
    sc_core::sc_spawn(std::bind(&scheduler::run, this), "trnsim_scheduler", &o);
}

void scheduler::push(entry e) {
    e.t = std::max(e.t, now_ps());
    e.seq = m_seq++;
    m_heap.push_back(e);
    std::push_heap(m_heap.begin(), m_heap.end(), std::greater<>());
    if (m_heap.front().seq == e.seq) arm();
}

void scheduler::call_at(uint64_t t_ps, uint32_t rank, timed_client* c, uint64_t tag) {
    entry e{};
    e.t = t_ps;
    e.rank = rank;
    e.client = c;
    e.tag = tag;
    push(e);
}

void scheduler::notify_at(uint64_t t_ps, uint32_t rank, sc_core::sc_event& ev) {
    entry e{};
    e.t = t_ps;
    e.rank = rank;
    e.client = nullptr;
    e.ev = &ev;
    push(e);
}

void scheduler::arm() {
    if (m_running || m_heap.empty()) return;  // run() arms when its round is over
    const uint64_t t = m_heap.front().t, now = now_ps();
    m_due.notify(t > now ? from_ps(t - now) : sc_core::SC_ZERO_TIME);  // replaces a later pending notification
}

void scheduler::run() {
    const uint64_t now = now_ps();
    m_round.clear();
    while (!m_heap.empty() && m_heap.front().t <= now) {
        std::pop_heap(m_heap.begin(), m_heap.end(), std::greater<>());
        m_round.push_back(m_heap.back());
        m_heap.pop_back();
    }
    ++m_rounds;
    m_running = true;
    struct done {
        bool& r;
        ~done() { r = false; }
    } guard{m_running};
    for (const entry& e : m_round)
        if (e.client) e.client->on_time(e.tag);
    for (const entry& e : m_round)
        if (!e.client) e.ev->notify();
    m_running = false;
    arm();
}

void timed_thread::wait_until_ps(uint64_t t_ps) {
    scheduler::get().notify_at(t_ps, m_rank, m_ev);
    sc_core::wait(m_ev);
}

void timed_thread::wait_for(const sc_core::sc_time& d) { wait_until_ps(now_ps() + to_ps(d)); }

} // namespace trnsim::tlmx

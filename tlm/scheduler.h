// The model's timed scheduler: what the chip model does at a future instant goes through one queue per process, so
// that what happens at one instant happens in an order the model defines, not in the order of SystemC's timed-event
// heap (which is not stable: which of two processes woken at the same picosecond runs first depends on the history
// of the heap, so any change to the event structure used to move results).
//
// The order (docs/architecture.md, "Order within an instant"):
//   - Every client (a DMA engine, a Tensor or Vector Engine, a core's semaphore registers) takes a rank when it is
//     built: ranks follow construction order, which the platform builder fixes (chip by chip, core by core, engine
//     by engine).
//   - At each instant the scheduler runs in rounds. A round takes every entry due at that instant, in (rank, order
//     of scheduling) order, runs the callbacks among them in that order, then resumes the waiting threads among
//     them in that order (SystemC runs processes made runnable in one evaluation in the order they were made
//     runnable). Entries scheduled for the same instant during a round run in the next round (the next delta cycle).
//   - So requests that reach a shared resource (an HBM channel, an SBUF bank, a link) at the same instant reach it
//     in rank order; what they wake at that instant follows causally.
// One SystemC timed notification is pending at a time (the earliest due entry), so SystemC's own queue stays tiny.
#pragma once
#include <cstdint>
#include <vector>

#include <systemc>

namespace trnsim::tlmx {

// Something the scheduler calls back at an instant (plain C++: no wait()).
class timed_client {
public:
    virtual void on_time(uint64_t tag) = 0;

protected:
    ~timed_client() = default;
};

class scheduler {
public:
    // The process's scheduler, made on first use (during elaboration or simulation).
    static scheduler& get();
    // The next construction rank.
    static uint32_t next_rank();

    // Calls c->on_time(tag) at t_ps (>= now) in its rank's turn.
    void call_at(uint64_t t_ps, uint32_t rank, timed_client* c, uint64_t tag = 0);
    // Notifies `ev` (immediately) at t_ps (>= now) in its rank's turn: how a thread waits (see timed_thread).
    void notify_at(uint64_t t_ps, uint32_t rank, sc_core::sc_event& ev);

    // A target that may call wait() in b_transport (the detailed HBM model) says so when it is built: initiators
    // then issue from threads instead of from scheduler callbacks.
    static void note_blocking_target();
    static bool blocking_targets();

    size_t pending() const { return m_heap.size(); }
    uint64_t rounds() const { return m_rounds; }

private:
    scheduler();
    struct entry {
        uint64_t t, seq;
        uint32_t rank;
        timed_client* client;  // or null: notify ev
        union {
            uint64_t tag;
            sc_core::sc_event* ev;
        };
        bool operator>(const entry& o) const {
            if (t != o.t) return t > o.t;
            if (rank != o.rank) return rank > o.rank;
            return seq > o.seq;
        }
    };
    void push(entry e);
    void arm();
    void run();  // the scheduler's method process

    std::vector<entry> m_heap;  // min-heap on (t, rank, seq)
    std::vector<entry> m_round;
    sc_core::sc_event m_due;
    uint64_t m_seq = 0, m_rounds = 0;
    bool m_running = false;
};

// A thread's timed wait through the scheduler: the thread resumes at the instant in its rank's turn.
class timed_thread {
public:
    timed_thread() : m_rank(scheduler::next_rank()) {}
    uint32_t rank() const { return m_rank; }
    void wait_until_ps(uint64_t t_ps);
    void wait_for(const sc_core::sc_time& d);

private:
    uint32_t m_rank;
    sc_core::sc_event m_ev;
};

} // namespace trnsim::tlmx

// A NeuronCore: SBUF, PSUM, a core-local router, the Tensor Engine and its back end, DMA engines, semaphores and
// one sequencer thread per instruction queue.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm_utils/simple_target_socket.h>

#include "models/core/core_config.h"
#include "models/core/instruction.h"
#include "models/dma/dma_engine.h"
#include "models/sram/sram.h"
#include "models/tensor_engine/tensor_engine.h"
#include "models/vector_engine/vector_engine.h"
#include "tlm/fault.h"
#include "tlm/observer.h"
#include "tlm/router.h"
#include "tlm/scheduler.h"
#include "tlm/stats.h"

namespace trnsim::core {

class neuron_core;

// One instruction of a queue as an observer sees it: issued once its semaphore waits were met, completed when it
// signalled. DMA instructions of one queue overlap (the queue issues the next while earlier ones move).
struct queue_event {
    const neuron_core* core;
    size_t queue;       // 0 = te, 1.. = dma queues, then vector, scalar
    const std::string* queue_name;
    size_t index;       // instruction number in its queue
    const instruction* in;
    sc_core::sc_time issued, completed;
};

class neuron_core : public sc_core::sc_module, private tlmx::timed_client {
public:
    tlmx::router local;  // in: from the chip interconnect and the TE; out: SBUF, PSUM
    sram::sram sbuf;
    sram::sram psum;
    std::vector<std::unique_ptr<dma::dma_engine>> dma;  // initiators: bind out to the chip interconnect
    tlm_utils::simple_target_socket<neuron_core> sem_regs;  // the semaphore registers (core_config::sem_base)

    // `backend` computes the Tensor Engine's MATMULs (C++ model or RTL), owned by the platform.
    // `faults`: specs aimed at this core, targets relative to it ("dma2": one engine, "dma": all of them).
    neuron_core(sc_core::sc_module_name name, const core_config& cfg, te::te_backend_if& backend,
                const std::vector<tlmx::fault_spec>& faults = {});
    te::tensor_engine& te() { return m_te; }
    ve::vector_engine& vector() { return m_ve; }
    ve::vector_engine& scalar() { return m_se; }

    // Loads the instruction streams (before simulation). Throws std::invalid_argument naming the queue and the
    // instruction index for anything the core cannot run.
    void load(core_program prog);
    // The SystemC threads load(p) spawns: one per instruction queue that runs (the TE queue always).
    static size_t threads_for(const core_program& p) {
        return 1 + p.dma.size() + (p.vector.empty() ? 0 : 1) + (p.scalar.empty() ? 0 : 1);
    }
    // Queues that have not run to their end, with what they wait for ("te #12 waits sem 3 >= 5 (is 4)").
    std::vector<std::string> stuck() const;
    bool finished() const { return stuck().empty(); }
    // Work completed so far: instructions of every queue plus DMA bytes landed (grows whenever anything finishes;
    // the stall watchdog watches it).
    uint64_t progress() const;
    sc_core::sc_time last_completion() const { return m_last_completion; }
    stats::group& stats() { return m_stats; }
    void observe(tlmx::observer_list<queue_event>::callback cb) { m_observers.add(std::move(cb)); }
    size_t queues() const { return m_queues.size(); }
    uint64_t semaphore_value(uint32_t s) const { return s < m_sems.size() ? m_sems[s].value : 0; }
    // Adds the core's signals (semaphores, and its engines') to a waveform; nothing when sim.signals is off.
    void trace(sc_core::sc_trace_file* tf) const override;

private:
    struct semaphore {
        uint64_t value = 0;
        sc_core::sc_event changed;
    };
    struct queue_state {
        std::string name;
        const std::vector<instruction>* instrs = nullptr;
        size_t pc = 0;
        const sem_wait* waiting = nullptr;
    };
    void wait_for(queue_state& q, const instruction& in);
    void signal(int32_t sem);
    void bump(uint32_t sem);
    // Semaphore register writes land at the time their delay annotates: a min-heap of (time, semaphore).
    void sem_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned sem_debug(tlm::tlm_generic_payload& gp);
    bool sem_access(tlm::tlm_generic_payload& gp, uint32_t& first, uint32_t& count);
    void on_time(uint64_t) override;  // applies the register writes due now
    std::vector<std::pair<sc_core::sc_time, uint32_t>> m_register_writes;
    uint32_t m_rank = tlmx::scheduler::next_rank();
    void te_thread();
    void dma_thread(size_t queue);
    void vec_thread(size_t queue, ve::vector_engine& eng, opcode op);
    void run_dma(size_t queue, const queue_state& q, const instruction& in);
    void verify(const std::string& where, const dma::dma_descriptor& d, const dma::checksum_state& c);

    const core_config& m_cfg;
    te::tensor_engine m_te;
    ve::vector_engine m_ve, m_se;
    core_program m_prog;
    std::vector<semaphore> m_sems;
    std::vector<queue_state> m_queues;  // [0] = te, [1..] = dma queues, then vector, scalar
    uint32_t m_next_engine = 0;
    tlmx::observer_list<queue_event> m_observers;
    std::vector<std::unique_ptr<sc_core::sc_signal<uint64_t, sc_core::SC_UNCHECKED_WRITERS>>> m_sem_waves;
    uint64_t m_te_done = 0;  // MATMULs completed
    uint64_t m_vec_done = 0; // VECTOR and SCALAR instructions completed
    std::vector<uint64_t> m_in_flight_signals;  // per semaphore: issued instructions that will signal it
    sc_core::sc_time m_last_completion;
    stats::group m_stats;
    stats::counter m_register_signals{"register_signals", "count",
                                      "semaphore increments by writes to the semaphore registers (remote signals)"};
    stats::counter m_dma_instructions{"dma_instructions", "count", "DMA instructions completed"};
    stats::counter m_checksums{"checksums_verified", "count", "DMA instructions whose end-to-end checksum matched"};
    stats::counter m_checksum_bytes{"checksum_bytes", "B", "bytes covered by verified checksums"};
};

} // namespace trnsim::core

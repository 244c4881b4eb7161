// One DMA engine: a FIFO of descriptors, moved as bursts (read from the source, write to the destination) through
// one initiator socket. The engine sends a burst whenever the engine's datapath (a bandwidth-limited port) is free
// and fewer than `outstanding` bursts are in flight. A control write (descriptor.control: a semaphore write, one
// burst) goes at the next burst, ahead of the data queued before it: releasing a waiting engine or chip is not held
// behind another transfer's megabyte (the data keeps its order). Each burst lands at the time its transport
// annotated (memory latency and contention included). A descriptor's completion callback runs at the instant its last burst lands.
// The engine acts through the model's scheduler (tlm/scheduler.h) in its rank's turn: bursts that engines issue
// at the same instant reach the memories in rank order. It issues from scheduler callbacks (no thread switch per
// burst) unless a target may block in b_transport (the detailed HBM model), when a thread of its own issues.
// Errors: a failed burst (error response, or an injected "error" fault) is reported with SC_REPORT_ERROR under the
// engine's name with the target's reason, the burst and the descriptor. An accumulating copy (descriptor.reduce)
// reads the source, then the destination, and writes their sum (numerics::accumulate) back; it reserves the
// datapath for both operands (half the copy rate: Trainium's DMA "collective compute" runs at about half the DMA
// throughput, docs/sources.md). With checksums on, each burst's data is
// added to the descriptor's checksum_state as read and again as found at the destination after the write.
#pragma once
#include <functional>
#include <deque>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/dma/dma_config.h"
#include "models/dma/dma_checksum.h"
#include "models/dma/dma_descriptor.h"
#include "tlm/fault.h"
#include "tlm/bw_port.h"
#include "tlm/observer.h"
#include "tlm/payload_pool.h"
#include "tlm/scheduler.h"
#include "tlm/stats.h"

namespace trnsim::dma {

class dma_engine;

// One completed descriptor as an observer sees it. issue_begin..issue_end is when the engine's datapath streamed
// its bursts (spans of one engine's data descriptors never overlap; a control write's may fall inside one); done
// is when its last burst landed.
struct dma_event {
    const dma_engine* engine;
    const dma_descriptor* d;
    sc_core::sc_time submitted, issue_begin, issue_end, done;
    uint64_t bursts;
    sc_core::sc_time eligible;  // when it could first be served (submitted + the descriptor latency)
};

class dma_engine : public sc_core::sc_module, private tlmx::timed_client {
public:
    tlm_utils::simple_initiator_socket<dma_engine> out;

    // `faults`: specs aimed at this engine (target ""), kind "error".
    dma_engine(sc_core::sc_module_name name, const dma_config& cfg, const std::vector<tlmx::fault_spec>& faults = {});
    // Queues a descriptor (callable from any process, returns at once). The descriptor must be valid (validate()).
    // With cfg.checksum and a `check`, the data is summed into it (see dma_checksum.h).
    void submit(const dma_descriptor& d, std::function<void()> on_done,
                std::shared_ptr<checksum_state> check = nullptr);
    size_t queued() const { return m_jobs.size(); }
    uint64_t bytes_landed() const { return m_landed_bytes; }
    // ", 3 bursts in flight, the next lands at 12 us" (empty if none), for stall and deadlock reports.
    std::string in_flight_text() const;
    stats::group& stats() { return m_stats; }
    void observe(tlmx::observer_list<dma_event>::callback cb) { m_observers.add(std::move(cb)); }
    // Adds this engine's signals (busy, queue depth, bursts in flight) to a waveform; nothing when signals are off.
    void trace(sc_core::sc_trace_file* tf) const override;

private:
    struct job {
        dma_descriptor d;
        std::function<void()> on_done;
        std::shared_ptr<checksum_state> check;
        uint64_t eligible_ps = 0;
        uint32_t plane = 0, row = 0;
        uint64_t off = 0;
        bool all_issued = false;
        uint64_t in_flight = 0;
        uint64_t last_lands_ps = 0;  // the latest landing of its bursts so far
        sc_core::sc_time submitted, issue_begin, issue_end;  // for observers
        uint64_t bursts = 0;
    };
    static constexpr uint64_t NEVER = UINT64_MAX;
    // Issues every burst that can go at this instant and retires what has landed; returns the next instant at which
    // the engine has something to do (NEVER: nothing until a descriptor arrives). May block in thread mode.
    uint64_t advance();
    void issue_burst(std::list<job>::iterator it);
    void retire(uint64_t now_ps);
    void wake_at(uint64_t t_ps);
    void on_time(uint64_t t_ps) override;
    void issue_thread();  // only when a target may block
    void start_thread_if_blocking();
    void end_of_elaboration() override { start_thread_if_blocking(); }  // a blocking target built after this engine
    void next_burst(job& j, uint64_t& src, uint64_t& dst, uint64_t& len);
    [[noreturn]] void burst_failed(const job& j, tlm::tlm_generic_payload* gp, const std::string& why);
    struct in_flight {
        uint64_t lands_ps;
        std::list<dma_engine::job>::iterator owner;
        uint64_t bytes;
        bool operator>(const in_flight& o) const { return lands_ps > o.lands_ps; }
    };

    dma_config m_cfg;
    std::list<job> m_jobs;
    // The control writes not yet issued, oldest first (all share the descriptor latency, so the oldest is the first
    // eligible); each leaves when its one burst is issued.
    std::deque<std::list<job>::iterator> m_controls;
    uint32_t m_rank;
    bool m_blocking = false;  // a target may block: issue from issue_thread
    std::vector<uint64_t> m_wakes;  // instants the scheduler will call this engine at (sorted; a few at most)
    sc_core::sc_event m_kick;   // thread mode: a wake
    std::vector<in_flight> m_flights;  // min-heap on landing time
    std::vector<uint64_t> m_completions;  // min-heap: when descriptors whose bursts are all issued will be done
    tlmx::bw_port m_port;
    tlmx::payload_pool m_pool;
    tlmx::observer_list<dma_event> m_observers;
    struct waves {
        sc_core::sc_signal<bool, sc_core::SC_UNCHECKED_WRITERS> busy{"busy"};
        sc_core::sc_signal<uint32_t, sc_core::SC_UNCHECKED_WRITERS> queue_depth{"queue_depth"};
        sc_core::sc_signal<uint32_t, sc_core::SC_UNCHECKED_WRITERS> bursts_in_flight{"bursts_in_flight"};
    };
    std::unique_ptr<waves> m_waves;  // only with signals on
    void update_waves();
    std::vector<tlmx::fault_trigger> m_faults;
    std::vector<uint8_t> m_readback;  // destination bytes read back for the checksum
    std::vector<float> m_sum_a, m_sum_b;  // accumulating copies: the operands in FP32
    uint64_t m_landed_bytes = 0;
    stats::group m_stats;
    stats::counter m_descriptors{"descriptors", "count", "descriptors completed"};
    stats::counter m_bursts{"bursts", "count", "bursts (read + write transaction pairs)"};
    stats::counter m_bytes{"bytes", "B", "bytes moved"};
    stats::counter m_injected{"injected_errors", "count", "bursts failed by an injected fault"};
    stats::counter m_queued_ns{"queued_ns", "ns", "descriptor time in the engine, submission to last landing, summed "
                                                  "over descriptors (over a run's time: the mean queue depth)"};
    stats::counter m_wait_ns{"wait_ns", "ns", "time descriptors waited, once eligible, for their first burst (behind "
                                              "older descriptors or for a free slot), summed"};
    stats::formula m_busy{"busy_ns", "ns", "datapath busy time", [this] { return double(m_port.busy_ps()) / 1000.0; }};
};

} // namespace trnsim::dma

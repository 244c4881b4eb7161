// The whole HBM of a chip in plain C++: the address mapper, one controller core per pseudo-channel, splitting of
// transactions into bursts, admission with back-pressure, completion of whole transactions, and the statistics.
// Used directly by the trace front end and wrapped for TLM by models/hbm/hbm_dram.h.
//
// Admission: each pseudo-channel has an input FIFO in front of its request queue. A burst enters the queue at once if
// the FIFO is empty and the queue has room, else it waits in the FIFO and enters (in order) in the cycle a queue slot
// frees. A transaction is accepted (TLM END_REQ) when its last burst has entered a queue. Bursts for one
// pseudo-channel never hold back another pseudo-channel.
//
// Simulation is lazy per pseudo-channel: the pseudo-channels are independent, so each one is only simulated as far
// as it must be (up to the arrival of its next burst, or as far as the caller asks). Callers submit in non-decreasing
// arrival order. Time is in command-clock cycles (memspec::tck_ns per cycle). Plain C++ (no SystemC).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "models/hbm/dram/address_mapper.h"
#include "models/hbm/dram/controller/pc_controller.h"
#include "models/hbm/dram/hbm_dram_config.h"
#include "tlm/stats.h"

namespace trnsim::hbm {

class dram_system final : private completion_listener {
public:
    class sink {
    public:
        virtual ~sink() = default;
        // Every burst of transaction `tag` has entered a controller queue (AT: END_REQ time).
        virtual void accepted(uint64_t tag, cycle_t at) { (void)tag, (void)at; }
        // The last burst of `tag` finished at `at` (may be later than the simulation point of the call).
        virtual void completed(uint64_t tag, cycle_t at) = 0;
    };

    explicit dram_system(const hbm_dram_config& cfg, const std::string& stats_name = "hbm");
    dram_system(const dram_system&) = delete;
    dram_system& operator=(const dram_system&) = delete;

    const hbm_dram_config& config() const { return m_cfg; }
    const memspec& spec() const { return m_cfg.spec; }
    const address_mapper& mapper() const { return m_map; }
    uint64_t capacity() const { return m_map.capacity(); }
    uint32_t num_pcs() const { return uint32_t(m_pcs.size()); }
    pc_controller& pc(uint32_t i) { return *m_pcs[i]; }
    double tck_ns() const { return m_cfg.spec.tck_ns; }
    double peak_gbps() const { return m_cfg.spec.pc_peak_gbps() * num_pcs(); }

    void set_sink(sink* s) { m_sink = s; }
    void set_observer(const command_observer& o);

    // Presents a transaction at cycle `arrival` (non-decreasing over calls; an earlier value is moved up to the latest
    // arrival seen). `addr + size` must be <= capacity(). `pcs`, if given, names the pseudo-channel that serves each
    // burst (one per burst; the address's own unless a remapped fault moved it), the bank, row and column staying
    // the address's.
    void submit(uint64_t tag, bool write, uint64_t addr, uint64_t size, cycle_t arrival, const size_t* pcs = nullptr);

    // For closed-loop initiators: the earliest completion cycle among transactions not yet retired (NEVER if none),
    // simulating the pseudo-channels in global time order just far enough to know it; retire_completion() removes
    // it. Nothing at or after the returned cycle is simulated, so the caller may then submit at any cycle >= the
    // minimum of its last arrival and the returned cycle.
    cycle_t next_completion();
    void retire_completion();

    // Issues every command earlier than `limit` in every pseudo-channel with queued requests, admitting waiting
    // bursts as slots free.
    void advance(cycle_t limit);
    // Earliest next command over all pseudo-channels with queued requests (NEVER if none).
    cycle_t next_event();
    // Runs until every submitted transaction has completed.
    void drain();
    // Ends a run: with `drain`, first completes every submitted transaction; then brings every pseudo-channel to
    // `end` (at least the last completion; refreshes of idle time are simulated) and closes the bank-open
    // accounting. Statistics are final after this.
    void finish(cycle_t end = 0, bool drain = true);

    uint64_t outstanding() const { return m_outstanding; }
    cycle_t latest_arrival() const { return m_clock; }
    cycle_t last_completion() const { return m_last_done; }

    stats::group& stats() { return m_stats; }
    const stats::group& stats() const { return m_stats; }
    double elapsed_ns() const;

private:
    struct txn {
        uint64_t tag = 0;
        uint64_t size = 0;
        cycle_t arrival = 0;
        cycle_t accepted = 0;
        cycle_t done = 0;
        uint32_t remaining = 0;   // bursts not finished
        uint32_t waiting = 0;     // bursts not yet in a controller queue
        bool write = false;
    };
    struct waiting_burst {
        uint32_t slot, bank, row, column;
        bool write;
    };
    void burst_done(uint64_t slot, bool write, cycle_t arrival, cycle_t done) override;
    void mark_active(uint32_t pc);
    void admitted(uint32_t slot, cycle_t at);
    // Simulates pseudo-channel p up to `limit` (commands < limit), admitting waiting bursts as slots free; with
    // `one_column`, returns after the first column command instead.
    void pump(uint32_t p, cycle_t limit, bool one_column = false);
    void touch(uint32_t p);  // p's next event may have changed (ordered mode)
    template <class F> double sum_pcs(F&& f) const {
        double s = 0;
        for (const auto& p : m_pcs) s += double(f(*p));
        return s;
    }
    double sum_cmd(command c) const;

    hbm_dram_config m_cfg;
    address_mapper m_map;
    std::vector<std::unique_ptr<pc_controller>> m_pcs;
    std::vector<uint32_t> m_active;
    std::vector<bool> m_is_active;
    std::vector<txn> m_txn;
    std::vector<uint32_t> m_free;
    std::vector<std::deque<waiting_burst>> m_fifo;
    // Ordered mode (next_completion): a lazy min-heap of pseudo-channel next events and one of known completions.
    struct pc_event {
        cycle_t t;
        uint32_t pc;
        uint64_t version;
        bool operator>(const pc_event& o) const { return t > o.t; }
    };
    bool m_ordered = false;
    std::vector<uint64_t> m_version;
    std::vector<cycle_t> m_heap_t;  // time of each pseudo-channel's valid heap entry (NEVER: none)
    std::priority_queue<pc_event, std::vector<pc_event>, std::greater<pc_event>> m_pc_heap;
    std::priority_queue<cycle_t, std::vector<cycle_t>, std::greater<cycle_t>> m_done_heap;
    sink* m_sink = nullptr;
    cycle_t m_clock = 0;
    cycle_t m_first_arrival = NEVER, m_last_done = 0, m_end = 0;
    uint64_t m_outstanding = 0;
    uint64_t m_write_bursts = 0;  // write bursts submitted and not finished

    // Statistics (stats::group holds references; declared after the state they read).
    stats::group m_stats;
    stats::group m_cmd_group{"cmd"};
    stats::group m_bank_group{"bank"};
    stats::counter m_reads{"reads", "transactions", "read transactions completed"};
    stats::counter m_writes{"writes", "transactions", "write transactions completed"};
    stats::counter m_bytes_read{"bytes_read", "B", "bytes read by completed transactions"};
    stats::counter m_bytes_written{"bytes_written", "B", "bytes written by completed transactions"};
    stats::histogram m_read_lat{"read_latency", "ns", "read transaction latency, arrival to last data beat", 1.0, 20000};
    stats::histogram m_write_lat{"write_latency", "ns", "write transaction latency, arrival to last data beat", 1.0, 20000};
    std::vector<std::unique_ptr<stats::formula>> m_formulas;
};

} // namespace trnsim::hbm

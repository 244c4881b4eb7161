// The whole HBM of a chip (stacks x channels x pseudo-channels) as one TLM-2.0 target with the detailed DRAM timing
// model of models/hbm/dram (dram_system: per-pseudo-channel controller cores with FR-FCFS/FCFS scheduling, page
// policy, refresh and a timing checker). Addresses on `in` are relative to the HBM base: 0 .. capacity().
//
//  - b_transport (LT): the caller's thread waits until its request has completed in the DRAM model; requests of many
//    initiator threads queue together in the controllers, so the scheduler has something to reorder.
//  - nb_transport_fw (AT, 4-phase): END_REQ is sent when every burst of the request has entered its pseudo-channel
//    request queue (held back while a queue is full), BEGIN_RESP when the last data beat is done; responses are
//    sent one at a time (the next after END_RESP).
//  - transport_dbg: direct access to the data, no timing.
// Data lives in a sparse_store and is read or written when the request arrives, in arrival order; timing does not
// reorder data (none with hbm_config::functional false). Faults (hbm_model, hbm_faults) name pseudo-channels as
// channels ("channelN", stack-major): a request touching a disabled one fails, a remapped one's bursts go to
// enabled pseudo-channels (same bank, row and column), a slow one completes latency_ns later, a corrupt one flips a
// bit of the first byte it serves. Observers get one hbm_event per pseudo-channel of each completed request. Out-of-range requests get TLM_ADDRESS_ERROR_RESPONSE, byte enables are honoured, streaming width
// smaller than the length gets TLM_BURST_ERROR_RESPONSE. Requests larger than one burst are split internally.
#pragma once
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/hbm/dram/dram_system.h"
#include "models/hbm/dram/hbm_dram_config.h"
#include "models/hbm/hbm_config.h"
#include "models/hbm/hbm_model.h"
#include "tlm/sparse_store.h"
#include "tlm/stats.h"

namespace trnsim::hbm {

class hbm_dram : public hbm_model, private dram_system::sink {
public:
    // The chip's HBM (cfg.model "dram"): cfg.dram is the detailed config; cfg.functional and cfg.faults apply.
    hbm_dram(sc_core::sc_module_name name, const hbm_config& cfg);
    // A stand-alone HBM of the detailed config alone (functional, no faults).
    hbm_dram(sc_core::sc_module_name name, const hbm_dram_config& cfg);
    SC_HAS_PROCESS(hbm_dram);

    uint64_t capacity() const override { return m_sys.capacity(); }
    double peak_gbps() const override { return m_sys.peak_gbps(); }
    uint32_t channels() const override { return m_sys.num_pcs(); }
    const hbm_dram_config& config() const { return m_sys.config(); }
    // Statistics (bandwidth, efficiency, row-buffer hit rate, latency histograms, command counts, refreshes,
    // per-bank utilisation). Final once the simulation has ended (end_of_simulation) or after finish(), which
    // stops the model (requests still in flight are not completed).
    stats::group& stats() override { return m_sys.stats(); }
    void finish();

    // Optional per-command trace: called for every DRAM command with its simulated time.
    using command_trace = std::function<void(const command_record&, const sc_core::sc_time&)>;
    void set_command_trace(command_trace f);

    dram_system& system() { return m_sys; }
    tlmx::sparse_store& store() { return m_store; }

    sc_core::sc_time time_of(cycle_t c) const;
    cycle_t cycle_of(const sc_core::sc_time& t) const;

private:
    struct entry {
        tlm::tlm_generic_payload* trans = nullptr;
        sc_core::sc_event* lt_done = nullptr;  // LT: the waiting thread's event; null for AT
        bool free = true;
        uint64_t slow_ps = 0;       // added by slow faults
        uint64_t arrival_ps = 0;    // for observer events
        std::vector<size_t> pcs;    // with faults or observers: the serving pseudo-channel of each burst
    };

    hbm_dram(sc_core::sc_module_name name, const hbm_dram_config& dram, const hbm_config& cfg);
    void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) override;
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay) override;
    unsigned transport_dbg(tlm::tlm_generic_payload& trans) override;
    void peq_cb(tlm::tlm_generic_payload& trans, const tlm::tlm_phase& phase);
    void wake();
    void end_of_simulation() override;

    // Checks the request; on error sets the response status and returns false.
    bool check(tlm::tlm_generic_payload& trans) const;
    // The serving pseudo-channel of each burst into m_pcs (only with faults or observers); false (error response
    // set) when a disabled pseudo-channel fails the request.
    bool route(tlm::tlm_generic_payload& trans);
    void access_data(tlm::tlm_generic_payload& trans);
    uint32_t submit(tlm::tlm_generic_payload& trans, sc_core::sc_event* lt_done);
    void notify_observers(const entry& e, cycle_t done);
    void schedule_wake();
    void send_response(tlm::tlm_generic_payload& trans);
    // The initiator took the response (END_RESP): the response channel is free, the next queued response goes out.
    void response_done(tlm::tlm_generic_payload& trans);

    void accepted(uint64_t tag, cycle_t at) override;
    void completed(uint64_t tag, cycle_t at) override;

    dram_system m_sys;
    tlmx::sparse_store m_store;
    double m_tck_ps;
    std::vector<entry> m_entries;
    std::vector<uint32_t> m_free;
    tlm_utils::peq_with_cb_and_phase<hbm_dram> m_peq;
    sc_core::sc_event m_wake;
    bool m_resp_busy = false;
    std::deque<tlm::tlm_generic_payload*> m_resp_queue;
    bool m_finished = false;
    std::vector<size_t> m_pcs;  // route()'s result for the request being submitted
};

} // namespace trnsim::hbm

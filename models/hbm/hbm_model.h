// What every HBM model offers the chip, the platforms and the observers, whatever its timing (hbm_simple: a
// bandwidth/latency port per channel; hbm_dram: the detailed DRAM model of models/hbm/dram): one target socket for
// the whole HBM (addresses relative to its base), its statistics (bytes_read, bytes_written, fault_errors,
// remapped_blocks, slowed_requests, corrupted_transfers and the model's own), per-channel observer events, the
// injected faults of hbm_config::faults (hbm_faults) and the functional flag (false: timing only, no data stored
// or returned). make_hbm (platforms/single_chip/factories.h) builds the one chip.hbm.model names.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/hbm/hbm_faults.h"
#include "tlm/observer.h"
#include "tlm/stats.h"

namespace trnsim::hbm {

// One channel's share of a transaction: the blocks of one request that went to one channel (after remap faults)
// and when the channel worked on them. hbm_simple: begin is when the channel started on them (queueing excluded);
// hbm_dram (channel = pseudo-channel): the request's arrival to its completion (queueing included).
struct hbm_event {
    uint32_t channel;
    uint64_t addr;   // first byte (HBM-local)
    uint64_t bytes;
    bool read;
    uint64_t begin_ps, end_ps;
};

class hbm_model : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<hbm_model> in;

    virtual stats::group& stats() = 0;
    virtual double peak_gbps() const = 0;
    virtual uint32_t channels() const = 0;
    virtual uint64_t capacity() const = 0;
    bool functional() const { return m_functional; }
    void observe(tlmx::observer_list<hbm_event>::callback cb) { m_observers.add(std::move(cb)); }

protected:
    // Registers b_transport and transport_dbg on `in` (a model with an AT path also calls register_nb()).
    hbm_model(sc_core::sc_module_name name, bool functional, const std::vector<tlmx::fault_spec>& faults,
              size_t channels);
    void register_nb() { in.register_nb_transport_fw(this, &hbm_model::nb_transport_fw); }
    virtual void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) = 0;
    virtual unsigned transport_dbg(tlm::tlm_generic_payload& gp) = 0;
    virtual tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                               sc_core::sc_time& delay);

    const bool m_functional;
    hbm_faults m_faults;
    tlmx::observer_list<hbm_event> m_observers;
};

} // namespace trnsim::hbm

// One chip assembled from its config: cores, HBM and the on-chip interconnect, with addresses from the config.
// No modelling logic here: wiring only.
#pragma once
#include <memory>
#include <vector>

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/core/neuron_core.h"
#include "models/hbm/hbm_model.h"
#include "models/link/fabric_router.h"
#include "models/tensor_engine/compute_pool.h"
#include "models/tensor_engine/te_job.h"
#include "platforms/config/platform_config.h"
#include "tlm/router.h"
#include "tlm/stats.h"

namespace trnsim::platform {

// Where a chip sits in a multi-chip platform: its global id, its server's first chip and torus, the platform's size.
struct fabric_place {
    uint32_t chip = 0, first_chip = 0, total_chips = 1;
    link::torus_shape shape;
};

class chip : public sc_core::sc_module {
public:
    tlmx::router noc;                                    // in: DMA engines, host, fabric; out: HBM, core windows, fabric
    tlm_utils::simple_initiator_socket<chip> host;       // host-side loader (backdoor, zero time)
    std::vector<std::unique_ptr<core::neuron_core>> cores;
    // Members of multi-chip platforms only: the NoC sends every global address (link::global_address, bit 63) to
    // it, and it delivers what other chips send here to the NoC with the chip-local address.
    std::unique_ptr<link::fabric_router> fabric;

    // With `place`, the chip is a member of a multi-chip platform and gets its fabric router.
    chip(sc_core::sc_module_name name, const chip_config& cfg, const fabric_place* place = nullptr);
    ~chip() override;

    const chip_config& config() const { return m_cfg; }
    uint64_t core_window(uint32_t core) const { return m_cfg.core_base + uint64_t(core) * m_cfg.core_stride; }
    // The chip-local address of core `core`'s semaphore register `sem` (core_config::sem_base).
    uint64_t sem_register(uint32_t core, uint32_t sem) const { return core_window(core) + m_cfg.core.sem_register(sem); }
    // Host access to chip-global addresses (HBM, SBUF, PSUM); throws std::out_of_range for unmapped addresses.
    void host_write(uint64_t addr, const void* data, uint64_t len);
    void host_read(uint64_t addr, void* data, uint64_t len);

    stats::group& stats() { return m_stats; }
    double hbm_peak_gbps() const { return m_cfg.hbm.bandwidth_gbps; }
    // The chip's HBM model (chip.hbm.model chooses which), through the interface every model offers: its stats
    // ("hbm.bytes_read", ...), observer events, channels.
    hbm::hbm_model& hbm() { return *m_hbm; }

private:
    const chip_config& m_cfg;
    te::te_config m_te_untraced;  // the engines of cores outside wave_cores: cfg.core.te without its waveform
    te::compute_pool m_pool;  // before the back ends that use it
    std::vector<std::unique_ptr<sc_core::sc_module>> m_backends;
    std::unique_ptr<hbm::hbm_model> m_hbm;
    stats::group m_stats;
};

} // namespace trnsim::platform

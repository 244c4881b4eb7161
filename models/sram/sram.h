// A partitioned, banked on-chip SRAM (SBUF / PSUM) as a TLM target.
// Address = partition * partition_bytes + offset. A transfer occupies the port of the bank holding its first byte
// for bytes / bank bandwidth, so engines hitting the same bank contend. With `accumulate`, a write carrying
// tlmx::ext_accumulate adds its FP32 elements to the stored ones (PSUM near-memory accumulation).
#pragma once
#include <cstdlib>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/sram/sram_config.h"
#include "tlm/bw_port.h"
#include "tlm/stats.h"

namespace trnsim::sram {

class sram : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<sram> in;

    sram(sc_core::sc_module_name name, const sram_config& cfg);
    const sram_config& config() const { return m_cfg; }
    uint8_t* data() { return m_data.get(); }
    stats::group& stats() { return m_stats; }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);

    struct free_deleter {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    sram_config m_cfg;
    std::unique_ptr<uint8_t, free_deleter> m_data;  // calloc'd: untouched pages cost no memory
    std::vector<tlmx::gap_port> m_banks;  // placed in time: remote writes arrive ahead of the simulated time
    stats::group m_stats;
    stats::counter m_bytes_read{"bytes_read", "B", "bytes read"};
    stats::counter m_bytes_written{"bytes_written", "B", "bytes written (including accumulates)"};
    stats::counter m_accumulates{"accumulate_writes", "count", "near-memory FP32 accumulate writes"};
    stats::counter m_accumulate_bytes{"accumulate_bytes", "B", "bytes of near-memory accumulate writes (read-modify-write)"};
    stats::counter m_bank_wait{"bank_wait_ns", "ns", "time transfers queued behind others on a bank port"};
};

} // namespace trnsim::sram

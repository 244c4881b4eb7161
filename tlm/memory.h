// A memory-backed TLM target: sparse pages, fixed read/write latency, optional bandwidth limit, DMI.
#pragma once
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "tlm/bw_port.h"
#include "tlm/sparse_store.h"
#include "tlm/stats.h"

namespace trnsim::tlmx {

struct memory_config {
    uint64_t size = 0;
    sc_core::sc_time read_latency = sc_core::SC_ZERO_TIME;
    sc_core::sc_time write_latency = sc_core::SC_ZERO_TIME;
    double bytes_per_ns = 0;  // 0 = unlimited
    bool dmi = true;
};

class memory : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<memory> in;

    memory(sc_core::sc_module_name name, const memory_config& cfg);
    sparse_store& store() { return m_store; }
    stats::group& stats() { return m_stats; }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);

    memory_config m_cfg;
    sparse_store m_store;
    bw_port m_port;
    stats::group m_stats;
    stats::counter m_reads{"reads", "count", "read transactions"};
    stats::counter m_writes{"writes", "count", "write transactions"};
    stats::counter m_bytes_read{"bytes_read", "B", "bytes read"};
    stats::counter m_bytes_written{"bytes_written", "B", "bytes written"};
};

} // namespace trnsim::tlmx

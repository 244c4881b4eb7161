// An address-decoding interconnect node. The platform maps ranges to output ports at binding time; a target sees
// addresses relative to its range base. Unmapped accesses get TLM_ADDRESS_ERROR_RESPONSE and are counted and
// remembered (last_error()) so the initiator can report them with its own name.
// Optional per-output-port bandwidth and a per-hop latency make contention on the interconnect real.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "tlm/address_map.h"
#include "tlm/bw_port.h"
#include "tlm/stats.h"

namespace trnsim::tlmx {

// What an observer sees of each transaction passing a router (begin = initiator's local time when it entered).
struct tx_event {
    const char* router;
    const address_range* target;  // null for an unmapped access
    const tlm::tlm_generic_payload* gp;
    sc_core::sc_time begin, end;
};
using tx_observer = std::function<void(const tx_event&)>;

class router : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<router> in;
    tlm_utils::multi_passthrough_initiator_socket<router> out;

    router(sc_core::sc_module_name name, sc_core::sc_time hop_latency = sc_core::SC_ZERO_TIME);

    // Maps [base, base+size) to output port `port` (the port-th binding of `out`). Throws on overlap.
    void map(uint64_t base, uint64_t size, size_t port, const std::string& target_name);
    // Limits the bandwidth of output port `port` (bytes per ns = GB/s): a transfer holds it for bytes / bandwidth,
    // from the earliest time at or after its arrival at which it is idle that long.
    void limit_port(size_t port, double bytes_per_ns);
    void observe(tx_observer obs) { m_observers.push_back(std::move(obs)); }

    const address_map& map_of() const { return m_map; }
    const std::string& last_error() const { return m_last_error; }
    stats::group& stats() { return m_stats; }

private:
    void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(int id, tlm::tlm_generic_payload& gp);
    bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
    void invalidate_direct_mem_ptr(int port, sc_dt::uint64 start, sc_dt::uint64 end);
    const address_range* decode(tlm::tlm_generic_payload& gp);

    address_map m_map;
    sc_core::sc_time m_hop;
    std::vector<std::unique_ptr<gap_port>> m_port_bw;  // placed in time (transfers arrive ahead of the clock)
    std::vector<tx_observer> m_observers;
    std::string m_last_error;
    stats::group m_stats;
    stats::counter m_transactions{"transactions", "count", "transactions routed"};
    stats::counter m_bytes{"bytes", "B", "bytes routed"};
    stats::counter m_errors{"address_errors", "count", "accesses to unmapped addresses"};
};

} // namespace trnsim::tlmx

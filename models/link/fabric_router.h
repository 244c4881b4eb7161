// A chip's fabric router: where the chip's global (fabric) addresses leave and enter the chip. Transactions come in
// from the chip (its interconnect or its DMA) and from every incoming link and the NIC; the chip-id field of the
// address (global_address.h) decides where they go:
//   this chip                     -> `local` out with the chip-local address (the chip's interconnect or memory);
//   a chip of this server         -> the link port dimension-order routing picks (torus_routing.h), hop by hop;
//   a chip of another server      -> the NIC (the switched network finds the server).
// The router never waits. A transaction without transfer_ext (a DMA burst) gets one for its trip, so links see when
// its bytes are available; at the local delivery the delay becomes the tail (the last byte's arrival).
// Unroutable addresses (a chip id beyond the platform, or a chip cut off by down links) get
// TLM_ADDRESS_ERROR_RESPONSE.
#pragma once
#include <array>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "models/link/torus_routing.h"
#include "tlm/stats.h"

namespace trnsim::link {

class fabric_router : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<fabric_router> in;
    tlm_utils::multi_passthrough_initiator_socket<fabric_router> out;

    // `chip`: this chip's global id; `first_chip`: the id of chip 0 of its server; `shape`: the server's torus.
    // `total_chips`: chips of the whole platform.
    fabric_router(sc_core::sc_module_name name, uint32_t chip, uint32_t first_chip, const torus_shape& shape,
                  uint32_t total_chips);
    using target_socket = tlm::tlm_base_target_socket_b<32, tlm::tlm_fw_transport_if<>, tlm::tlm_bw_transport_if<>>;
    // Binds out to `target` as the local / link `port` / NIC output (call once each, in any order).
    void bind_local(target_socket& target);
    void bind_port(int port, target_socket& target);
    void bind_nic(target_socket& target);
    // The output a fabric address goes to: LOCAL, a link port 0..5, or NIC.
    static constexpr int NIC = PORTS;
    int decide(uint64_t fabric_addr) const;
    stats::group& stats() { return m_stats; }

private:
    void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(int id, tlm::tlm_generic_payload& gp);
    int out_index(int where) const { return where == LOCAL ? m_local : m_port[size_t(where)]; }

    uint32_t m_chip, m_first, m_total;
    torus_shape m_shape;
    int m_local = -1, m_bound = 0;
    std::array<int, PORTS + 1> m_port;  // link ports, then the NIC
    stats::group m_stats;
    stats::counter m_local_tx{"delivered", "count", "transactions delivered to this chip"};
    stats::counter m_forwarded{"forwarded", "count", "transactions forwarded to a link or the NIC"};
    stats::counter m_errors{"address_errors", "count", "transactions to no chip of the platform"};
};

} // namespace trnsim::link

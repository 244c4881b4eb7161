// Timing of coarse transfers over one direction of a chip-to-chip link (or a NIC / switch port): plain C++ in
// picoseconds, unit-tested without a kernel.
//
// A transfer is not simulated flit by flit. It is one reservation on each resource it crosses (a link direction, a
// port), computed from a closed formula:
//
//   packets      p = ceil(bytes / payload_bytes)
//   wire bytes   w = bytes + p * overhead_bytes                      (header / CRC / flit framing per packet)
//   raw rate     r = gbps (bytes per ns on the wire)
//   credit rate  c = credits * payload_bytes / rtt,  rtt = 2 * latency + packet_time + credit_return
//                   (a sender may have `credits` packets unacknowledged; a credit comes back one round trip after
//                   its packet left, so with few credits the link idles waiting for them)
//   payload rate  eff = min(r * payload / (payload + overhead), c)   -> effective_gbps()
//   occupancy    bytes / eff
//
// Cut-through over several hops: a transfer is described by the time its first byte (head) and its last byte (tail)
// are available at the input of a resource. The resource starts when both the head has arrived and it is free
// (FCFS queueing: start = max(head, free)); it cannot finish before its own serialisation nor before the tail has
// arrived plus one packet (it forwards whole packets): end = max(start + occupancy, tail + packet_time). The head
// leaves one packet time after the start; both reach the far end `latency` later. The resource is then busy until
// `end`. So a transfer of B bytes over h uncongested identical hops takes h * (latency + packet_time) + B / eff,
// not h * B / eff (store and forward).
//
// Transfers are placed in time, not in call order: a transfer takes the earliest interval at or after its head at
// which the resource is idle for as long as it holds it, even if transfers reserved earlier (in call order) hold it
// later. Loosely-timed initiators reserve ahead of the simulated time: a transfer on its second hop arrives with its
// first hop's queueing and latency in its head, and with a single "free from" pointer every transfer called after it
// but arriving earlier would queue behind it while the resource sits idle (tlmx::gap_port, whose placement this
// uses). Among transfers arriving at the same time the first called goes first.
//
// A transfer of one packet (a semaphore write) is placed at its head, not behind the transfers reserved ahead of it:
// the hardware arbitrates packet by packet, so it would go at the next packet boundary; the reservations it passes
// are not moved (under a nanosecond each). It still counts in bytes, wire bytes and busy time.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "tlm/bw_port.h"

namespace trnsim::link {

struct link_config {
    double gbps = 256;               // raw bandwidth per direction, GB/s = bytes per ns
    double latency_ns = 500;         // wire + PHY + port pipeline, one way
    uint64_t payload_bytes = 256;    // payload per packet
    uint64_t overhead_bytes = 32;    // header + framing + CRC per packet
    uint32_t credits = 64;           // packets in flight per direction (receiver buffer)
    double credit_return_ns = 0;     // extra time from a packet's arrival to its credit's return

    // Effective payload bandwidth (bytes per ns), from the formula above.
    double effective_gbps() const;
    // Bandwidth available without credit limiting (framing only).
    double framing_gbps() const { return gbps * double(payload_bytes) / double(payload_bytes + overhead_bytes); }
    // Credit-limited bandwidth.
    double credit_gbps() const;
    double packet_ns() const { return double(payload_bytes + overhead_bytes) / gbps; }
    double rtt_ns() const { return 2 * latency_ns + packet_ns() + credit_return_ns; }
    uint64_t packets(uint64_t bytes) const { return (bytes + payload_bytes - 1) / payload_bytes; }
    uint64_t wire_bytes(uint64_t bytes) const { return bytes + packets(bytes) * overhead_bytes; }
    // Empty if valid, else what is wrong ("gbps must be > 0").
    std::string check() const;
};

// Where a transfer is: when its first and its last byte are available (ps, absolute simulated time).
struct flight {
    uint64_t head_ps = 0;
    uint64_t tail_ps = 0;
};

// One resource direction's reservation timeline.
class direction_timeline {
public:
    explicit direction_timeline(const link_config& p = {}) { configure(p); }
    void configure(const link_config& p);
    const link_config& params() const { return m_p; }
    // A shared pool (a switch's aggregate uplinks): many transfers slower than the pool share it at once, so a
    // transfer holds it only for its occupancy (bytes / rate), not until its tail has passed.
    void set_shared(bool shared) { m_shared = shared; }

    // Reserves the resource for a transfer of `bytes` arriving as `in`; returns where it is at the far end.
    // `held` (if given) gets the interval the transfer holds the resource: [start, end) in ps.
    flight reserve(const flight& in, uint64_t bytes, flight* held = nullptr);
    // Drops the record of busy intervals that end before t (call with the current simulated time: no later
    // reservation arrives earlier). Keeps the record, and each reservation's search, short.
    void forget_before(uint64_t t) { m_busy.forget_before(t); }

    uint64_t bytes() const { return m_bytes; }
    uint64_t wire_bytes() const { return m_wire_bytes; }
    uint64_t transfers() const { return m_transfers; }
    uint64_t busy_ps() const { return m_busy_ps; }     // sum of occupancies (bytes / effective rate)
    uint64_t wait_ps() const { return m_wait_ps; }     // total time transfers queued behind others
    uint64_t free_at_ps() const { return m_busy.free_at_ps(); }  // the end of the latest reservation

private:
    link_config m_p;
    double m_ps_per_byte = 0;   // at the effective rate
    uint64_t m_packet_ps = 0, m_latency_ps = 0;
    bool m_shared = false;
    tlmx::gap_port m_busy;  // the intervals transfers hold the resource
    uint64_t m_bytes = 0, m_wire_bytes = 0, m_transfers = 0, m_busy_ps = 0, m_wait_ps = 0;
};

} // namespace trnsim::link

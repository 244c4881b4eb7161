#include "models/link/link_timing.h"

namespace trnsim::link {

double link_config::credit_gbps() const { return double(credits) * double(payload_bytes) / rtt_ns(); }

double link_config::effective_gbps() const { return std::min(framing_gbps(), credit_gbps()); }

std::string link_config::check() const {
    if (!(gbps > 0)) return "gbps must be > 0";
    if (!(latency_ns >= 0)) return "latency_ns must be >= 0";
    if (payload_bytes == 0) return "payload_bytes must be > 0";
    if (credits == 0) return "credits must be > 0";
    if (!(credit_return_ns >= 0)) return "credit_return_ns must be >= 0";
    return "";
}

void direction_timeline::configure(const link_config& p) {
    m_p = p;
    m_ps_per_byte = 1000.0 / p.effective_gbps();
    m_packet_ps = uint64_t(std::llround(p.packet_ns() * 1000.0));
    m_latency_ps = uint64_t(std::llround(p.latency_ns * 1000.0));
}

flight direction_timeline::reserve(const flight& in, uint64_t bytes, flight* held) {
    auto occ = uint64_t(std::llround(double(bytes) * m_ps_per_byte));
    // The last packet: a whole packet unless the transfer is shorter.
    uint64_t last_pkt = bytes >= m_p.payload_bytes
                            ? m_packet_ps
                            : uint64_t(std::llround(double(bytes + m_p.overhead_bytes) * 1000.0 / m_p.gbps));
    // Started at t, the transfer ends at max(t + occupancy, max(tail, t) + last packet); a shared pool is held for
    // the occupancy only, a link until the end. Both grow with t, as gap_port::place requires.
    const uint64_t tail = in.tail_ps;
    auto end_at = [&](uint64_t t) { return std::max(t + occ, std::max(tail, t) + last_pkt); };
    const bool one_packet = bytes <= m_p.payload_bytes;
    const uint64_t start = one_packet ? in.head_ps
                                      : m_busy.place(in.head_ps, [&](uint64_t t) { return m_shared ? occ : end_at(t) - t; });
    const uint64_t end = end_at(start);
    if (start > in.head_ps) m_wait_ps += start - in.head_ps;
    const uint64_t free = m_shared ? start + occ : end;
    if (held) *held = flight{start, free};
    m_busy_ps += occ;
    m_bytes += bytes;
    m_wire_bytes += m_p.wire_bytes(bytes);
    ++m_transfers;
    return flight{start + last_pkt + m_latency_ps, end + m_latency_ps};
}

} // namespace trnsim::link

// A bandwidth- and latency-limited port: transfers through it are serialised, so contention is real.
// Plain C++ in picoseconds; a module calls reserve() with its current (local) time and waits for the answer.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace trnsim::tlmx {

class bw_port {
public:
    // bytes_per_ns == GB/s. latency_ps is added after the transfer's serialisation.
    bw_port(double bytes_per_ns = 0, uint64_t latency_ps = 0) { configure(bytes_per_ns, latency_ps); }
    void configure(double bytes_per_ns, uint64_t latency_ps) {
        m_ps_per_byte = bytes_per_ns > 0 ? 1000.0 / bytes_per_ns : 0.0;
        m_latency_ps = latency_ps;
    }

    // A transfer of `bytes` ready at `now_ps` occupies the port from max(now, free) for bytes/bandwidth;
    // returns the time its last byte arrives (end of occupancy + latency).
    uint64_t reserve(uint64_t now_ps, uint64_t bytes) {
        uint64_t start = std::max(now_ps, m_free_ps);
        auto dur = round_ps(double(bytes) * m_ps_per_byte);
        m_free_ps = start + dur;
        m_busy_ps += dur;
        m_bytes += bytes;
        ++m_transfers;
        if (start > now_ps) m_wait_ps += start - now_ps;
        return m_free_ps + m_latency_ps;
    }

    uint64_t busy_ps() const { return m_busy_ps; }
    uint64_t bytes() const { return m_bytes; }
    uint64_t transfers() const { return m_transfers; }
    uint64_t wait_ps() const { return m_wait_ps; }  // total time transfers queued behind others
    uint64_t free_at_ps() const { return m_free_ps; }

    // std::llround for the non-negative durations here (half away from zero), without the library call: x - floor(x)
    // is exact for x < 2^52.
    static uint64_t round_ps(double x) {
        const double f = std::floor(x);
        return uint64_t(f) + (x - f >= 0.5 ? 1 : 0);
    }

private:
    double m_ps_per_byte = 0;
    uint64_t m_latency_ps = 0;
    uint64_t m_free_ps = 0, m_busy_ps = 0, m_bytes = 0, m_transfers = 0, m_wait_ps = 0;
};

} // namespace trnsim::tlmx

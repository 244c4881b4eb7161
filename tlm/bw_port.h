// A bandwidth- and latency-limited port: transfers through it are serialised, so contention is real.
// Plain C++ in picoseconds; a module calls reserve() with its current (local) time and waits for the answer.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

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

// A bandwidth port whose reservations fill idle gaps: a transfer starts at the earliest time >= now_ps at which the
// port is idle for the whole of its duration, even if transfers reserved earlier (in call order) start later.
// For a resource that loosely-timed initiators reserve out of time order: a write arriving over a link carries a
// delay of microseconds, and with bw_port's single free pointer it would make every later-called but earlier-timed
// access queue behind it, leaving the port idle meanwhile. Busy intervals are kept merged; forget_before(t) drops
// those that end before t (call it with the current simulated time: no reservation can start earlier).
class gap_port {
public:
    explicit gap_port(double bytes_per_ns = 0) { m_ps_per_byte = bytes_per_ns > 0 ? 1000.0 / bytes_per_ns : 0.0; }

    // Reserves the transfer; returns its end. `start` (if given) gets its start.
    uint64_t reserve(uint64_t now_ps, uint64_t bytes, uint64_t* start_out = nullptr) {
        const uint64_t dur = bw_port::round_ps(double(bytes) * m_ps_per_byte);
        const uint64_t t = place(now_ps, [dur](uint64_t) { return dur; });
        m_busy_ps += dur;
        m_bytes += bytes;
        ++m_transfers;
        m_wait_ps += t - now_ps;
        if (start_out) *start_out = t;
        return t + dur;
    }
    // The earliest t >= from at which the port is idle for [t, t + length(t)), which it then holds; returns t.
    // length(t) may grow with t but never shrink faster than t grows (t + length(t) non-decreasing).
    template <class Length>
    uint64_t place(uint64_t from, Length length) {
        uint64_t t = from;
        // The first busy interval that ends after t (intervals are disjoint and sorted, so their ends are too).
        auto first = m_busy.begin() + ptrdiff_t(m_head);
        auto it = std::upper_bound(first, m_busy.end(), t, [](uint64_t v, const interval& i) { return v < i.first; });
        if (it != first && std::prev(it)->second > t) --it;
        uint64_t len = length(t);
        while (it != m_busy.end() && it->first < t + len) {  // overlaps [t, t + len): start after it
            if (it->second > t) {
                t = it->second;
                len = length(t);
            }
            ++it;
        }
        if (len > 0) insert(t, t + len);
        m_last_end = std::max(m_last_end, t + len);
        return t;
    }
    void forget_before(uint64_t t) {
        while (m_head < m_busy.size() && m_busy[m_head].second < t) ++m_head;
        if (m_head >= 64 && 2 * m_head >= m_busy.size()) {  // drop the forgotten front now and then
            m_busy.erase(m_busy.begin(), m_busy.begin() + ptrdiff_t(m_head));
            m_head = 0;
        }
    }

    uint64_t busy_ps() const { return m_busy_ps; }
    uint64_t bytes() const { return m_bytes; }
    uint64_t transfers() const { return m_transfers; }
    uint64_t wait_ps() const { return m_wait_ps; }
    uint64_t free_at_ps() const { return m_last_end; }  // the end of the latest reservation
    size_t intervals() const { return m_busy.size() - m_head; }

private:
    using interval = std::pair<uint64_t, uint64_t>;  // [start, end)
    // Adds [a, b) (idle before: the caller found the gap), merging with the intervals it touches.
    void insert(uint64_t a, uint64_t b) {
        auto first = m_busy.begin() + ptrdiff_t(m_head);
        auto next = std::lower_bound(first, m_busy.end(), a, [](const interval& i, uint64_t v) { return i.first < v; });
        if (next != m_busy.end() && next->first == b) {
            b = next->second;
            next = m_busy.erase(next);
            first = m_busy.begin() + ptrdiff_t(m_head);
        }
        if (next != first) {
            auto prev = std::prev(next);
            if (prev->second == a) {
                prev->second = b;
                return;
            }
        }
        m_busy.insert(next, interval(a, b));
    }

    double m_ps_per_byte = 0;
    // Busy intervals, sorted and disjoint; those before m_head are forgotten (most reservations land near the end,
    // so a vector beats a tree here).
    std::vector<interval> m_busy;
    size_t m_head = 0;
    uint64_t m_busy_ps = 0, m_bytes = 0, m_transfers = 0, m_wait_ps = 0, m_last_end = 0;
};

} // namespace trnsim::tlmx

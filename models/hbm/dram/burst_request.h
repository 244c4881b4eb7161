// The plain types the pseudo-channel controller and its policies (scheduler, page policy, refresh) share: a queued
// burst request, the two directions, a set of banks. The queue itself (controller/request_queue.h) is only named
// here, so the policy interfaces do not depend on the controller's container. Plain C++ (no SystemC).
#pragma once
#include <array>
#include <cstdint>

#include "models/hbm/dram/command.h"

namespace trnsim::hbm {

enum direction : unsigned { READ = 0, WRITE = 1 };

struct burst_request {
    static constexpr uint8_t ACTIVATED = 1;   // an ACT was issued for it (row miss)
    static constexpr uint8_t CONFLICTED = 2;  // a PRE was issued for it (another row was open)

    uint64_t tag = 0;       // owner's handle, returned with the completion
    cycle_t arrival = 0;
    uint64_t seq = 0;       // arrival order inside the pseudo-channel
    uint32_t row = 0;
    uint32_t column = 0;    // burst index in the row
    uint16_t bank = 0;
    uint8_t flags = 0;
    bool write = false;
    int32_t next = -1, prev = -1;
};

// A set of bank indices (up to 256) iterated in increasing order.
class bank_set {
public:
    void set(uint32_t b) { m_w[b >> 6] |= uint64_t(1) << (b & 63); }
    void clear(uint32_t b) { m_w[b >> 6] &= ~(uint64_t(1) << (b & 63)); }
    bool test(uint32_t b) const { return (m_w[b >> 6] >> (b & 63)) & 1; }
    void clear_all() { m_w.fill(0); }
    void set_all(uint32_t n) {
        for (uint32_t w = 0; w < m_w.size(); ++w) {
            uint32_t lo = w * 64;
            m_w[w] = n >= lo + 64 ? ~uint64_t(0) : n > lo ? (uint64_t(1) << (n - lo)) - 1 : 0;
        }
    }
    bank_set operator&(const bank_set& o) const {
        bank_set r;
        for (unsigned w = 0; w < m_w.size(); ++w) r.m_w[w] = m_w[w] & o.m_w[w];
        return r;
    }
    bank_set& operator&=(const bank_set& o) {
        for (unsigned w = 0; w < m_w.size(); ++w) m_w[w] &= o.m_w[w];
        return *this;
    }
    bank_set operator|(const bank_set& o) const {
        bank_set r;
        for (unsigned w = 0; w < m_w.size(); ++w) r.m_w[w] = m_w[w] | o.m_w[w];
        return r;
    }
    bool any() const { return (m_w[0] | m_w[1] | m_w[2] | m_w[3]) != 0; }
    unsigned count() const {
        return unsigned(__builtin_popcountll(m_w[0]) + __builtin_popcountll(m_w[1]) + __builtin_popcountll(m_w[2]) +
                        __builtin_popcountll(m_w[3]));
    }
    bank_set& operator-=(const bank_set& o) {
        for (unsigned w = 0; w < m_w.size(); ++w) m_w[w] &= ~o.m_w[w];
        return *this;
    }
    template <class F> void for_each(F&& f) const {
        for (unsigned w = 0; w < m_w.size(); ++w) {
            uint64_t bits = m_w[w];
            while (bits) {
                unsigned i = unsigned(__builtin_ctzll(bits));
                bits &= bits - 1;
                f(uint32_t(w * 64 + i));
            }
        }
    }

private:
    std::array<uint64_t, 4> m_w{};
};

class request_queue;  // controller/request_queue.h

} // namespace trnsim::hbm

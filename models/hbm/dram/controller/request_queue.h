// Pending burst requests of one pseudo-channel: a fixed pool of slots with, per direction (read, write) and per
// bank, an intrusive doubly linked list in arrival order, and a bit set of the banks that have requests.
// Plain C++ (no SystemC).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/hbm/dram/burst_request.h"
#include "models/hbm/dram/command.h"

namespace trnsim::hbm {

class request_queue {
public:
    request_queue(uint32_t banks, uint32_t read_depth, uint32_t write_depth)
        : m_depth{read_depth, write_depth}, m_pool(read_depth + write_depth),
          m_head{std::vector<int32_t>(banks, -1), std::vector<int32_t>(banks, -1)},
          m_tail{std::vector<int32_t>(banks, -1), std::vector<int32_t>(banks, -1)},
          m_in_bank{std::vector<uint32_t>(banks, 0), std::vector<uint32_t>(banks, 0)} {
        for (int32_t i = int32_t(m_pool.size()) - 1; i >= 0; --i) m_free.push_back(i);
    }

    uint32_t depth(unsigned d) const { return m_depth[d]; }
    uint32_t count(unsigned d) const { return m_count[d]; }
    uint32_t total() const { return m_count[0] + m_count[1]; }
    bool full(unsigned d) const { return m_count[d] >= m_depth[d]; }
    uint32_t in_bank(unsigned d, uint32_t bank) const { return m_in_bank[d][bank]; }
    const bank_set& banks_with_requests(unsigned d) const { return m_active[d]; }

    int32_t head(unsigned d, uint32_t bank) const { return m_head[d][bank]; }
    const burst_request& at(int32_t i) const { return m_pool[size_t(i)]; }
    burst_request& at(int32_t i) { return m_pool[size_t(i)]; }

    int32_t push(const burst_request& r) {
        unsigned d = r.write ? WRITE : READ;
        int32_t i = m_free.back();
        m_free.pop_back();
        burst_request& s = m_pool[size_t(i)];
        s = r;
        s.seq = m_seq++;
        s.next = -1;
        s.prev = m_tail[d][r.bank];
        if (s.prev >= 0) m_pool[size_t(s.prev)].next = i;
        else m_head[d][r.bank] = i;
        m_tail[d][r.bank] = i;
        ++m_in_bank[d][r.bank];
        ++m_count[d];
        m_active[d].set(r.bank);
        return i;
    }

    void remove(int32_t i) {
        burst_request& s = m_pool[size_t(i)];
        unsigned d = s.write ? WRITE : READ;
        if (s.prev >= 0) m_pool[size_t(s.prev)].next = s.next;
        else m_head[d][s.bank] = s.next;
        if (s.next >= 0) m_pool[size_t(s.next)].prev = s.prev;
        else m_tail[d][s.bank] = s.prev;
        if (--m_in_bank[d][s.bank] == 0) m_active[d].clear(s.bank);
        --m_count[d];
        m_free.push_back(i);
    }

    // Whether a request other than `except` in either direction targets (bank, row).
    bool other_hit(uint32_t bank, uint32_t row, int32_t except) const {
        for (unsigned d = 0; d < 2; ++d)
            for (int32_t i = m_head[d][bank]; i >= 0; i = m_pool[size_t(i)].next)
                if (i != except && m_pool[size_t(i)].row == row) return true;
        return false;
    }

private:
    uint32_t m_depth[2];
    uint32_t m_count[2] = {0, 0};
    uint64_t m_seq = 0;
    std::vector<burst_request> m_pool;
    std::vector<int32_t> m_free;
    std::vector<int32_t> m_head[2], m_tail[2];
    std::vector<uint32_t> m_in_bank[2];
    bank_set m_active[2];
};

} // namespace trnsim::hbm

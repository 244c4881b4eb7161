#include "tlm/address_map.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace trnsim::tlmx {

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

void address_map::add(uint64_t base, uint64_t size, size_t port, const std::string& name) {
    if (size == 0) throw std::invalid_argument("address map: range '" + name + "' has size 0");
    if (base + size < base) throw std::invalid_argument("address map: range '" + name + "' wraps around 2^64");
    for (const auto& r : m_ranges)
        if (base < r.end() && r.base < base + size)
            throw std::invalid_argument("address map: '" + name + "' [" + hex(base) + ", " + hex(base + size) +
                                        ") overlaps '" + r.name + "' [" + hex(r.base) + ", " + hex(r.end()) + ")");
    address_range nr{base, size, port, name};
    m_ranges.insert(std::upper_bound(m_ranges.begin(), m_ranges.end(), base,
                                     [](uint64_t b, const address_range& r) { return b < r.base; }),
                    nr);
}

const address_range* address_map::decode(uint64_t addr, uint64_t len) const {
    auto it = std::upper_bound(m_ranges.begin(), m_ranges.end(), addr,
                               [](uint64_t a, const address_range& r) { return a < r.base; });
    if (it == m_ranges.begin()) return nullptr;
    --it;
    if (addr >= it->end()) return nullptr;
    if (len > it->end() - addr) return nullptr;
    return &*it;
}

} // namespace trnsim::tlmx

// An address map: non-overlapping [base, base+size) ranges, each naming a target port. Plain C++.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trnsim::tlmx {

struct address_range {
    uint64_t base = 0;
    uint64_t size = 0;
    size_t port = 0;        // output port index of the router
    std::string name;       // target name for messages ("hbm", "core3.sbuf")
    uint64_t end() const { return base + size; }  // one past the last byte
};

class address_map {
public:
    // Throws std::invalid_argument naming both ranges if the new one overlaps an existing one or is empty.
    void add(uint64_t base, uint64_t size, size_t port, const std::string& name);
    // The range holding all of [addr, addr+len), or nullptr (unmapped, or straddling two ranges).
    const address_range* decode(uint64_t addr, uint64_t len) const;
    const std::vector<address_range>& ranges() const { return m_ranges; }

private:
    std::vector<address_range> m_ranges;  // sorted by base
};

std::string hex(uint64_t v);

} // namespace trnsim::tlmx

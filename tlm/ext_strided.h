// Payload extension: the data buffer holds `rows` rows of data_length / rows bytes each, contiguous, while in the
// target's address space row r starts at address + r * stride. One transaction moves a whole partition-strided
// tile (an engine reads all SBUF partitions at once); targets that understand it time each row on its own bank.
#pragma once
#include <cstdint>

#include <tlm>

namespace trnsim::tlmx {

struct ext_strided : tlm::tlm_extension<ext_strided> {
    uint32_t rows = 1;
    uint64_t stride = 0;
    ext_strided(uint32_t r = 1, uint64_t s = 0) : rows(r), stride(s) {}
    tlm::tlm_extension_base* clone() const override { return new ext_strided(*this); }
    void copy_from(const tlm::tlm_extension_base& o) override { *this = static_cast<const ext_strided&>(o); }
    // Bytes from the first row's start to the last row's end.
    // Saturates at 2^64 - 1 when the arithmetic would wrap (so no target or decoder accepts such a transaction).
    uint64_t extent(uint64_t data_length) const {
        if (!rows) return 0;
        const uint64_t top = ~uint64_t(0), row = data_length / rows;
        if (rows > 1 && stride > (top - row) / (rows - 1)) return top;
        return (rows - 1) * stride + row;
    }
};

} // namespace trnsim::tlmx

// The multi-chip global address space: a chip-id field above the chip-local address map.
//
//   bit  63      1 = a global (fabric) address; 0 = a chip-local address (the chip's own HBM, SBUF, PSUM windows)
//   bits 62..42  chip id (21 bits: up to 2,097,152 chips), dense ids as in collective::topology
//   bits 41..0   the address inside that chip's local map (4 TiB: HBM at chip.address_map.hbm_base, core windows
//                at core_base + i * core_stride; platform validation checks the local map fits in 42 bits)
//
// A DMA on chip A that writes global address G(B, a) lands at local address a of chip B: A's on-chip interconnect
// sends every address with bit 63 set to its fabric router, which forwards it link by link (dimension-order routing)
// or to the NIC, and B's fabric router hands it to B's interconnect with the local address a. A chip may address
// itself globally (the transfer loops back without touching a link).
// Routers see addresses relative to the window they map: the fabric works on the low 63 bits ("fabric address").
#pragma once
#include <cstdint>

namespace trnsim::link {

constexpr uint64_t GLOBAL_BIT = uint64_t(1) << 63;
constexpr unsigned CHIP_SHIFT = 42;
constexpr unsigned CHIP_BITS = 21;
constexpr uint64_t LOCAL_MASK = (uint64_t(1) << CHIP_SHIFT) - 1;
constexpr uint64_t MAX_CHIPS = uint64_t(1) << CHIP_BITS;

constexpr uint64_t global_address(uint32_t chip, uint64_t local) {
    return GLOBAL_BIT | (uint64_t(chip) << CHIP_SHIFT) | (local & LOCAL_MASK);
}
constexpr bool is_global(uint64_t a) { return (a & GLOBAL_BIT) != 0; }
// For global or fabric (bit 63 stripped) addresses alike.
constexpr uint32_t chip_of(uint64_t a) { return uint32_t((a >> CHIP_SHIFT) & (MAX_CHIPS - 1)); }
constexpr uint64_t local_of(uint64_t a) { return a & LOCAL_MASK; }

} // namespace trnsim::link

// Bit-field access to Verilated ports of any width: integral ports (CData..QData, uint32_t/uint64_t in SystemC),
// VlWide<N> (--cc wide ports) and sc_bv<N> (SystemC wide ports).
#pragma once
#include <cstdint>
#include <type_traits>

#include "verilated.h"

namespace trnsim::cosim {

template <class P>
inline std::enable_if_t<std::is_integral_v<P>> set_field(P& port, unsigned lsb, unsigned width, uint32_t v) {
    const P mask = P(((width >= 32) ? 0xFFFFFFFFull : ((1ull << width) - 1)) << lsb);
    port = P((port & ~mask) | ((P(v) << lsb) & mask));
}
template <class P> inline std::enable_if_t<std::is_integral_v<P>, uint32_t> get_field(const P& port, unsigned lsb,
                                                                                       unsigned width) {
    return uint32_t((uint64_t(port) >> lsb) & ((width >= 32) ? 0xFFFFFFFFull : ((1ull << width) - 1)));
}

// VlWide: fields never straddle a 32-bit word here (lanes are 16 or 32 bits, aligned).
template <std::size_t N> inline void set_field(VlWide<N>& port, unsigned lsb, unsigned width, uint32_t v) {
    uint32_t& w = port[lsb / 32];
    const unsigned sh = lsb % 32;
    const uint32_t mask = (width >= 32 ? 0xFFFFFFFFu : ((1u << width) - 1)) << sh;
    w = (w & ~mask) | ((v << sh) & mask);
}
template <std::size_t N> inline uint32_t get_field(const VlWide<N>& port, unsigned lsb, unsigned width) {
    const uint32_t w = port[lsb / 32];
    return (w >> (lsb % 32)) & (width >= 32 ? 0xFFFFFFFFu : ((1u << width) - 1));
}

} // namespace trnsim::cosim

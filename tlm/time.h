// Conversions between sc_time and integer picoseconds (the unit of every plain-C++ timing policy here).
#pragma once
#include <cstdint>

#include <systemc>

namespace trnsim::tlmx {

inline uint64_t to_ps(const sc_core::sc_time& t) { return uint64_t(t.to_seconds() * 1e12 + 0.5); }
inline sc_core::sc_time from_ps(uint64_t ps) { return sc_core::sc_time(double(ps), sc_core::SC_PS); }
inline uint64_t now_ps() { return to_ps(sc_core::sc_time_stamp()); }

} // namespace trnsim::tlmx

// Conversions between sc_time and integer picoseconds (the unit of every plain-C++ timing policy here).
#pragma once
#include <cstdint>

#include <systemc>

namespace trnsim::tlmx {

// The simulation's time resolution is SystemC's default, 1 ps (nothing here sets another; tests/models/tlm_models_test checks it), so
// an sc_time's value is its picosecond count: these are the exact conversions without floating point (the same
// values as t.to_seconds() * 1e12 rounded and sc_time(double(ps), SC_PS) for every time below 10^15 ps).
inline uint64_t to_ps(const sc_core::sc_time& t) { return t.value(); }
inline sc_core::sc_time from_ps(uint64_t ps) { return sc_core::sc_time::from_value(ps); }
inline uint64_t now_ps() { return to_ps(sc_core::sc_time_stamp()); }

} // namespace trnsim::tlmx

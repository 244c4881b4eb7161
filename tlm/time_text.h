// Simulated times as the reports print them: one unit, microseconds with three decimals ("1818.551 us"; zero is
// "0 us"), in every report, progress line and diagnostic, so that figures compare at a glance. Plain C++.
#pragma once
#include <cstdio>
#include <string>

namespace trnsim::tlmx {

inline std::string time_text(double ns) {
    if (ns == 0) return "0 us";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3f us", ns / 1000.0);
    return buf;
}

} // namespace trnsim::tlmx

#include "testbench/rtl_adapter/me_rtl_adapter.h"

#include <sstream>

#include "verilated.h"

namespace trnsim::rtl {

std::string me_rtl_sizes_string() {
    std::ostringstream os;
    const char* sep = "";
    for (const auto& [r, c] : me_rtl_sizes()) {
        os << sep << r << "x" << c;
        sep = ", ";
    }
    return os.str();
}

void me_rtl_trace_ever_on() { Verilated::traceEverOn(true); }

} // namespace trnsim::rtl

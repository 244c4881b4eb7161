// Built when the RTL co-simulation is not: the RTL back end is unavailable.
#include "platforms/single_chip/factories.h"

namespace trnsim::platform {
bool rtl_available() { return false; }
std::string rtl_sizes() { return ""; }
std::string rtl_trace_format() { return ""; }
std::vector<numerics::dtype> rtl_dtypes() { return {}; }
bool rtl_build_params(te::te_config&) { return false; }
uint64_t rtl_clocked_cycles(const sc_core::sc_module*) { return 0; }
void rtl_finish_waves() {}
te_backend_handle make_te_backend_rtl(const std::string&, const te::te_config&) { return {}; }
} // namespace trnsim::platform

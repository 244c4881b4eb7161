// trnsim cosim: the side-by-side co-verification of the TLM model and the RTL matrix engine (testbench/verification/cosim).
#pragma once
#include <set>
#include <string>

#include "apps/args.h"
#include "models/numerics/dtype.h"

namespace trnsim::app {

extern const char* COSIM_USAGE;
extern const std::set<std::string> COSIM_OPTIONS;  // the options of trnsim cosim (all take a value)
// Exit status: 0 PASS, 1 a mismatch (or a side stopped), 2 usage error (size not built, bad dtype, ...).
int cmd_cosim(const args& a);

// Usage error unless this build's RTL computes `t` (rtl/matrix_engine/me_pkg.sv DT_COMPUTED).
void check_rtl_dtype(const std::string& option, numerics::dtype t);
// Usage error unless this build's RTL can write a waveform to `file` (format from its extension, .fst or .vcd).
void check_rtl_wave_file(const std::string& option, const std::string& file);

} // namespace trnsim::app

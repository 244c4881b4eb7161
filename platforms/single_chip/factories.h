// Per-role factories: the config chooses the implementation, the builder stays free of switches.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "models/hbm/hbm_config.h"
#include "models/hbm/hbm_model.h"
#include "models/numerics/dtype.h"
#include "models/tensor_engine/compute_pool.h"
#include "models/tensor_engine/te_config.h"
#include "models/tensor_engine/te_backend_if.h"
#include "tlm/stats.h"

namespace trnsim::platform {

struct te_backend_handle {
    std::unique_ptr<sc_core::sc_module> module;
    te::te_backend_if* backend = nullptr;
};
// "tlm": the C++ model; "rtl": the Verilated matrix engine (if this build has it; else config_error).
te_backend_handle make_te_backend(const std::string& name, const te::te_config& cfg, te::compute_pool* pool);

// The HBM model chip.hbm.model names ("simple" or "dram"), behind the one interface every platform and observer uses.
std::unique_ptr<hbm::hbm_model> make_hbm(const std::string& name, const hbm::hbm_config& cfg);

// Whether this build includes the RTL back end, and the array sizes it was built for ("8x8, 16x16").
bool rtl_available();
std::string rtl_sizes();
// The formats the RTL computes (rtl/matrix_engine/me_pkg.sv DT_COMPUTED; empty without RTL), and as text:
// "bf16, fp16, fp8_e4m3 and fp8_e5m2".
std::vector<numerics::dtype> rtl_dtypes();
std::string rtl_dtypes_text();
// The RTL build's fixed parameters (ls_rows_per_cycle, min_ii, n_max, pipeline_latency) into cfg; false (cfg
// untouched) without RTL. The waveform format its models were built with: "fst", "vcd" or "" (none / no RTL).
bool rtl_build_params(te::te_config& cfg);
std::string rtl_trace_format();
// RTL clock cycles an RTL back end made by make_te_backend has simulated (0 for any other module).
uint64_t rtl_clocked_cycles(const sc_core::sc_module* backend);
// Writes the waveforms of every RTL back end of the simulation (chip.core.te.wave), in hierarchy order, once the
// run has ended; throws platform::output_error with the first file that could not be written whole.
void rtl_finish_waves();

} // namespace trnsim::platform

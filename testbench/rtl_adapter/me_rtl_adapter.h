// Transactor between the Tensor Engine back-end interface (te_job) and the pins of the Verilated matrix engine
// RTL (rtl/matrix_engine/me_top.sv). No Verilator header here: the models are reached through make_me_rtl_adapter(),
// which library trnsim_rtl implements for the sizes in TRNSIM_RTL_SIZES.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "models/tensor_engine/te_job.h"

namespace trnsim::rtl {

// Parameters the RTL was verilated with (rtl/CMakeLists.txt), besides its geometry.
struct me_rtl_build {
    uint32_t ls_rows_per_cycle, min_ii, n_max, pipeline_latency;
    const char* trace_format;  // "fst", "vcd" or "" (no trace support compiled in)
};

// One Verilated matrix engine and its transactor, clocked by the clock given at construction.
//  * submit(): presents the job's command and weights from the current cycle (from the next one when called
//    between clock edges), waits until the RTL accepts the command and returns; moving beats follow as the RTL
//    accepts them, the output beats fill job.out, and job.on_done runs at the cycle of the last output beat.
//  * Cycle c of the stamps is the clock period that starts at c * period (the reset edge is at time 0).
class me_rtl_adapter_if : public te::te_backend_if {
public:
    virtual uint32_t rows() const = 0;
    virtual uint32_t cols() const = 0;
    // Opens a waveform of the RTL (format from the file extension); call after elaboration.
    virtual void open_trace(const std::string& file) = 0;
    virtual uint64_t cycles() const = 0;  // clock cycles simulated so far
};

const me_rtl_build& me_rtl_build_params();
std::vector<std::pair<uint32_t, uint32_t>> me_rtl_sizes();  // {rows, cols} of each model built
std::string me_rtl_sizes_string();                           // "8x8, 16x16"

// Enables Verilator tracing; needed before a model that will be traced is constructed.
void me_rtl_trace_ever_on();

// nullptr when no model of that size was built.
std::unique_ptr<me_rtl_adapter_if> make_me_rtl_adapter(const char* name, uint32_t rows,
                                                       uint32_t cols, sc_core::sc_clock& clk);

} // namespace trnsim::rtl

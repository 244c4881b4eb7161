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

#include "models/numerics/dtype.h"
#include "models/tensor_engine/te_backend_if.h"

namespace trnsim::rtl {

// Parameters the RTL was verilated with (rtl/CMakeLists.txt), besides its geometry.
struct me_rtl_build {
    uint32_t ls_rows_per_cycle, min_ii, n_max, pipeline_latency;
    const char* trace_format;              // "fst", "vcd" or "" (no trace support compiled in)
    std::vector<numerics::dtype> dtypes;   // the formats the RTL computes (me_pkg::DT_COMPUTED)
};

// One Verilated matrix engine, its clock and its transactor.
//  * submit(): presents the job's command and weights from the first cycle that starts at or after now, returns
//    in the cycle the RTL accepts the command (load_start); moving beats follow as the RTL accepts them, the
//    output beats fill job.out, and job.on_done runs at the start of the cycle of the last output beat (done),
//    from the transactor's thread: it must not wait().
//  * Cycle c starts at round(c * 1000 / clock_ghz) ps, the cycle times of the C++ back end (te_clock); the reset
//    edge is cycle 0 at time 0. The clock stops while no job is outstanding.
class me_rtl_adapter_if : public te::te_backend_if {
public:
    virtual uint32_t rows() const = 0;
    virtual uint32_t cols() const = 0;
    // Opens a waveform of the RTL (Verilator trace, format from the file extension: .fst or .vcd) and one of the
    // transactor's SystemC signals and state (sc_trace into <file without extension>.wrapper.vcd); call after
    // elaboration, before the simulation starts. Without a call nothing is traced.
    virtual void open_trace(const std::string& file) = 0;
    // Closes the waveforms and writes them to their files; throws platform::output_error naming the file that could
    // not be written (the others are written). Without a call (an error ended the run) no file is replaced.
    virtual void finish_trace() = 0;
    virtual uint64_t cycles() const = 0;  // clock cycles the model was evaluated (not clocked while idle)
};

const me_rtl_build& me_rtl_build_params();
std::vector<std::pair<uint32_t, uint32_t>> me_rtl_sizes();  // {rows, cols} of each model built
std::string me_rtl_sizes_string();                           // "8x8, 16x16"

// Enables Verilator tracing; needed before a model that will be traced is constructed.
void me_rtl_trace_ever_on();

// nullptr when no model of that size was built.
std::unique_ptr<me_rtl_adapter_if> make_me_rtl_adapter(const char* name, uint32_t rows, uint32_t cols,
                                                       double clock_ghz);

} // namespace trnsim::rtl

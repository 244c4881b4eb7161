// Tensor Engine compute back end running the Verilated matrix engine RTL (rtl/matrix_engine).
//
// Owns the Verilated model of the configured rows x cols (one of the sizes built, TRNSIM_RTL_SIZES), its clock at
// te_config::clock_ghz and its transactor (models/tensor_engine/me_rtl_adapter*.h), which turns each te_job into pin activity and
// fills job.out and the cycle stamps. Cycle c starts at the C++ back end's time of cycle c (te_clock:
// round(c * 1000 / clock_ghz) ps), so both back ends stamp, accept and complete jobs at the same times; the clock
// stops while the engine is idle. Built into trnsim_rtl.
#pragma once
#include <memory>
#include <string>

#include <systemc>

#include "models/tensor_engine/te_config.h"
#include "models/tensor_engine/te_backend_if.h"
#include "models/tensor_engine/te_timing.h"

namespace trnsim::rtl { class me_rtl_adapter_if; }

namespace trnsim::te {

class te_backend_rtl : public sc_core::sc_module, public te_backend_if {
public:
    // Fatal error (sc_report) when check(cfg) fails.
    te_backend_rtl(const sc_core::sc_module_name& name, const te_config& cfg);
    ~te_backend_rtl() override;

    // Why this build's RTL cannot run `cfg`, as "<te config key>: reason", or "" when it can.
    static std::string check(const te_config& cfg);

    // Blocks (waits) while the RTL cannot accept the job's command; see te_backend_if. Every job's stamps are
    // checked against te_timing::schedule() (docs/tensor_engine.md): a difference is an SC_REPORT_WARNING.
    void submit(te_job&& job) override;

    uint64_t cycles() const;  // RTL clock cycles simulated so far

    // Writes the RTL and transactor waveforms (chip.core.te.wave) to their files once the run has ended; throws
    // platform::output_error when one cannot be written whole. Nothing to do without a waveform.
    void finish_waves();

private:
    void start_of_simulation() override;

    const te_config& m_cfg;
    te_timing m_spec;
    std::unique_ptr<rtl::me_rtl_adapter_if> m_rtl;
};

} // namespace trnsim::te

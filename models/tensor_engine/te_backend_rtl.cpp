#include "models/tensor_engine/te_backend_rtl.h"

#include <sstream>

#include "testbench/rtl_adapter/me_rtl_adapter.h"

namespace trnsim::te {

namespace {

sc_core::sc_time clock_period(const te_config& cfg) { return sc_core::sc_time(1.0 / cfg.clock_ghz, sc_core::SC_NS); }

} // namespace

te_backend_rtl::te_backend_rtl(const sc_core::sc_module_name& name, const te_config& cfg)
    : sc_core::sc_module(name), m_cfg(cfg), m_clk("clk", clock_period(cfg), 0.5, sc_core::SC_ZERO_TIME, true) {
    const rtl::me_rtl_build& b = rtl::me_rtl_build_params();
    std::ostringstream err;
    if (cfg.ls_rows_per_cycle != b.ls_rows_per_cycle || cfg.min_ii != b.min_ii || cfg.n_max != b.n_max ||
        cfg.pipeline_latency != b.pipeline_latency)
        err << "the RTL was built with ls_rows_per_cycle=" << b.ls_rows_per_cycle << " min_ii=" << b.min_ii
            << " n_max=" << b.n_max << " pipeline_latency=" << b.pipeline_latency << ", the configuration asks for "
            << cfg.ls_rows_per_cycle << ", " << cfg.min_ii << ", " << cfg.n_max << ", " << cfg.pipeline_latency;
    else if (cfg.fp8_double_row)
        err << "fp8_double_row is TLM-only: the RTL has one MAC per PE";
    if (err.str().empty()) {
        if (!cfg.wave_file.empty()) rtl::me_rtl_trace_ever_on();  // before the model is built
        m_rtl = rtl::make_me_rtl_adapter("rtl", cfg.rows, cfg.cols, m_clk);
        if (!m_rtl)
            err << "no RTL model of " << cfg.rows << "x" << cfg.cols << " was built (TRNSIM_RTL_SIZES: "
                << rtl::me_rtl_sizes_string() << ")";
    }
    if (!err.str().empty()) SC_REPORT_FATAL(this->name(), err.str().c_str());
}

te_backend_rtl::~te_backend_rtl() = default;

void te_backend_rtl::start_of_simulation() {
    if (!m_cfg.wave_file.empty()) m_rtl->open_trace(m_cfg.wave_file);
}

void te_backend_rtl::submit(te_job&& job) { m_rtl->submit(std::move(job)); }

uint64_t te_backend_rtl::cycles() const { return m_rtl->cycles(); }

} // namespace trnsim::te

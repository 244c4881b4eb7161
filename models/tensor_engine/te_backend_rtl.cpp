#include "models/tensor_engine/te_backend_rtl.h"

#include <sstream>

#include "testbench/rtl_adapter/me_rtl_adapter.h"

namespace trnsim::te {

namespace {

sc_core::sc_time clock_period(const te_config& cfg) { return sc_core::sc_time(1.0 / cfg.clock_ghz, sc_core::SC_NS); }

} // namespace

std::string te_backend_rtl::check(const te_config& cfg) {
    const rtl::me_rtl_build& b = rtl::me_rtl_build_params();
    std::ostringstream err;
    auto built = [&](const char* key, uint32_t want, uint32_t have) {
        if (err.str().empty() && want != have)
            err << key << ": the RTL was built with " << have << " (rtl/CMakeLists.txt), not " << want;
    };
    bool size_ok = false;
    for (const auto& [r, c] : rtl::me_rtl_sizes()) size_ok |= r == cfg.rows && c == cfg.cols;
    if (!size_ok)
        err << "rows, cols: no RTL model of " << cfg.rows << "x" << cfg.cols << " was built (TRNSIM_RTL_SIZES: "
            << rtl::me_rtl_sizes_string() << ")";
    built("ls_rows_per_cycle", cfg.ls_rows_per_cycle, b.ls_rows_per_cycle);
    built("min_ii", cfg.min_ii, b.min_ii);
    built("n_max", cfg.n_max, b.n_max);
    built("pipeline_latency", cfg.pipeline_latency, b.pipeline_latency);
    if (err.str().empty() && cfg.fp8_double_row) err << "fp8_double_row: TLM-only (the RTL has one MAC per PE)";
    return err.str();
}

te_backend_rtl::te_backend_rtl(const sc_core::sc_module_name& name, const te_config& cfg)
    : sc_core::sc_module(name), m_cfg(cfg), m_clk("clk", clock_period(cfg), 0.5, sc_core::SC_ZERO_TIME, true) {
    const std::string err = check(cfg);
    if (!err.empty()) SC_REPORT_FATAL(this->name(), err.c_str());
    if (!cfg.wave_file.empty()) rtl::me_rtl_trace_ever_on();  // before the model is built
    m_rtl = rtl::make_me_rtl_adapter("rtl", cfg.rows, cfg.cols, m_clk);
}

te_backend_rtl::~te_backend_rtl() = default;

void te_backend_rtl::start_of_simulation() {
    if (!m_cfg.wave_file.empty()) m_rtl->open_trace(m_cfg.wave_file);
}

void te_backend_rtl::submit(te_job&& job) { m_rtl->submit(std::move(job)); }

uint64_t te_backend_rtl::cycles() const { return m_rtl->cycles(); }

} // namespace trnsim::te

#include "testbench/observe/chip_waves.h"

#include <stdexcept>

namespace trnsim::tb {

chip_waves::chip_waves(const std::string& file) : m_file(file) {}

chip_waves::~chip_waves() {
    try {
        close();
    } catch (...) {  // SystemC warns (W715) when a file is closed before any cycle was traced; nothing to lose
    }
}

void chip_waves::attach(const platform::chip& chip) {
    if (!chip.config().core.signals)
        throw std::invalid_argument(std::string(chip.name()) + ": built without sim.signals, it has no waveform signals");
    if (!m_tf) {
        std::string base = m_file;
        if (base.size() > 4 && base.substr(base.size() - 4) == ".vcd") base.resize(base.size() - 4);
        m_tf = sc_core::sc_create_vcd_trace_file(base.c_str());
        if (!m_tf) throw std::runtime_error(m_file + ": cannot create the VCD file");
        // The kernel announces the unit (Info I703, "tracing timescale unit set") on stdout, in the middle of a
        // report: it is ours, not news.
        sc_core::sc_report_handler::set_actions("tracing timescale unit set", sc_core::SC_INFO,
                                                sc_core::SC_DO_NOTHING);
        m_tf->set_time_unit(1, sc_core::SC_PS);
    }
    for (const auto& c : chip.cores) c->trace(m_tf);
}

void chip_waves::close() {
    if (m_tf) sc_core::sc_close_vcd_trace_file(m_tf);
    m_tf = nullptr;
}

} // namespace trnsim::tb

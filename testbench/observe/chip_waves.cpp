#include "testbench/observe/chip_waves.h"

#include <stdexcept>

namespace trnsim::tb {

chip_waves::chip_waves(const std::string& file) : m_file(file) {}

chip_waves::~chip_waves() {
    try {
        close_trace_file();
    } catch (...) {  // SystemC warns (W715) when a file is closed before any cycle was traced; nothing to lose
    }
    m_capture.reset();  // not closed by close(): an error ended the run, the target is left as it was
}

void chip_waves::attach(const platform::chip& chip) {
    if (!chip.config().core.signals)
        throw std::invalid_argument(std::string(chip.name()) + ": built without sim.signals, it has no waveform signals");
    if (!m_tf) {
        // SystemC's VCD writer appends ".vcd" to the name it is given and ignores write errors: it writes into a
        // FIFO whose reader writes exactly m_file (tlm/output_file.h), reporting every error.
        m_capture = std::make_unique<platform::captured_output>(m_file, ".vcd");
        m_tf = sc_core::sc_create_vcd_trace_file(m_capture->library_name().c_str());
        if (!m_tf) throw std::runtime_error(m_file + ": cannot create the VCD file");
        // The kernel announces the unit (Info I703, "tracing timescale unit set") on stdout, in the middle of a
        // report: it is ours, not news.
        sc_core::sc_report_handler::set_actions("tracing timescale unit set", sc_core::SC_INFO,
                                                sc_core::SC_DO_NOTHING);
        m_tf->set_time_unit(1, sc_core::SC_PS);
    }
    for (const auto& c : chip.cores) c->trace(m_tf);
}

void chip_waves::close_trace_file() {
    if (m_tf) sc_core::sc_close_vcd_trace_file(m_tf);
    m_tf = nullptr;
}

void chip_waves::close() {
    close_trace_file();
    if (m_capture) {
        auto c = std::move(m_capture);
        c->finish();
    }
}

} // namespace trnsim::tb

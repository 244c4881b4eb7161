#include "apps/observers.h"

#include <sstream>

#include "apps/cosim.h"
#include "apps/report.h"
#include "testbench/observe/chip_waves.h"

namespace trnsim::app {

namespace {
// "BEGIN:END" in ns, either side may be empty.
void parse_window(const std::string& s, tlmx::trace_limits& lim) {
    auto colon = s.find(':');
    if (colon == std::string::npos) throw usage_error("--timeline-window: expected BEGIN_NS:END_NS, got '" + s + "'");
    auto num = [&](const std::string& part, uint64_t def) -> uint64_t {
        if (part.empty()) return def;
        char* end = nullptr;
        double v = std::strtod(part.c_str(), &end);
        // At most 1e9 ns (1 s; the picosecond window of 2^64 ps is 1.8e10 ns).
        if (*end || !(v >= 0 && v <= 1e9)) throw usage_error("--timeline-window: '" + part + "' is not a time in ns (0 .. 1e9)");
        return uint64_t(v * 1000.0);
    };
    lim.window_begin_ps = num(s.substr(0, colon), 0);
    lim.window_end_ps = num(s.substr(colon + 1), lim.window_end_ps);
    if (lim.window_end_ps <= lim.window_begin_ps) throw usage_error("--timeline-window: END must be after BEGIN");
}
} // namespace

observers::observers(const args& a, platform::platform_config& cfg) {
    if (a.has("timeline")) {
        m_timeline_file = a.str("timeline", "");
        check_writable("--timeline", m_timeline_file);
        tb::timeline_options o;
        o.limits.max_events = a.u64("timeline-max-events", o.limits.max_events);
        if (a.has("timeline-window")) parse_window(a.str("timeline-window", ""), o.limits);
        o.noc = a.has("timeline-noc");
        m_timeline = std::make_unique<tb::chip_timeline>(o);
    } else if (a.has("timeline-max-events") || a.has("timeline-window") || a.has("timeline-noc")) {
        throw usage_error("--timeline-max-events, --timeline-window and --timeline-noc need --timeline FILE");
    }
    if (a.has("wave")) {
        m_wave_file = a.str("wave", "");
        check_rtl_wave_file("--wave", m_wave_file);
        if (cfg.chip.core.te.impl != te::te_impl::rtl)
            throw usage_error("--wave dumps the RTL Tensor Engine: add --set chip.core.te.impl=rtl");
        cfg.chip.core.te.wave_file = m_wave_file;
    }
    if (a.has("vcd")) {
        m_vcd_file = a.str("vcd", "");
        check_writable("--vcd", m_vcd_file);
        cfg.chip.core.signals = cfg.chip.core.te.signals = cfg.chip.core.dma.signals = true;
    }
}

observers::~observers() = default;

void observers::hook(tb::gemm_options& opt) {
    opt.on_built = [this](platform::chip& chip) {
        if (m_timeline) m_timeline->attach(chip);
        if (!m_vcd_file.empty()) {
            m_waves = std::make_unique<tb::chip_waves>(m_vcd_file);
            m_waves->attach(chip);
        }
    };
    opt.on_finished = [this](platform::chip& chip) {
        (void)chip;
        if (!m_wave_file.empty()) {
            m_summary += "  RTL waveforms   " + m_wave_file + " (RTL signals), " + te::wave_wrapper_file(m_wave_file) +
                         " (transactor signals); other cores' engines insert their name\n";
        }
        if (m_waves) {
            m_waves->close();
            m_summary += "  waveforms       " + m_vcd_file + "\n";
        }
        if (m_timeline) {
            std::ostringstream os;
            const auto& w = m_timeline->writer();
            m_timeline->write(os, {{"generator", "trnsim run"}});
            write_file_atomic(m_timeline_file, os.str());
            m_summary += "  timeline        " + m_timeline_file + ": " + std::to_string(w.kept()) + " events";
            if (w.dropped()) m_summary += ", " + std::to_string(w.dropped()) + " dropped over the --timeline-max-events budget";
            if (w.outside_window()) m_summary += ", " + std::to_string(w.outside_window()) + " outside the window";
            m_summary += "\n";
        }
    };
}

void observers::report(std::ostream& os) const { os << m_summary; }

} // namespace trnsim::app

#include "apps/observers.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "apps/cosim.h"
#include "apps/report.h"
#include "platforms/single_chip/factories.h"
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

// --wave-cores "all" or a comma-separated list of core numbers below `cores`; "all" is the empty list.
std::vector<uint32_t> parse_wave_cores(const std::string& s, uint32_t cores) {
    std::vector<uint32_t> out;
    if (s == "all") return out;
    size_t pos = 0;
    while (true) {
        const size_t comma = s.find(',', pos);
        const std::string t = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos)
            throw usage_error("--wave-cores: '" + s + "' is not 'all' or a list of core numbers (e.g. 0,3)");
        const uint32_t c = uint32_t(std::stoul(t));
        if (c >= cores)
            throw usage_error("--wave-cores: core " + t + " does not exist (the chip has " + std::to_string(cores) +
                              " cores, 0.." + std::to_string(cores - 1) + ")");
        if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return out;
}
} // namespace

observers::observers(const args& a, platform::platform_config& cfg, std::string generator)
    : m_generator(std::move(generator)) {
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
        if (a.has("wave-cores")) cfg.chip.wave_cores = parse_wave_cores(a.str("wave-cores", ""), cfg.chip.cores);
        const auto& wc = cfg.chip.wave_cores;
        m_wave_what = wc.empty() ? "every core's engine" : wc.size() == 1 ? "core " + std::to_string(wc[0]) + "'s engine"
                                                                          : std::to_string(wc.size()) + " cores' engines";
    } else if (a.has("wave-cores")) {
        throw usage_error("--wave-cores needs --wave FILE.fst");
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
        finish();
    };
}

void observers::attach_platform(platform::multichip_platform& p) {
    if (!m_timeline) return;
    for (uint32_t c = 0; c < p.chips(); ++c)
        if (platform::chip* chip = p.full_chip(c)) m_timeline->attach(*chip, c);
    for (auto& s : p.servers)
        for (auto& l : s->links) {
            const std::string dim = platform::multichip_platform::link_kind(l.dim);
            if (p.full_chip(l.a)) m_timeline->attach_link(l.l->a2b, l.a, dim + ".to_chip" + std::to_string(l.b));
            if (p.full_chip(l.b)) m_timeline->attach_link(l.l->b2a, l.b, dim + ".to_chip" + std::to_string(l.a));
        }
}

void observers::finish() {
    if (!m_wave_file.empty()) {
        platform::rtl_finish_waves();  // throws when a waveform cannot be written whole
        m_summary += "  RTL waveforms   " + m_wave_file + " (RTL signals), " + te::wave_wrapper_file(m_wave_file) +
                     " (transactor signals) of " + m_wave_what +
                     "; further traced engines insert their name (--wave-cores selects the cores)\n";
    }
    if (m_waves) {
        m_waves->close();
        m_summary += "  waveforms       " + m_vcd_file + "\n";
    }
    if (m_timeline) {
        std::ostringstream os;
        const auto& w = m_timeline->writer();
        m_timeline->write(os, {{"generator", m_generator}});
        write_file_atomic(m_timeline_file, os.str());
        m_summary += "  timeline        " + m_timeline_file + ": " + std::to_string(w.kept()) + " events";
        if (w.dropped()) m_summary += ", " + std::to_string(w.dropped()) + " dropped over the --timeline-max-events budget";
        if (w.outside_window()) m_summary += ", " + std::to_string(w.outside_window()) + " outside the window";
        m_summary += "\n";
        if (w.dropped())
            m_warnings += "WARNING: timeline " + m_timeline_file + " is truncated: " + std::to_string(w.dropped()) +
                          " events over the --timeline-max-events budget of " + std::to_string(w.max_events()) +
                          " were dropped: spans ending after " + time_str(double(w.full_until_ps()) / 1000.0) +
                          " are missing (raise --timeline-max-events or narrow --timeline-window)\n";
    }
}

void observers::report(std::ostream& os) const { os << m_summary; }
void observers::warnings(std::ostream& os) const { os << m_warnings; }

} // namespace trnsim::app

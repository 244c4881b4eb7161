#include "models/tensor_engine/te_backend_rtl.h"

#include <cmath>
#include <sstream>
#include <vector>

#include "models/tensor_engine/me_rtl_adapter.h"

namespace trnsim::te {

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
    return err.str();
}

te_backend_rtl::te_backend_rtl(const sc_core::sc_module_name& name, const te_config& cfg)
    : sc_core::sc_module(name), m_cfg(cfg), m_spec(cfg) {
    const std::string err = check(cfg);
    if (!err.empty()) SC_REPORT_FATAL(this->name(), err.c_str());
    if (!cfg.wave_file.empty()) rtl::me_rtl_trace_ever_on();  // before the model is built
    m_rtl = rtl::make_me_rtl_adapter("rtl", cfg.rows, cfg.cols, cfg.clock_ghz);
}

te_backend_rtl::~te_backend_rtl() = default;

namespace {

// The RTL back ends of the simulation, in hierarchy order.
void find_backends(const std::vector<sc_core::sc_object*>& objs, std::vector<const te_backend_rtl*>& out) {
    for (const sc_core::sc_object* o : objs) {
        if (auto* b = dynamic_cast<const te_backend_rtl*>(o)) out.push_back(b);
        find_backends(o->get_child_objects(), out);
    }
}

} // namespace

void te_backend_rtl::start_of_simulation() {
    if (m_cfg.wave_file.empty()) return;
    // Several engines may share one configuration: the first takes the file name, the others insert their own
    // name before the extension (wave.fst, wave.chip0.core1_te_backend.fst, ...).
    std::vector<const te_backend_rtl*> all;
    find_backends(sc_core::sc_get_top_level_objects(), all);
    std::string file = m_cfg.wave_file;
    for (const te_backend_rtl* b : all) {
        if (b == this) break;
        if (b->m_cfg.wave_file == m_cfg.wave_file) {
            const size_t dot = file.find_last_of('.');
            file = file.substr(0, dot) + "." + name() + (dot == std::string::npos ? "" : file.substr(dot));
            break;
        }
    }
    SC_REPORT_INFO(name(), ("RTL waveform: " + file).c_str());
    m_rtl->open_trace(file);
}

void te_backend_rtl::submit(te_job&& job) {
    if (m_cfg.fp8_double_row && (job.in_type == numerics::dtype::fp8_e4m3 || job.in_type == numerics::dtype::fp8_e5m2))
        SC_REPORT_ERROR(name(), "FP8 with fp8_double_row is TLM-only: the RTL has one MAC per PE");
    const double cycles = sc_core::sc_time_stamp().to_seconds() * m_cfg.clock_ghz * 1e9;
    const te_schedule want = m_spec.schedule(job.in_type, job.k, job.n, uint64_t(std::ceil(cycles - 1e-6)));
    job.on_done = [this, want, cb = std::move(job.on_done)](te_job& j) {
        if (j.load_start != want.load_start || j.stream_start != want.stream_start || j.done != want.done) {
            std::ostringstream os;
            os << "job " << j.id << ": RTL load_start/stream_start/done " << j.load_start << "/" << j.stream_start
               << "/" << j.done << ", docs/tensor_engine.md schedule " << want.load_start << "/"
               << want.stream_start << "/" << want.done;
            SC_REPORT_WARNING(name(), os.str().c_str());
        }
        if (cb) cb(j);
    };
    m_rtl->submit(std::move(job));
}

uint64_t te_backend_rtl::cycles() const { return m_rtl->cycles(); }

void te_backend_rtl::finish_waves() {
    if (!m_cfg.wave_file.empty()) m_rtl->finish_trace();
}

} // namespace trnsim::te

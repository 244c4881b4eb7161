// Built with the RTL co-simulation (library trnsim_rtl): the Verilated matrix engine back end.
#include "models/tensor_engine/te_backend_rtl.h"
#include "tlm/config/config_node.h"
#include "tlm/output_file.h"
#include "platforms/single_chip/factories.h"
#include "models/tensor_engine/me_rtl_adapter.h"

namespace trnsim::platform {

bool rtl_available() { return true; }
std::string rtl_sizes() { return rtl::me_rtl_sizes_string(); }
std::string rtl_trace_format() { return rtl::me_rtl_build_params().trace_format; }
std::vector<numerics::dtype> rtl_dtypes() { return rtl::me_rtl_build_params().dtypes; }

uint64_t rtl_clocked_cycles(const sc_core::sc_module* backend) {
    auto* b = dynamic_cast<const te::te_backend_rtl*>(backend);
    return b ? b->cycles() : 0;
}

namespace {

void finish_waves_under(const std::vector<sc_core::sc_object*>& objs, std::string& err) {
    for (sc_core::sc_object* o : objs) {
        if (auto* b = dynamic_cast<te::te_backend_rtl*>(o)) {
            try {
                b->finish_waves();
            } catch (const output_error& e) {
                if (err.empty()) err = e.what();
            }
        }
        finish_waves_under(o->get_child_objects(), err);
    }
}

} // namespace

void rtl_finish_waves() {
    std::string err;
    finish_waves_under(sc_core::sc_get_top_level_objects(), err);
    if (!err.empty()) throw output_error(err);
}

bool rtl_build_params(te::te_config& cfg) {
    const rtl::me_rtl_build& b = rtl::me_rtl_build_params();
    cfg.ls_rows_per_cycle = b.ls_rows_per_cycle;
    cfg.min_ii = b.min_ii;
    cfg.n_max = b.n_max;
    cfg.pipeline_latency = b.pipeline_latency;
    return true;
}

te_backend_handle make_te_backend_rtl(const std::string& name, const te::te_config& cfg) {
    const std::string err = te::te_backend_rtl::check(cfg);
    if (!err.empty()) throw config::config_error("chip.core.te." + err);
    te_backend_handle h;
    auto m = std::make_unique<te::te_backend_rtl>(name.c_str(), cfg);
    h.backend = m.get();
    h.module = std::move(m);
    return h;
}

} // namespace trnsim::platform

#include "platforms/single_chip/factories.h"

#include "models/hbm/hbm_dram.h"
#include "models/hbm/hbm_simple.h"
#include "models/tensor_engine/te_backend_model.h"
#include "tlm/config/config_node.h"

namespace trnsim::platform {

// The RTL back end registers itself through these hooks when the build has it (rtl_backend_factory.cpp).
te_backend_handle make_te_backend_rtl(const std::string& name, const te::te_config& cfg);

te_backend_handle make_te_backend(const std::string& name, const te::te_config& cfg, te::compute_pool* pool) {
    if (cfg.impl == te::te_impl::rtl) {
        if (!rtl_available())
            throw config::config_error("chip.core.te.impl: \"rtl\" requested but this build has no RTL "
                                       "(configure with -DTRNSIM_RTL=ON)");
        return make_te_backend_rtl(name, cfg);
    }
    te_backend_handle h;
    auto m = std::make_unique<te::te_backend_model>(name.c_str(), cfg, pool);
    h.backend = m.get();
    h.module = std::move(m);
    return h;
}

std::string rtl_dtypes_text() {
    const std::vector<numerics::dtype> v = rtl_dtypes();
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
        s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + std::string(numerics::name_of(v[i]));
    return s;
}

std::unique_ptr<hbm::hbm_model> make_hbm(const std::string& name, const hbm::hbm_config& cfg) {
    if (cfg.model == "simple") return std::make_unique<hbm::hbm_simple>(name.c_str(), cfg);
    if (cfg.model == "dram" && cfg.dram) return std::make_unique<hbm::hbm_dram>(name.c_str(), cfg);
    throw config::config_error("chip.hbm.model: \"" + cfg.model + "\" is not available in this build");
}

} // namespace trnsim::platform

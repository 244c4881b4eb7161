#include "models/hbm/hbm_model.h"

namespace trnsim::hbm {

hbm_model::hbm_model(sc_core::sc_module_name name, bool functional, const std::vector<tlmx::fault_spec>& faults,
                     size_t channels)
    : sc_module(name), in("in"), m_functional(functional), m_faults(faults, this->name(), channels) {
    in.register_b_transport(this, &hbm_model::b_transport);
    in.register_transport_dbg(this, &hbm_model::transport_dbg);
}

tlm::tlm_sync_enum hbm_model::nb_transport_fw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) {
    SC_REPORT_ERROR(name(), "nb_transport_fw: this HBM model has no AT path");
    return tlm::TLM_COMPLETED;
}

} // namespace trnsim::hbm

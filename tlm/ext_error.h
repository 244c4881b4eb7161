// Payload extension: why a target failed a transaction, in words ("chip0.hbm: channel 3 is disabled"). TLM response
// statuses say only what kind of error it was; the initiator appends this text to the report it raises under its
// own name. Targets set it through set_error(); initiators read it through error_text().
#pragma once
#include <string>

#include <tlm>

namespace trnsim::tlmx {

struct ext_error : tlm::tlm_extension<ext_error> {
    std::string what;
    explicit ext_error(std::string w = {}) : what(std::move(w)) {}
    tlm::tlm_extension_base* clone() const override { return new ext_error(*this); }
    void copy_from(const tlm::tlm_extension_base& o) override { what = static_cast<const ext_error&>(o).what; }
};

// Fails `gp` with `status`, attaching `why` when the payload has a memory manager to free the extension.
inline void set_error(tlm::tlm_generic_payload& gp, tlm::tlm_response_status status, const std::string& why) {
    gp.set_response_status(status);
    if (!gp.has_mm()) return;
    if (auto* e = gp.get_extension<ext_error>()) e->what = why;
    else gp.set_extension(new ext_error(why));
}

// "TLM_GENERIC_ERROR_RESPONSE: chip0.hbm: channel 3 is disabled" (or just the status if no target said why).
inline std::string error_text(const tlm::tlm_generic_payload& gp) {
    std::string s = gp.get_response_string();
    if (auto* e = gp.get_extension<ext_error>(); e && !e->what.empty()) s += ": " + e->what;
    return s;
}

inline const char* status_name(tlm::tlm_response_status st) {
    switch (st) {
    case tlm::TLM_OK_RESPONSE: return "TLM_OK_RESPONSE";
    case tlm::TLM_INCOMPLETE_RESPONSE: return "TLM_INCOMPLETE_RESPONSE";
    case tlm::TLM_GENERIC_ERROR_RESPONSE: return "TLM_GENERIC_ERROR_RESPONSE";
    case tlm::TLM_ADDRESS_ERROR_RESPONSE: return "TLM_ADDRESS_ERROR_RESPONSE";
    case tlm::TLM_COMMAND_ERROR_RESPONSE: return "TLM_COMMAND_ERROR_RESPONSE";
    case tlm::TLM_BURST_ERROR_RESPONSE: return "TLM_BURST_ERROR_RESPONSE";
    case tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE: return "TLM_BYTE_ENABLE_ERROR_RESPONSE";
    }
    return "unknown response status";
}

} // namespace trnsim::tlmx

// Page (row-buffer) policy: whether a column command closes its row with auto-precharge (RDA/WRA).
//  open            keep the row open until a miss needs the bank (PRE then)
//  closed          always auto-precharge
//  closed_adaptive auto-precharge unless another queued request hits the same row
// Plain C++ (no SystemC).
#pragma once
#include <memory>

#include "models/hbm/dram/burst_request.h"

namespace trnsim::hbm {

class page_policy_if {
public:
    virtual ~page_policy_if() = default;
    virtual const char* name() const = 0;
    // Request `self` (in bank `bank`, row `row`) is about to be served by a column command.
    virtual bool auto_precharge(const request_queue& q, uint32_t bank, uint32_t row, int32_t self) const = 0;
};

class page_policy_open final : public page_policy_if {
public:
    const char* name() const override { return "open"; }
    bool auto_precharge(const request_queue&, uint32_t, uint32_t, int32_t) const override { return false; }
};

class page_policy_closed final : public page_policy_if {
public:
    const char* name() const override { return "closed"; }
    bool auto_precharge(const request_queue&, uint32_t, uint32_t, int32_t) const override { return true; }
};

class page_policy_closed_adaptive final : public page_policy_if {
public:
    const char* name() const override { return "closed_adaptive"; }
    bool auto_precharge(const request_queue& q, uint32_t bank, uint32_t row, int32_t self) const override;  // page_policy.cpp
};

enum class page_policy_kind { open, closed, closed_adaptive };

inline std::unique_ptr<page_policy_if> make_page_policy(page_policy_kind k) {
    switch (k) {
    case page_policy_kind::closed: return std::make_unique<page_policy_closed>();
    case page_policy_kind::closed_adaptive: return std::make_unique<page_policy_closed_adaptive>();
    default: return std::make_unique<page_policy_open>();
    }
}

inline const char* name(page_policy_kind k) {
    return k == page_policy_kind::closed ? "closed" : k == page_policy_kind::closed_adaptive ? "closed_adaptive" : "open";
}

} // namespace trnsim::hbm

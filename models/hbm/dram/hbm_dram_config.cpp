#include "models/hbm/dram/hbm_dram_config.h"

#include <algorithm>
#include <stdexcept>

#include "models/hbm/dram/address_mapper.h"

namespace trnsim::hbm {

std::string default_mapping(const memspec& m) {
    uint32_t n = m.bursts_per_row(), bits = 0;
    while ((1u << bits) < n) ++bits;
    if ((1u << bits) != n) return "sid-ro-ba-co-st-ch-pc-bg";
    uint32_t lo = bits < 3 ? bits : 3, hi = bits - lo;
    std::string s = "sid-ro-ba-";
    if (hi) s += "co:" + std::to_string(hi) + "-";
    s += "st-ch-pc-";
    if (lo) s += "co:" + std::to_string(lo) + "-";
    return s + "bg";
}

namespace {
[[noreturn]] void fail_at(const std::string& where, const std::string& key, const std::string& msg) {
    throw config::config_error((where.empty() ? key : where + "." + key) + ": " + msg);
}
} // namespace

void validate_hbm_dram_config(const hbm_dram_config& c, const std::string& where) {
    const auto& k = c.ctrl;
    if (c.stacks < 1) fail_at(where, "stacks", "must be at least 1");
    if (k.read_queue_depth < 1) fail_at(where, "read_queue_depth", "must be at least 1");
    if (k.write_queue_depth < 1) fail_at(where, "write_queue_depth", "must be at least 1");
    if (k.write_high_watermark < 1 || k.write_high_watermark > k.write_queue_depth)
        fail_at(where, "write_high_watermark",
                "must be in [1, write_queue_depth = " + std::to_string(k.write_queue_depth) + "], got " +
                    std::to_string(k.write_high_watermark));
    if (k.write_low_watermark >= k.write_high_watermark)
        fail_at(where, "write_low_watermark",
                "must be below write_high_watermark (" + std::to_string(k.write_high_watermark) + "), got " +
                    std::to_string(k.write_low_watermark));
    if (k.refresh == refresh_kind::per_bank && !c.spec.has_per_bank_refresh())
        fail_at(where, "refresh", "per_bank refresh needs tRFCpb in the memspec ('" + c.spec.name + "' has none)");
    try {
        address_mapper map(c.mapping.empty() ? default_mapping(c.spec) : c.mapping, c.spec, c.stacks);
    } catch (const std::exception& e) {
        fail_at(where, "mapping", e.what());
    }
}

hbm_dram_config parse_hbm_dram_config(const config::node& n) {
    hbm_dram_config c;
    if (!n.has("memspec")) n.fail("memspec", "is required (a memspec object, e.g. the contents of configs/memspecs/hbm3.json)");
    c.spec = parse_memspec(n.child("memspec"));
    c.stacks = uint32_t(n.get_uint("stacks", hbm_dram_config::DEFAULT_STACKS, 1, 64));
    c.mapping = n.get_string("mapping", "");
    auto& k = c.ctrl;
    k.scheduler = n.get_choice("scheduler", "fr_fcfs", {"fr_fcfs", "fcfs"}) == "fcfs" ? scheduler_kind::fcfs
                                                                                      : scheduler_kind::fr_fcfs;
    std::string pp = n.get_choice("page_policy", "closed_adaptive", {"closed_adaptive", "open", "closed"});
    k.page_policy = pp == "closed" ? page_policy_kind::closed
                    : pp == "closed_adaptive" ? page_policy_kind::closed_adaptive
                                              : page_policy_kind::open;
    std::string rf = n.get_choice("refresh", c.spec.has_per_bank_refresh() ? "per_bank" : "all_bank",
                                  {"per_bank", "all_bank", "none"});
    k.refresh = rf == "none" ? refresh_kind::none : rf == "all_bank" ? refresh_kind::all_bank : refresh_kind::per_bank;
    k.read_queue_depth = uint32_t(n.get_uint("read_queue_depth", controller_config::DEFAULT_READ_QUEUE_DEPTH, 1, 4096));
    k.write_queue_depth = uint32_t(n.get_uint("write_queue_depth", controller_config::DEFAULT_WRITE_QUEUE_DEPTH, 1, 4096));
    uint32_t hi_def = std::min(controller_config::DEFAULT_WRITE_HIGH_WATERMARK, k.write_queue_depth);
    k.write_high_watermark = uint32_t(n.get_uint("write_high_watermark", hi_def, 1, 4096));
    uint32_t lo_def = std::min(controller_config::DEFAULT_WRITE_LOW_WATERMARK, k.write_high_watermark - 1);
    k.write_low_watermark = uint32_t(n.get_uint("write_low_watermark", lo_def, 0, 4096));
    n.finish();
    validate_hbm_dram_config(c, n.path());
    return c;
}

} // namespace trnsim::hbm

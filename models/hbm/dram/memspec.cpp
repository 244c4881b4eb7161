#include "models/hbm/dram/memspec.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace trnsim::hbm {

namespace {

struct timing_field {
    const char* key;
    uint32_t memspec::*member;
    bool required;
};

// Every timing parameter the model knows; optional ones default as noted in parse_memspec.
const timing_field TIMING_FIELDS[] = {
    {"tRCD", &memspec::tRCD, true},     {"tRCDWR", &memspec::tRCDWR, false}, {"tRP", &memspec::tRP, true},
    {"tRAS", &memspec::tRAS, true},     {"tRC", &memspec::tRC, true},        {"tRL", &memspec::tRL, true},
    {"tWL", &memspec::tWL, true},       {"tWR", &memspec::tWR, true},        {"tRTP", &memspec::tRTP, true},
    {"tCCD_S", &memspec::tCCD_S, true}, {"tCCD_L", &memspec::tCCD_L, true},  {"tRRD_S", &memspec::tRRD_S, true},
    {"tRRD_L", &memspec::tRRD_L, true}, {"tFAW", &memspec::tFAW, true},      {"tWTR_S", &memspec::tWTR_S, true},
    {"tWTR_L", &memspec::tWTR_L, true}, {"tRTW", &memspec::tRTW, true},      {"tRFC", &memspec::tRFC, true},
    {"tREFI", &memspec::tREFI, true},   {"tRFCpb", &memspec::tRFCpb, false}, {"tRREFD", &memspec::tRREFD, false},
};

bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

[[noreturn]] void fail_at(const std::string& where, const std::string& key, const std::string& msg) {
    throw config::config_error((where.empty() ? key : where + "." + key) + ": " + msg);
}

std::string ck(uint32_t v) { return std::to_string(v) + " tCK"; }

} // namespace

void validate_memspec(const memspec& m, const std::string& where) { validate_memspec(m, where, {}); }

void validate_memspec(const memspec& m, const std::string& where, const std::map<std::string, std::string>& located) {
    auto need = [&](bool ok, const std::string& key, const std::string& msg) {
        if (!ok) fail_at(where, key, msg);
    };
    const std::string org = "organization.";
    need(m.channels >= 1, org + "channels", "must be at least 1");
    need(m.pseudo_channels >= 1, org + "pseudo_channels", "must be at least 1");
    need(m.sids >= 1, org + "sids", "must be at least 1");
    need(m.bank_groups >= 1, org + "bank_groups", "must be at least 1");
    need(m.banks_per_group >= 1, org + "banks_per_group", "must be at least 1");
    need(m.banks_per_pc() <= 256, org + "banks_per_group",
         "sids * bank_groups * banks_per_group = " + std::to_string(m.banks_per_pc()) + " exceeds 256 banks per pseudo-channel");
    need(m.rows >= 1, org + "rows", "must be at least 1");
    need(m.bus_width >= 8 && m.bus_width % 8 == 0, org + "bus_width", "must be a positive multiple of 8 bits");
    need(m.burst_length >= 1, org + "burst_length", "must be at least 1");
    need(m.data_rate >= 1 && m.burst_length % m.data_rate == 0, "data_rate",
         "burst_length (" + std::to_string(m.burst_length) + ") must be a multiple of data_rate (" +
             std::to_string(m.data_rate) + ")");
    need(is_pow2(m.burst_bytes()), org + "burst_length",
         "a burst (burst_length * bus_width / 8 = " + std::to_string(m.burst_bytes()) + " bytes) must be a power of two bytes");
    need(m.columns >= m.burst_length && m.columns % m.burst_length == 0, org + "columns",
         "must be a multiple of burst_length (" + std::to_string(m.burst_length) + ")");
    need(m.tck_ns > 0, "tck_ns", "must be positive");

    // Which sub-object holds a value only matters for the message: name the parameter under timing.
    auto t = [&](const char* k) {
        auto it = located.find(k);
        return it != located.end() ? it->second : std::string("timing.") + k;
    };
    for (const auto& f : TIMING_FIELDS) {
        if (!f.required) continue;
        need(m.*(f.member) >= 1 || std::string(f.key) == "tWL", t(f.key), "must be at least 1 tCK");
    }
    need(m.tRCDWR >= 1, t("tRCDWR"), "must be at least 1 tCK");
    need(m.tRC >= m.tRAS + m.tRP, t("tRC"),
         "tRC (" + ck(m.tRC) + ") must be >= tRAS + tRP (" + ck(m.tRAS + m.tRP) + ")");
    need(m.tRAS >= m.tRCD, t("tRAS"), "tRAS (" + ck(m.tRAS) + ") must be >= tRCD (" + ck(m.tRCD) + ")");
    need(m.tCCD_S >= m.burst_cycles(), t("tCCD_S"),
         "tCCD_S (" + ck(m.tCCD_S) + ") must be >= the burst duration burst_length / data_rate (" + ck(m.burst_cycles()) +
             "), or bursts would overlap on the data bus");
    need(m.tCCD_L >= m.tCCD_S, t("tCCD_L"), "tCCD_L (" + ck(m.tCCD_L) + ") must be >= tCCD_S (" + ck(m.tCCD_S) + ")");
    need(m.tRRD_L >= m.tRRD_S, t("tRRD_L"), "tRRD_L (" + ck(m.tRRD_L) + ") must be >= tRRD_S (" + ck(m.tRRD_S) + ")");
    need(m.tWTR_L >= m.tWTR_S, t("tWTR_L"), "tWTR_L (" + ck(m.tWTR_L) + ") must be >= tWTR_S (" + ck(m.tWTR_S) + ")");
    need(m.tFAW >= m.tRRD_S, t("tFAW"), "tFAW (" + ck(m.tFAW) + ") must be >= tRRD_S (" + ck(m.tRRD_S) + ")");
    if (m.tRL + m.burst_cycles() > m.tWL)
        need(m.tRTW >= m.tRL + m.burst_cycles() - m.tWL, t("tRTW"),
             "tRTW (" + ck(m.tRTW) + ") must be >= tRL + burst - tWL (" + ck(m.tRL + m.burst_cycles() - m.tWL) +
                 "), or read and write data would collide on the bus");
    need(m.tREFI > m.tRFC, t("tREFI"), "tREFI (" + ck(m.tREFI) + ") must be > tRFC (" + ck(m.tRFC) + ")");
    // Between two all-bank refreshes there must be time to serve one access (activate, read, precharge), or a
    // controller that refreshes on time never serves a request (a livelock).
    {
        const uint64_t one_access = uint64_t(m.tRFC) + m.tRC + m.tRCD + m.tRL + m.burst_cycles();
        need(m.tREFI >= one_access, t("tREFI"),
             "tREFI (" + ck(m.tREFI) + ") leaves no time to serve a request between refreshes: it must be >= tRFC + "
             "tRC + tRCD + tRL + burst (" + ck(uint32_t(std::min<uint64_t>(one_access, UINT32_MAX))) + ")");
    }
    if (m.tRFCpb) {
        need(m.tRFCpb < m.tRFC, t("tRFCpb"), "tRFCpb (" + ck(m.tRFCpb) + ") must be < tRFC (" + ck(m.tRFC) + ")");
        need(m.tRREFD >= 1, t("tRREFD"), "is required (>= 1 tCK) when tRFCpb is given");
        need(m.tRFCpb >= m.tRREFD, t("tRFCpb"), "tRFCpb (" + ck(m.tRFCpb) + ") must be >= tRREFD (" + ck(m.tRREFD) + ")");
        need(m.tREFI >= m.banks_per_pc(), t("tREFI"), "is too short to refresh every bank once per tREFI");
    } else {
        need(m.tRREFD == 0, t("tRREFD"), "given without tRFCpb (per-bank refresh needs both)");
    }
}

memspec parse_memspec(const config::node& n) {
    memspec m;
    m.name = n.get_label("name", "unnamed");
    // Free-text documentation fields: accepted and ignored.
    (void)n.get_string("standard", "");
    (void)n.get_string("description", "");

    auto org = n.child("organization");
    auto req_uint = [](const config::node& node, const char* key, uint64_t lo, uint64_t hi) -> uint32_t {
        if (!node.has(key)) node.fail(key, "is required");
        return uint32_t(node.get_uint(key, 0, lo, hi));
    };
    m.channels = req_uint(org, "channels", 1, 1024);
    m.pseudo_channels = req_uint(org, "pseudo_channels", 1, 16);
    m.sids = uint32_t(org.get_uint("sids", 1, 1, 16));
    m.bank_groups = req_uint(org, "bank_groups", 1, 256);
    m.banks_per_group = req_uint(org, "banks_per_group", 1, 256);
    m.rows = req_uint(org, "rows", 1, uint64_t(1) << 31);
    m.columns = req_uint(org, "columns", 1, uint64_t(1) << 20);
    m.bus_width = req_uint(org, "bus_width", 8, 4096);
    m.burst_length = req_uint(org, "burst_length", 1, 1024);
    org.finish();

    if (!n.has("tck_ns")) n.fail("tck_ns", "is required");
    m.tck_ns = n.get_double("tck_ns", 0, 1e-3, 1e3);
    m.data_rate = req_uint(n, "data_rate", 1, 16);

    std::map<std::string, std::string> located;
    auto tns = n.child("timing_ns");
    auto tck = n.child("timing_ck");
    for (const auto& f : TIMING_FIELDS) {
        bool in_ns = tns.has(f.key), in_ck = tck.has(f.key);
        if (!in_ns && !in_ck) {
            if (f.required)
                n.fail(std::string("timing_ns.") + f.key, std::string("is required (give it in timing_ns or timing_ck)"));
            continue;
        }
        uint64_t cycles = 0;
        if (in_ns) {
            double t = tns.get_double(f.key, 0, 0, 1e9);
            // JEDEC-style rounding up to whole clocks; the small tolerance keeps exact multiples exact.
            cycles = uint64_t(std::ceil(t / m.tck_ns - 1e-6));
        }
        if (in_ck) cycles = std::max<uint64_t>(cycles, tck.get_uint(f.key, 0, 0, uint64_t(1) << 31));
        m.*(f.member) = uint32_t(cycles);
        located[f.key] = std::string(in_ck && (!in_ns || tck.get_uint(f.key, 0, 0, uint64_t(1) << 31) == cycles)
                                         ? "timing_ck."
                                         : "timing_ns.") +
                         f.key;
    }
    if (!tns.has("tRCDWR") && !tck.has("tRCDWR")) m.tRCDWR = m.tRCD;
    tns.finish();
    tck.finish();
    n.finish();
    validate_memspec(m, n.path(), located);
    return m;
}

} // namespace trnsim::hbm

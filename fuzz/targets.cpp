#include "fuzz/targets.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <vector>

#include "models/dma/dma_checksum.h"
#include "models/dma/dma_descriptor.h"
#include "tlm/config/config_node.h"
#include "platforms/config/platform_config.h"
#include "testbench/tools/hbm_trace.h"
#include "testbench/workloads/program/program_file.h"

namespace trnsim::fuzz {

namespace {
std::string g_config_dir = platform::default_config_dir();

[[noreturn]] void finding(const char* target, const std::string& what) {
    std::fprintf(stderr, "fuzz %s: %s\n", target, what.c_str());
    std::fflush(stderr);
    std::abort();
}

// Runs f; config_error is the expected outcome of bad input, anything else is a finding.
template <class F>
void expect_config_errors_only(const char* target, F&& f) {
    try {
        f();
    } catch (const config::config_error& e) {
        if (std::strlen(e.what()) == 0) finding(target, "config_error with an empty message");
    } catch (const std::exception& e) {
        finding(target, std::string("unexpected exception (not a config_error): ") + e.what());
    } catch (...) {
        finding(target, "unexpected non-std exception");
    }
}

struct reader {
    const uint8_t* p;
    size_t n;
    template <class T>
    T get() {
        T v{};
        size_t k = std::min(sizeof(T), n);
        std::memcpy(&v, p, k);
        p += k;
        n -= k;
        return v;
    }
};

const platform::chip_config& trn2_chip() {
    static const platform::platform_config cfg = platform::load_platform("trn2", {}, g_config_dir);
    return cfg.chip;
}
} // namespace

void set_config_dir(const std::string& dir) { g_config_dir = dir; }

void config_text(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    expect_config_errors_only("config_text", [&] {
        auto j = config::parse_json(text, "fuzz.json");
        platform::parse_platform(j, "fuzz.json");
    });
}

void config_overrides(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> sets, faults;
    size_t start = 0;
    while (start < text.size() && sets.size() + faults.size() < 16) {
        size_t nl = text.find('\n', start);
        std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        if (line.rfind("set ", 0) == 0) sets.push_back(line.substr(4));
        else if (line.rfind("fault ", 0) == 0) faults.push_back(line.substr(6));
        if (nl == std::string::npos) break;
        start = nl + 1;
    }
    expect_config_errors_only("config_overrides", [&] { platform::load_platform("trn2", sets, faults, g_config_dir); });
}

void dma_descriptor(const uint8_t* data, size_t size) {
    reader r{data, size};
    dma::dma_descriptor d;
    d.src = r.get<uint64_t>();
    d.dst = r.get<uint64_t>();
    // Small values are the interesting ones: take lengths and counts from narrow fields most of the time.
    const uint8_t shape = r.get<uint8_t>();
    d.row_bytes = (shape & 1) ? r.get<uint64_t>() : r.get<uint16_t>();
    d.rows = (shape & 2) ? r.get<uint32_t>() : r.get<uint8_t>();
    d.planes = (shape & 4) ? r.get<uint32_t>() : r.get<uint8_t>() % 8;
    d.src_stride = (shape & 8) ? r.get<int64_t>() : r.get<int16_t>();
    d.dst_stride = (shape & 8) ? r.get<int64_t>() : r.get<int16_t>();
    d.src_plane_stride = (shape & 16) ? r.get<int64_t>() : r.get<int32_t>();
    d.dst_plane_stride = (shape & 16) ? r.get<int64_t>() : r.get<int32_t>();
    const uint64_t align = uint64_t(1) << (r.get<uint8_t>() % 8);
    const uint64_t max_burst = 16 + r.get<uint16_t>() % 4096;
    const uint32_t engines = 1 + r.get<uint8_t>() % 16;

    std::string why = dma::validate(d, align);
    if (!why.empty()) return;
    // Valid: the invariants the DMA engines rely on, on descriptors small enough to walk.
    if (uint64_t(d.rows) * d.planes > 4096 || d.row_bytes > (1u << 16) || d.total_bytes() > (1u << 16)) return;
    std::vector<std::pair<uint64_t, uint64_t>> dst;  // [start, end) of every burst at the destination
    uint64_t total = 0;
    dma::for_each_burst(d, max_burst, [&](uint64_t, uint64_t t, uint64_t n) {
        if (n == 0 || n > max_burst || (t % max_burst) + n > max_burst)
            finding("dma_descriptor", "burst of " + std::to_string(n) + " at " + std::to_string(t) + " breaks max_burst " +
                                          std::to_string(max_burst) + " in " + dma::to_string(d));
        dst.emplace_back(t, t + n);
        total += n;
    });
    if (total != d.total_bytes()) finding("dma_descriptor", "bursts do not cover the descriptor: " + dma::to_string(d));
    if (align > 1)
        for (auto& [a, b] : dst)
            if (a % align && a % max_burst) finding("dma_descriptor", "misaligned burst start in an aligned descriptor");
    std::sort(dst.begin(), dst.end());
    for (size_t i = 1; i < dst.size(); ++i)
        if (dst[i].first < dst[i - 1].second)
            finding("dma_descriptor", "validate() accepted overlapping destination rows: " + dma::to_string(d));
    // Parts across engines move exactly the bytes of the whole: compare checksums of synthetic source data.
    auto byte_at = [](uint64_t a) { return uint8_t((a * 0x9E3779B97F4A7C15ull) >> 56); };
    auto sum_of = [&](const dma::dma_descriptor& x, uint64_t mb) {
        uint64_t acc = 0;
        std::vector<uint8_t> buf;
        dma::for_each_burst(x, mb, [&](uint64_t s, uint64_t t, uint64_t n) {
            buf.resize(n);
            for (uint64_t i = 0; i < n; ++i) buf[i] = byte_at(s + i);
            acc = dma::checksum_update(acc, t, buf.data(), n);
        });
        return acc;
    };
    uint64_t whole = sum_of(d, max_burst), parts = 0, part_bytes = 0;
    for (const auto& [e, p] : dma::split_across_engines(d, engines, max_burst)) {
        if (e >= engines) finding("dma_descriptor", "part for engine " + std::to_string(e) + " of " + std::to_string(engines));
        parts += sum_of(p, max_burst);
        part_bytes += p.total_bytes();
    }
    if (part_bytes != d.total_bytes() || parts != whole)
        finding("dma_descriptor", "split across " + std::to_string(engines) + " engines does not add up: " + dma::to_string(d));
}

void program_text(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    const auto& chip = trn2_chip();
    expect_config_errors_only("program_text", [&] {
        auto j = config::parse_json(text, "fuzz.json");
        tb::parse_program(j, "fuzz.json", chip);
    });
}

void hbm_trace(const uint8_t* data, size_t size) {
    static const uint64_t capacity = uint64_t(1) << 30;
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    std::vector<tb::hbm_request> reqs;
    try {
        reqs = tb::read_hbm_trace(in, "fuzz.trace", capacity);
    } catch (const std::runtime_error& e) {
        if (std::string(e.what()).rfind("fuzz.trace:", 0) != 0)
            finding("hbm_trace", std::string("error without file:line: ") + e.what());
        return;
    } catch (const std::exception& e) {
        finding("hbm_trace", std::string("unexpected exception (not a runtime_error): ") + e.what());
    }
    for (const auto& r : reqs)
        if (r.size == 0 || r.addr >= capacity || r.size > capacity - r.addr || !(r.time_ns >= 0))
            finding("hbm_trace", "accepted a request outside the capacity or with a bad size/time");
    if (reqs.empty() || reqs.size() > 64) return;
    for (const auto& r : reqs)
        if (r.time_ns > 1e5 || r.size > 4096) return;
    static const hbm::hbm_dram_config cfg = [] {
        hbm::hbm_dram_config c;
        c.spec = tb::load_memspec("hbm3", g_config_dir);
        return c;
    }();
    tb::hbm_run_result res;
    try {
        res = tb::run_hbm_requests(cfg, reqs);
    } catch (const std::exception& e) {
        finding("hbm_trace", std::string("the DRAM model threw on a valid trace: ") + e.what());
    }
    if (res.reads + res.writes < reqs.size()) finding("hbm_trace", "fewer requests completed than were issued");
}

} // namespace trnsim::fuzz

#include "apps/cosim.h"

#include "apps/report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <random>
#include <sstream>
#include <vector>

#include "models/numerics/dtype.h"
#include "models/tensor_engine/te_config.h"
#include "platforms/single_chip/factories.h"
#include "testbench/verification/cosim/cosim_run.h"

namespace trnsim::app {

const char* COSIM_USAGE = R"(trnsim cosim [--rows R] [--cols C] [--dtype bf16|fp16|fp8_e4m3|fp8_e5m2|all|T1,T2...] [--tiles N] [--seed S]
             [--mode b2b|gaps] [--wave FILE.fst|FILE.vcd] [--max-report N] [--inject-mismatch TILE]
  the same tiles (directed corners, then random shapes and values with NaN, Inf, subnormals) go to the TLM model
  and to the Verilated RTL side by side; every output bit and each tile's load_start/stream_start/done compared
  defaults: --rows 16 --cols 16 --dtype all --tiles 1000 --mode b2b, a fresh --seed (printed)
  --mode gaps: random idle gaps between tiles; --inject-mismatch flips one model result bit (scoreboard check)
  exit status: 0 PASS, 1 mismatch, 2 usage error (e.g. a size this build has no RTL of)
)";

const std::set<std::string> COSIM_OPTIONS = {"rows", "cols", "dtype", "tiles", "seed", "mode", "wave",
                                             "max-report", "inject-mismatch"};

namespace {

std::vector<std::string> split(const std::string& s, const std::string& sep) {
    std::vector<std::string> out;
    size_t at = 0;
    for (;;) {
        const size_t next = s.find(sep, at);
        out.push_back(s.substr(at, next == std::string::npos ? std::string::npos : next - at));
        if (next == std::string::npos) return out;
        at = next + sep.size();
    }
}

std::vector<numerics::dtype> parse_types(const std::string& s) {
    if (s == "all") return platform::rtl_dtypes();
    std::vector<numerics::dtype> out;
    for (const std::string& w : split(s, ",")) {
        auto t = numerics::parse_dtype(w);
        if (!t) throw usage_error("--dtype: unknown type '" + w + "' (the RTL computes " + platform::rtl_dtypes_text() + "; or all)");
        check_rtl_dtype("--dtype", *t);
        out.push_back(*t);
    }
    return out;
}

std::string cycles3(const std::array<uint64_t, 3>& c) {
    return std::to_string(c[0]) + "/" + std::to_string(c[1]) + "/" + std::to_string(c[2]);
}

std::string hex(uint32_t v) {
    char b[16];
    std::snprintf(b, sizeof b, "0x%08x", v);
    return b;
}

} // namespace

void check_rtl_dtype(const std::string& option, numerics::dtype t) {
    const auto v = platform::rtl_dtypes();
    if (std::find(v.begin(), v.end(), t) == v.end())
        throw usage_error(option + ": the RTL computes " + platform::rtl_dtypes_text() + "; " +
                          std::string(numerics::name_of(t)) + " is TLM-only");
}

void check_rtl_wave_file(const std::string& option, const std::string& file) {
    const std::string ext = te::wave_format(file);
    if (ext.empty())
        throw usage_error(option + ": '" + file + "': the waveform format comes from the extension, .fst or .vcd");
    if (!platform::rtl_available()) throw usage_error(option + ": this build has no RTL (-DTRNSIM_RTL=ON)");
    const std::string have = platform::rtl_trace_format();
    if (have != ext)
        throw usage_error(option + ": '" + file + "': the RTL was built with " + (have.empty() ? "no" : have) +
                          " waveform support (configure with -DTRNSIM_RTL_TRACE=" +
                          (ext == "fst" ? "FST" : "VCD") + ")");
    check_writable(option, file);
    check_writable(option, te::wave_wrapper_file(file));  // the transactor's signals, beside it
}

int cmd_cosim(const args& a) {
    if (!a.positional().empty()) throw usage_error("unexpected argument '" + a.positional()[0] + "'");
    tb::cosim_options o;
    o.rows = a.u32("rows", 16);
    o.cols = a.u32("cols", 16);
    if (!platform::rtl_available())
        throw usage_error("this build has no RTL matrix engine (configure with -DTRNSIM_RTL=ON)");
    bool built = false;
    for (const std::string& sz : split(platform::rtl_sizes(), ", "))
        built |= sz == std::to_string(o.rows) + "x" + std::to_string(o.cols);
    if (!built)
        throw usage_error("--rows " + std::to_string(o.rows) + " --cols " + std::to_string(o.cols) +
                          ": no RTL of " + std::to_string(o.rows) + "x" + std::to_string(o.cols) +
                          " in this build; compiled sizes: " + platform::rtl_sizes() +
                          " (others: configure with -DTRNSIM_RTL_SIZES=\"8x8;16x16;RxC\")");
    const std::string dt = a.str("dtype", "all");
    o.types = parse_types(dt);
    o.tiles = a.u64("tiles", o.tiles);
    // At most 10^9 tiles: about a day of wall time at the measured rates (docs/PERFORMANCE.md), with a progress line.
    if (o.tiles == 0 || o.tiles > 1000000000ull)
        throw usage_error("--tiles: " + std::to_string(o.tiles) + " is outside 1 .. 1000000000");
    o.seed = a.has("seed") ? a.u64("seed", 1) : std::random_device{}();
    const std::string mode = a.str("mode", "b2b");
    if (mode != "b2b" && mode != "gaps") throw usage_error("--mode: '" + mode + "' is not b2b or gaps");
    o.gaps = mode == "gaps";
    if (a.has("wave")) {
        o.wave = a.str("wave", "");
        check_rtl_wave_file("--wave", o.wave);
    }
    o.max_reported = size_t(a.u64("max-report", o.max_reported));
    if (a.has("inject-mismatch")) {
        o.inject_mismatch = a.u64("inject-mismatch", 0);
        if (o.inject_mismatch >= o.tiles)
            throw usage_error("--inject-mismatch " + std::to_string(o.inject_mismatch) + ": no such tile (tiles 0.." +
                              std::to_string(o.tiles - 1) + ")");
    }

    std::ostringstream replay;
    replay << "trnsim cosim --rows " << o.rows << " --cols " << o.cols << " --dtype " << dt << " --tiles " << o.tiles
           << " --seed " << o.seed << " --mode " << mode;
    if (a.has("inject-mismatch")) replay << " --inject-mismatch " << o.inject_mismatch;
    std::cout << "cosim " << o.rows << "x" << o.cols << " " << dt << ": " << o.tiles << " tiles, seed " << o.seed
              << ", mode " << mode << " (TLM model te_backend_model vs RTL rtl/matrix_engine, Verilator)\n"
              << std::flush;

    const tb::cosim_result r = tb::run_cosim(o);

    for (const tb::cosim_mismatch& m : r.reported) {
        std::ostringstream os;
        os << "MISMATCH " << (m.kind == tb::cosim_mismatch::timing ? "cycles"
                              : m.kind == tb::cosim_mismatch::data ? "bits"
                                                                   : "golden")
           << " tile " << m.tile << " (" << numerics::name_of(m.type) << " k=" << m.k << " m=" << m.m << " n=" << m.n
           << ")";
        if (m.kind == tb::cosim_mismatch::timing) {
            os << ": load_start/stream_start/done TLM " << cycles3(m.tlm_cycles) << ", RTL " << cycles3(m.rtl_cycles);
        } else if (m.row == ~0u) {
            os << ": a side returned the wrong number of results";
        } else {
            os << " Y[" << m.row << "][" << m.col << "]: TLM " << hex(m.tlm_bits) << ", RTL " << hex(m.rtl_bits)
               << ", golden " << hex(m.golden_bits) << "; cycles TLM " << cycles3(m.tlm_cycles) << ", RTL "
               << cycles3(m.rtl_cycles);
        }
        os << " (seed " << o.seed << ")\n";
        std::cout << os.str();
    }
    if (r.mismatches > r.reported.size())
        std::cout << "... " << r.mismatches - r.reported.size() << " more mismatches (--max-report)\n";

    std::ostringstream per;
    for (const auto& [t, n] : r.tiles_per_type) per << (per.str().empty() ? "" : ", ") << t << " " << n;
    char speed[160];
    std::snprintf(speed, sizeof speed, "wall %.2f s, %.0f RTL cycles/s", r.wall_s,
                  r.wall_s > 0 ? double(r.rtl_clocked) / r.wall_s : 0.0);
    std::cout << "cycles: TLM " << r.tlm_cycles << ", RTL " << r.rtl_cycles << " (last tile done + 1; RTL clocked "
              << r.rtl_clocked << "); " << speed << "\n";
    if (r.pass()) {
        std::cout << "PASS: " << r.tiles << " tiles (" << per.str() << "), " << r.elements
                  << " elements: every bit and every tile's load_start/stream_start/done equal (seed " << o.seed
                  << ")\n";
        return 0;
    }
    if (!r.error.empty()) std::cout << "error: " << r.error << "\n";
    std::cout << "FAIL: " << r.data_mismatches << " bit, " << r.timing_mismatches << " cycle, "
              << r.golden_mismatches << " golden mismatches in " << r.tiles << " tiles (" << per.str() << "), seed "
              << o.seed << "; replay: " << replay.str() << "\n";
    return 1;
}

} // namespace trnsim::app

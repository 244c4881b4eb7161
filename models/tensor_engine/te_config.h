// Validated runtime configuration of one Tensor Engine (see docs/tensor_engine.md for the meaning of each field).
#pragma once
#include <cstdint>
#include <string>

namespace trnsim::te {

enum class te_impl { tlm, rtl };

struct te_config {
    static constexpr uint32_t DEFAULT_ROWS = 128;
    static constexpr uint32_t DEFAULT_COLS = 128;
    static constexpr double DEFAULT_CLOCK_GHZ = 2.4;
    static constexpr uint32_t DEFAULT_N_MAX = 512;
    static constexpr uint32_t DEFAULT_LS_ROWS_PER_CYCLE = 4;
    static constexpr uint32_t DEFAULT_MIN_II = 64;
    static constexpr uint32_t DEFAULT_FP32_PASSES = 4;
    static constexpr uint32_t DEFAULT_PIPELINE_LATENCY = 2;  // what rtl/matrix_engine has (docs/tensor_engine.md)

    uint32_t rows = DEFAULT_ROWS;            // PE rows (contraction dimension K, SBUF partitions)
    uint32_t cols = DEFAULT_COLS;            // PE columns (M, PSUM partitions)
    double clock_ghz = DEFAULT_CLOCK_GHZ;
    uint32_t n_max = DEFAULT_N_MAX;          // largest moving free size (one PSUM bank of FP32)
    uint32_t ls_rows_per_cycle = DEFAULT_LS_ROWS_PER_CYCLE;
    uint32_t min_ii = DEFAULT_MIN_II;
    uint32_t fp32_passes = DEFAULT_FP32_PASSES;
    uint32_t pipeline_latency = DEFAULT_PIPELINE_LATENCY;
    bool fp8_double_row = false;             // FP8: two MACs per PE per moving column (K up to 2*rows)
    te_impl impl = te_impl::tlm;
    std::string wave_file;                   // RTL waveform (.fst/.vcd); empty = off
    bool functional = true;                  // false: timing only (no arithmetic; results are zeros)
    bool signals = false;                    // sim.signals: drive sc_signals for waveforms (busy, in flight)
};

// The format an RTL waveform file asks for by its extension: "fst", "vcd", or "" (neither).
inline std::string wave_format(const std::string& file) {
    const size_t dot = file.find_last_of('.');
    const std::string ext = dot == std::string::npos ? "" : file.substr(dot + 1);
    return ext == "fst" || ext == "vcd" ? ext : "";
}
// The transactor's SystemC VCD written beside the RTL waveform FILE.fst / FILE.vcd: FILE.wrapper.vcd.
inline std::string wave_wrapper_file(const std::string& file) {
    return file.substr(0, file.find_last_of('.')) + ".wrapper.vcd";
}

} // namespace trnsim::te

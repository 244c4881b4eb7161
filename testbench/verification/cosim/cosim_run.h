// Side-by-side co-verification of the Tensor Engine's two compute back ends (trnsim cosim).
//
// One tile sequence (testbench/verification/cosim/me_golden.h: directed corner tiles, then random shapes, dtypes and special
// values) is submitted, with the same operand-ready cycles, to the C++ model (te_backend_model: te_timing schedule
// + pe_array arithmetic) and to the Verilated RTL (te_backend_rtl: rtl/matrix_engine through the transactor) in
// one SystemC simulation. A scoreboard compares every output bit of the two and each tile's cycle stamps
// (load_start, stream_start, done), and the model's results also against the independent golden of me_golden.h.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/numerics/dtype.h"

namespace trnsim::tb {

struct cosim_options {
    uint32_t rows = 16, cols = 16;
    std::vector<numerics::dtype> types = {numerics::dtype::bf16};  // drawn per tile
    uint64_t tiles = 1000;
    uint64_t seed = 1;
    bool gaps = false;            // random operand-ready gaps between tiles (else every tile ready at cycle 0)
    std::string wave;             // RTL waveform file (.fst / .vcd; empty: none)
    uint64_t inject_mismatch = ~0ull;  // flips the low bit of the model's Y[0][0] of this tile (scoreboard check)
    size_t max_reported = 20;     // mismatches kept in detail
};

struct cosim_mismatch {
    enum kind_t { data, timing, golden } kind = data;  // golden: model differs from the me_golden.h reference
    uint64_t tile = 0;
    numerics::dtype type = numerics::dtype::bf16;
    uint32_t k = 0, m = 0, n = 0;
    uint32_t row = 0, col = 0;                 // element Y[row][col] (data, golden)
    uint32_t tlm_bits = 0, rtl_bits = 0, golden_bits = 0;
    std::array<uint64_t, 3> tlm_cycles{}, rtl_cycles{};  // load_start, stream_start, done
};

struct cosim_result {
    uint64_t tiles = 0;                        // compared on both sides
    uint64_t elements = 0;                     // output elements compared
    // data: elements whose TLM and RTL bits differ; golden: elements where either side differs from the golden;
    // timing: tiles whose load_start/stream_start/done differ. mismatches: the records (a tile's cycles, an element).
    uint64_t data_mismatches = 0, timing_mismatches = 0, golden_mismatches = 0, mismatches = 0;
    uint64_t tlm_cycles = 0, rtl_cycles = 0;   // done + 1 of the last tile completed on each side
    uint64_t rtl_clocked = 0;                  // RTL clock cycles evaluated (the clock stops while idle)
    double wall_s = 0;                         // wall time of the simulation (both back ends)
    std::map<std::string, uint64_t> tiles_per_type;
    std::vector<cosim_mismatch> reported;      // the first max_reported of the mismatch records
    std::string error;                         // a side stopped making progress (watchdog), or did not finish
    bool pass() const {
        return error.empty() && data_mismatches == 0 && timing_mismatches == 0 && golden_mismatches == 0;
    }
};

// Elaborates and runs one SystemC simulation (so once per process). Throws config::config_error when this build
// has no RTL of rows x cols; SystemC errors propagate as sc_report.
cosim_result run_cosim(const cosim_options& opt);

} // namespace trnsim::tb

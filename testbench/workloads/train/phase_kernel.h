// Vector phases of a training step on a whole chip: the elementwise and row-reduction work between the GEMMs
// (RMS norm and its backward, softmax and its backward, RoPE, SwiGLU and its backward, residual adds, copies, Adam)
// compiled with kernel_builder into every core's DMA / Vector / Scalar streams and simulated: tensors stream
// HBM -> SBUF -> engines -> SBUF -> HBM in [partitions x columns] tiles, two buffer sets alternating so the loads
// of the next tile overlap the work on this one.
//
// Work split: row-reduction phases (norms, softmax) deal whole 128-row tiles to the cores (a row must fit one
// buffer set in SBUF, else std::invalid_argument names the phase and its shape); elementwise phases deal
// (row tile, column chunk) pieces, so a 128 x huge Adam tensor still spreads over every core. Tensors are in the
// model dtype (Adam: FP32 parameter and moments, model-dtype gradient), engine math FP32 (docs/vector_engine.md).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/core/instruction.h"
#include "models/numerics/dtype.h"
#include "platforms/config/platform_config.h"
#include "testbench/sim_run.h"
#include "testbench/workloads/train/layer_plan.h"

namespace trnsim::train {

// A tensor the caller placed: its chip-global address and the elements from one row to the next (0: the phase's
// columns; a longer pitch makes the tensor a block of columns of a wider one, e.g. the gate half of gate|up).
struct phase_tensor {
    uint64_t addr = 0, pitch = 0;
};

struct phase_spec {
    phase_kind kind = phase_kind::add;
    uint64_t rows = 128, cols = 128;
    numerics::dtype dtype = numerics::dtype::bf16;
    uint64_t hbm_offset = 0;  // the tensors start this far above the HBM base (placement studies, replay checks)
    // Tensors by name where the caller put them (a step chains its operations through them); the others are placed
    // from hbm_base + hbm_offset. Names: add a b y; copy a y; swiglu g u y; swiglu_bwd g u dy dg du; rope x cos sin
    // y; rmsnorm x gain y rstd; rmsnorm_bwd x dy gain rstd dx, and dgain (FP32, one partial row per 128-row tile);
    // softmax s p; softmax_bwd p dp ds; adam param m v grad w; softmax_stats s stats; softmax_merge s stats p;
    // gather table zero y; scatter_add dy zero table. Pitches apply to rows x cols tensors.
    std::map<std::string, phase_tensor> at;
    // Attention's softmax: p = softmax(scale * s) over each row, the scores a query may not see (causal_block > 0:
    // rows are blocks of causal_block queries, row r is query r mod causal_block, column c key c; a multiple of the
    // SBUF partitions) masked first; softmax_bwd: ds = scale * p (dp - sum(p dp)).
    float scale = 1.0f;
    uint64_t causal_block = 0;
    // RoPE: the row is blocks of rope_dim columns (the heads of a q|k row), each rotated in its halves, column c of
    // a block paired with c + rope_dim / 2; 0: the whole row is one block. cos and sin are rows x cols tables.
    uint64_t rope_dim = 0;
    // colsum: y += the sum of x's rows (an accumulating store, as a gain gradient is summed over micro-batches)
    // instead of y = the sum; scatter_add: into the table as it is instead of from zero.
    bool accumulate = false;
    // A softmax over rows split across `parts` chips (the vocabulary-parallel LM head's logits): softmax_stats writes
    // its shard's row statistics ("stats": the rows' maxima m, then their exp-sums sum exp(scale (s - m)), FP32);
    // the chips gather them (an all-gather: every part's stats one after another) and softmax_merge computes
    // p = exp(scale (s - M)) / S from its shard and every part's statistics, M = max m_g, S = sum s_g exp(scale (m_g - M)).
    uint32_t parts = 1;
    // The embedding's row moves, DMA only (no SBUF, no engine), one descriptor per row: gather y[i] = table[index[i]]
    // (index[i] < 0: a token outside the chip's vocabulary shard, y[i] = the zero row); scatter_add table[index[i]]
    // += dy[i] for every i with index[i] >= 0 (accumulating copies, the sum rounded to the dtype at each), the table
    // first set to the zero row unless `accumulate`. The table is table_rows x cols; rows is index.size() (tokens).
    // A core owns the table rows r with r mod cores = its number; the copies into one row go in waves, the next
    // wave once the last is done, so no two copies into one row are ever in flight together.
    std::vector<int64_t> index;
    uint64_t table_rows = 0;
    uint64_t seed = 1;        // functional runs: the inputs' seeded random values
    bool compile_only = false;  // build the programs (every mapping check) and return before simulating
};

// A functional run's check of one output against the FP64 reference of the phase on the same (stored) inputs:
// normwise error max |got - ref| / max |ref| within `tolerance` (half an ulp of the output dtype plus the engines'
// FP32 rounding and activation approximations, docs/vector_engine.md).
struct phase_check {
    std::string name;
    double rel_err = 0, tolerance = 0;
    bool pass = false;
};

struct phase_result {
    double sim_ns = 0, wall_s = 0;
    double hbm_bytes = 0;          // read + written
    double min_time_hbm_ns = 0;    // hbm_bytes at the chip's HBM bandwidth
    double engine_ns = 0;          // the busiest core's busiest engine (Vector or Scalar)
    uint64_t instructions = 0;     // over all cores
    uint32_t chunk_cols = 0, buffer_sets = 0;
    bool checked = false, pass = false;  // functional runs (sim.functional = true): every output checked
    std::vector<phase_check> checks;
    bool memory_bound() const { return min_time_hbm_ns >= engine_ns; }
};

// A phase's tensors: their names, whether the phase reads and writes them, their shape (rows x cols, 1 x cols, rows
// x 1, or for the norm backward's dgain one FP32 row per tile of `partitions` rows) and type.
struct phase_tensor_info {
    std::string name;
    bool read = false, written = false, fp32 = false;
    uint64_t rows = 0, cols = 0;
};
std::vector<phase_tensor_info> phase_tensors(const phase_spec& s, uint32_t partitions);

// The Adam step the adam phase runs (its learning rate, betas, epsilon and step number) in FP64, in place: the
// reference of functional checks.
void adam_reference(std::vector<double>& param, std::vector<double>& m, std::vector<double>& v,
                    const std::vector<double>& grad);

// The phase's program for every core of a chip like `cc` (its tensors from hbm_base + s.hbm_offset), and the HBM
// bytes its tensors span from there (4 KiB aligned). Both throw std::invalid_argument as run_phase does for a shape
// it cannot map.
std::vector<core::core_program> compile_phase(const platform::chip_config& cc, const phase_spec& s);
uint64_t phase_hbm_bytes(const platform::chip_config& cc, const phase_spec& s);

// Functional runs (cfg.functional) fill the inputs with seeded values and check every output; timing-only runs
// move no data. Throws std::invalid_argument for a phase that cannot be mapped (zero size, a row that does not fit SBUF).
phase_result run_phase(const platform::platform_config& cfg, const phase_spec& s, const tb::sim_options& opt);

}  // namespace trnsim::train

// One training step simulated whole on a platform of full chips (issue 42): every chip runs its own instruction
// streams for the step, all chips in one simulation, timing-only.
//
// What a chip runs, in the order of docs/training.md: its stage's passes in 1F1B order (pp 1: for each micro-batch
//   the forward then the backward): a forward is the embedding gather (+ its tensor-parallel all-reduce) on the first
//   stage, the forward of the stage's layers, the LM head on the last stage; a backward the head's backward on the
//   last stage, the stage's layers' backward, last layer first, and the embedding's gradient scatter-add on the
//   first stage (the row moves follow each replica's tokens, step_tokens, in each chip's vocabulary shard); the
//   activations and their gradients sent between neighbouring stages (every (data, tensor) rank's pair at once, on streams of their own); the operations of
//   layer_plan.h, each lowered to the chip's instructions as the composed step simulates it on its own (GEMMs by
//   the GEMM compiler, vector phases by phase_kernel, tensor-parallel all-reduces by the collective lowering over
//   every tp group at once, on the chips' DMA queues and semaphores);
//   the data-parallel gradient all-reduce of each layer (every dp group at once) on a stream of its own, issued as
//   soon as that layer's backward of the last micro-batch is done and running beside the backward of the layers
//   below it, one bucket after another; the embedding/head bucket after the whole backward;
//   Adam on every layer's parameters and the head's once every bucket is reduced.
// Operations on one stream run one after another on a chip, with a barrier between them (op_sequence.h); an
// attention GEMM of several heads is one operation whose heads' programs run side by side, heads rotated over the
// cores. Buffers: every operation has its own HBM region (a ring over the chip's HBM; timing-only runs move no data).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "platforms/cluster/cluster.h"
#include "platforms/config/platform_config.h"
#include "testbench/sim_run.h"
#include "testbench/workloads/gemm/gemm.h"
#include "testbench/workloads/train/step_tensors.h"
#include "testbench/workloads/train/train_run.h"

namespace trnsim::train {

struct whole_options {
    collective::algo tp_algo = collective::algo::bidir_ring, dp_algo = collective::algo::bidir_ring;
    tb::sim_options sim;
    // Called once the platform is built, before time 0 (a timeline attaches here).
    std::function<void(platform::multichip_platform&)> on_platform;
    // The decoder stack alone: every layer's forward and backward, their all-reduces, sends, buckets and Adam; no
    // embedding and no head (each replica's input activations and the gradient of the stack's output are given).
    bool stack = false;
    // A functional run of the step, checked: every layer's forward and backward on every chip, the tensor-parallel
    // all-reduces, pipeline sends, gradient buckets and Adam, the embedding (each replica's tokens, step_tokens:
    // the rows of every chip's vocabulary shard gathered and all-reduced, the input gradients added into its
    // gradient) and the LM head (its vocabulary-parallel softmax and the loss gradient over seeded labels); with
    // stack, neither: the input activations and the gradient of the stack's output seeded. Every chip's outputs (the
    // stack's output, the head's probabilities: the last micro-batch's, whose activations are not reused), the
    // stack's input gradients (stack only), reduced gradients (the embedding's and the head's too) and weight
    // updates compared with the FP64 model (the embedding, the golden decoder's layers stacked, the head, summed over
    // the replicas' sequences and micro-batches). As many key/value heads as query heads (std::invalid_argument
    // otherwise).
    bool check = false;
    uint64_t seed = 1;
    // One layer's pass alone, as the composed step on full chips simulates its layers (train_run.cpp): layer 0 of
    // every stage, micro-batch 0, on every chip from time 0; its forward, or its backward (accumulating into the
    // gradients when `accumulate`) with, when `bucket_beside`, a layer's gradient bucket issued at time 0 on the
    // buckets' stream beside it (the bucket of the layer above, which the step runs beside this backward: layer 1's
    // gradients, or layer 0's own when a stage has one layer). No embedding, head, sends, other buckets or Adam.
    struct layer_pass {
        bool backward = false, accumulate = false, bucket_beside = false;
    };
    std::optional<layer_pass> pass;
};

// One compared tensor of a checked step: normwise error max |got - want| / max |want| against its tolerance.
struct whole_check {
    std::string name;  // "chip 3 layer 1 gradients", "chip 0 input gradient", ...
    double rel_err = 0, tolerance = 0;
    bool pass = false;
};

struct whole_span {
    std::string name;   // "L3 bwd.qkv.dgrad", "bucket layer 3", "adam layer 3"
    std::string kind;   // gemm | phase | tp_allreduce | dp_allreduce | adam
    uint32_t chip = 0, micro_batch = 0;
    double begin_ns = 0, end_ns = 0;
    // The core whose part completed last, and how long after the latest completion of the operation's parts on the
    // chip's other cores (0 when only one core ran it): a large lag names a core held back by something beside the
    // operation (a collective's copies on the same DMA engines, docs/training.md).
    uint32_t last_core = 0;
    double lag_ns = 0;
};

// One chip's step, measured from its instructions (sums to end_ns): the spans of its GEMMs, vector phases (embedding,
// norms, softmax, RoPE, SwiGLU, residuals, the head's), tensor-parallel all-reduces and Adam; the data-parallel
// gradients' exposed part (last bucket done after the last backward operation); the pipeline bubble (before each
// pass that waits for a send into its stage: the time since the chip's previous operation ended, or since time 0);
// and the rest: the barriers between operations and time waiting for other chips.
struct whole_breakdown {
    uint32_t chip = 0, stage = 0;
    double end_ns = 0;                  // the chip's last completion
    double gemm_ns = 0, phase_ns = 0, tp_ns = 0, optimizer_ns = 0, dp_exposed_ns = 0, bubble_ns = 0, sync_ns = 0;
    double backward_end_ns = 0, dp_end_ns = 0;  // last backward operation, last bucket
    nlohmann::json to_json() const;
};

struct whole_result {
    double step_ns = 0;                 // time 0 to the last completion on any chip
    uint32_t critical_chip = 0;         // the chip that finished last
    // The critical chip's breakdown (per_chip[critical_chip]'s figures).
    double gemm_ns = 0, phase_ns = 0, tp_ns = 0, optimizer_ns = 0, dp_exposed_ns = 0, bubble_ns = 0, sync_ns = 0;
    double backward_end_ns = 0, dp_end_ns = 0;  // critical chip: last backward operation, last bucket
    std::vector<whole_breakdown> per_chip;      // every chip of the platform, by chip number
    std::vector<uint32_t> stage_critical;       // per pipeline stage: its chip that finished last
    double tokens_per_s = 0, mfu = 0;
    uint64_t operations = 0;            // over all chips
    uint64_t barrier_writes = 0;
    uint64_t instructions = 0;          // over all chips and cores
    std::vector<whole_span> spans;      // every operation on every chip, in the order they were added
    double setup_wall_s = 0, wall_s = 0;
    bool checked = false, pass = false;  // whole_options::check
    std::vector<whole_check> checks;
    nlohmann::json to_json() const;
};

// Where the whole step reduces a tensor-parallel all-reduce: in place on its activation (`tensor`, an offset from
// the HBM base), its scratch in the passes' collective region (`region`). Under the HBM channel hash an all-reduce's
// time depends on both (docs/training.md), so the composed step simulates each where the whole step puts it.
struct tp_place {
    uint32_t stage = 0, micro_batch = 0, layer = 0;  // layer: within the stage (part layer)
    step_part part = step_part::layer;
    std::string op;  // the layer_op's name ("fwd.attn.allreduce")
    uint64_t tensor = 0, region = 0;
};
// Every tensor-parallel all-reduce of the step, from the whole step's placement alone (no program is built).
// Throws std::invalid_argument as run_whole_step does when the step's buffers do not fit a chip's HBM.
std::vector<tp_place> whole_tp_places(const platform::platform_config& cfg, const model_spec& m, const parallel_plan& p,
                                      const whole_options& opt = {});

// Pieces the composed step shares with the whole step (one way to build each, so the two agree).
// An attention GEMM's `count` heads side by side as one program per core: head j's operands and C in a region of
// their own, taken by `take(bytes)` (an offset from the HBM base), its blocks starting on core j mod cores.
std::vector<core::core_program> heads_side_by_side(const platform::chip_config& cc, const tb::gemm_spec& g,
                                                   uint32_t count, const std::function<uint64_t(uint64_t)>& take);
// Runs per-core programs on one chip of cfg (its first chip's model, timing as configured): the simulated time of
// the last completion (ns) and the HBM bytes read and written. One per process (SystemC elaborates once).
struct chip_run {
    double ns = 0, hbm_bytes = 0;
};
chip_run simulate_on_chip(const platform::platform_config& cfg, std::vector<core::core_program> programs,
                          const tb::sim_options& opt);
// The cost of one barrier between two operations on a chip (op_sequence.h): a chain of empty operations on one chip
// simulated, its time divided by their number (ns).
double barrier_ns(const platform::platform_config& cfg, const tb::sim_options& opt);

// What --whole refuses, checked before anything runs (std::invalid_argument naming the option).
void check_whole(const platform::platform_config& cfg, const model_spec& m, const parallel_plan& p);

// The step's all-reduces run in place on its activations and gradient buckets: std::invalid_argument naming the
// option (after `prefix`, e.g. "--whole ") when the tensor- or data-parallel algorithm in use cannot.
void check_reduces_in_place(const parallel_plan& p, collective::algo tp, collective::algo dp, const std::string& prefix);

// Throws std::invalid_argument naming the option for what --whole cannot run (light chips, a Vector Engine reduce
// beside compute), or a shape the chip cannot map, or buffers that do not fit HBM.
whole_result run_whole_step(const platform::platform_config& cfg, const model_spec& m, const parallel_plan& p,
                            const whole_options& opt);

}  // namespace trnsim::train

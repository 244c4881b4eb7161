// One training step of a model on a multi-chip platform under a parallelism plan (train_spec.h), simulated piece
// by piece and composed (docs/training.md):
//
//   1. Every operation of a decoder layer's forward and backward pass on one chip (layer_plan.h) is simulated on
//      the full chip model of the platform, timing-only: GEMMs through the GEMM compiler on all cores, vector
//      phases through phase_kernel.h. So are the LM head and embedding of the last and first stage and Adam.
//   2. Communication is simulated on the whole multi-chip platform: the tensor-parallel all-reduce of every tp
//      group at once, the data-parallel gradient all-reduce of one layer's bucket in every dp group at once, the
//      pipeline sends between neighbouring stages of every (data, tensor) rank at once (collective/groups.h), so
//      groups contend for links and NICs as they do in the step.
//   3. A stage's forward and backward time per micro-batch is the sum of its operations (each operation waits for
//      the previous one: no overlap between GEMMs and vector phases; the tp all-reduces sit on the critical path).
//      The 1F1B schedule orders every stage's forwards and backwards over the micro-batches with the send times
//      between stages; the gradient all-reduce of each layer starts when the last micro-batch's backward of that
//      layer is done and runs one bucket after another, overlapping the rest of the backward pass; Adam follows.
//
// Sampling (the default, replay): every distinct operation is simulated once and its time replayed for every
// layer, micro-batch, stage and chip that runs it (all chips of a stage run the same shapes; layers are identical).
// With replay off, every operation of every layer of every stage and micro-batch is simulated on its own with its
// own HBM placement (vector phases), which is how a test shows that replay gives the same step.
// Each simulation runs in its own forked process (SystemC elaborates once per process), `jobs` at a time.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/collective/schedule.h"
#include "platforms/config/platform_config.h"
#include "testbench/workloads/collective/collective_run.h"
#include "testbench/workloads/gemm/gemm.h"
#include "testbench/workloads/train/layer_plan.h"
#include "testbench/workloads/train/phase_kernel.h"
#include "testbench/workloads/train/pipeline.h"
#include "testbench/workloads/train/train_spec.h"

namespace trnsim::train {

// The streams of a step on full chips (whole_step.h): the passes with their tensor-parallel all-reduces, the
// gradient buckets, the forward and the backward pipeline sends.
enum step_stream : uint32_t { STREAM_PASSES = 0, STREAM_BUCKETS = 1, STREAM_SENDS_FWD = 2, STREAM_SENDS_BWD = 3 };
// How a step runs a collective of `stream` on full chips of `cores` cores, the composed step's simulations and the
// whole step alike (collective_options: copy_piece, first_core, cores):
// - copies in DMA instructions of at most 1 MiB: an engine serves its descriptors in order, so a copy of a whole
//   gradient bucket in one instruction would hold every DMA engine of its core for milliseconds in front of the
//   compute's loads (measured: a backward residual add of 37 us took 6.3 ms behind one);
// - when collectives run beside each other (dp > 1 or pp > 1), the passes' all-reduces on the first half of a chip's
//   cores and the buckets and sends on the second half, so that a bucket running beside the backward pass does not
//   hold the next all-reduce's DMA work behind its own in the engines' queues (measured on tiny dp 2 x tp 4, ring-8:
//   an all-reduce beside a bucket took 98 us instead of 26); otherwise every collective has all cores.
tb::collective_options step_collective(uint32_t stream, uint32_t cores, const parallel_plan& p);
// A group collective of the step: an all-reduce of model-dtype tensors, or the head's all-gather of the FP32 softmax
// statistics (bytes: the gathered output).
collective::params step_collective_params(collective::op o, collective::algo a, numerics::dtype model, uint64_t bytes);

struct train_options {
    bool replay = true;
    unsigned jobs = 2;                      // simulations running at once
    collective::algo tp_algo = collective::algo::bidir_ring, dp_algo = collective::algo::bidir_ring;
    uint32_t steps = 1;                     // steps reported (every step of a plan has the same timing)
    bool quiet = false;                     // no progress line
    std::string timeline_file;              // Chrome/Perfetto JSON of every chip's step (empty: none)
    // Host memory the plan may take (bytes; 0: no limit): without replay every operation use is a simulation
    // request of its own, so a large model's uses are counted first and a plan over the limit is refused.
    double host_limit_bytes = 0;
    // On full chips: each distinct layer pass (forward; backward, storing or accumulating its gradients, beside the
    // gradient bucket of the layer above or not) simulated on the whole platform, every chip running it as the whole
    // step does (whole_options::pass), and its operations' times taken from there (--compose passes, the default).
    // false: each operation simulated alone (--compose ops).
    bool layer_passes = true;
};

// Whether an operation of that kind (op_cost::kind, the whole step's spans) is the tensor-parallel group's
// communication: its all-reduces and the head's all-gather.
inline bool tp_comm(const std::string& kind) { return kind == "tp_allreduce" || kind == "tp_allgather"; }

// One simulated operation and what it cost.
struct op_cost {
    std::string name, what;                 // "fwd.qkv"; "gemm 4096x4096x1536", "phase softmax 16384x4096", ...
    std::string kind;                       // gemm | phase | tp_allreduce | dp_allreduce | send | adam
    uint32_t count = 1;                     // instances per use (attention heads)
    double ns = 0;                          // one instance, simulated
    double flops = 0;                       // all instances
    double hbm_bytes = 0;
    bool memory_bound = false;              // its HBM time bound is at least its compute bound
    double wall_s = 0;                      // host time of its simulation
};

struct stage_result {
    double fwd_ns = 0, bwd_ns = 0;          // the last micro-batch (all layers of the stage, head / embedding
                                            // included; its backward accumulates the gradients when M > 1)
    double compute_ns = 0, memory_ns = 0, tp_ns = 0;  // of fwd + bwd per micro-batch: compute-bound ops,
                                                      // memory-bound ops, tensor-parallel all-reduces
    double sync_ns = 0;                     // the barriers after those operations (one each)
    double pipeline_end_ns = 0;             // the stage's last backward
    double bubble_ns = 0;                   // pipeline_end - busy (idle: warm-up, cool-down, waiting for sends)
    double dp_end_ns = 0, dp_exposed_ns = 0;  // last gradient bucket reduced; the part after the last backward
    double optimizer_ns = 0, end_ns = 0;
    // HBM a chip of this stage needs (an estimate, not simulated): parameters with their gradients and Adam state
    // at 16 B per parameter (model-dtype weight and gradient, FP32 master weight, m, v: mixed-precision Adam), and
    // the activations 1F1B keeps for its micro-batches in flight (min(P - s, M)), per layer and micro-batch
    // s b h (10 + 24 / t + 5 a s / (h t)) bytes (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
    // Transformer Models", tensor parallelism without sequence parallelism, no recomputation; 16-bit activations).
    uint64_t params = 0;
    double state_bytes = 0, activation_bytes = 0;
    uint64_t in_flight = 0;
    std::vector<pipeline_span> spans;       // the 1F1B order
    struct bucket_span {
        std::string name;                   // "layer 31", "embedding/head"
        double begin_ns, end_ns;
    };
    std::vector<bucket_span> dp_buckets;    // every gradient bucket, in the order they run
};

struct train_result {
    model_spec model;
    parallel_plan plan;
    train_options opt;
    std::string platform;
    uint32_t chips = 0;
    uint64_t micro_batches = 0;             // per replica
    double step_ns = 0;
    double tokens_per_s = 0;
    double model_flops = 0;                 // per step, all chips
    double peak_tflops_per_chip = 0;        // dense, model dtype
    double mfu = 0;
    // Breakdown of the critical stage's step (sums to step_ns); sync: the barriers between the passes' operations.
    double compute_ns = 0, memory_ns = 0, tp_exposed_ns = 0, sync_ns = 0, bubble_ns = 0, dp_exposed_ns = 0,
           optimizer_ns = 0;
    double barrier_ns = 0;                  // one barrier between two operations (simulated on the chip)
    uint32_t critical_stage = 0;
    double send_ns = 0;                     // one pipeline send (all pairs at once)
    double hbm_capacity_bytes = 0;          // per chip
    bool fits = true;                       // every stage's state and activations fit HBM
    // Full chips, tp > 1: the tensor-parallel all-reduces simulated where the whole step runs them (whole_step.h
    // tp_place); else at the layout's own place, tp_place_note saying why (the whole step cannot hold the plan).
    bool tp_at_step_places = false;
    std::string tp_place_note;
    // Full chips with layer_passes: the layers' operations timed from their passes simulated on the whole platform
    // (layer_pass_sims simulations); else why not (light chips, --compose ops, a plan the whole step refuses).
    bool layer_passes = false;
    uint32_t layer_pass_sims = 0;
    std::string layer_pass_note;
    std::vector<stage_result> stages;
    std::vector<op_cost> layer_fwd, layer_bwd, head_fwd, head_bwd, embed_fwd, embed_bwd;  // one layer, the last micro-batch
    op_cost dp_bucket, dp_head_bucket, adam_layer, adam_head;
    uint64_t simulations = 0;               // sub-simulations run
    uint64_t replayed = 0;                  // operation uses served by replaying one of them
    double sim_wall_s = 0;                  // host seconds summed over the simulations
    double sim_peak_rss_mib = 0;            // the largest simulation's peak resident memory, and which one
    std::string sim_peak_rss_what;
    double wall_s = 0;                      // elapsed
    std::vector<uint32_t> placement;        // rank -> chip
    nlohmann::json to_json() const;
};

// Chip of every rank: the platform's chips in snake order through each server's torus (x fastest, reversing
// direction every line) and server by server, so consecutive ranks are neighbours.
std::vector<uint32_t> snake_placement(const collective::topology& t);

// The plan's groups of chips, per pipeline stage, rank r = t + tp (d + dp s) on chip placement[r]: the tensor-
// parallel groups ([stage][d] -> the chips of t = 0 .. tp-1), the data-parallel groups ([stage][t] -> the chips of
// d = 0 .. dp-1), the pipeline sends from each stage to the next ([stage] -> (chip, its peer on stage + 1) for every
// (d, t); none from the last stage), and each stage's chips in rank order.
struct plan_groups {
    std::vector<std::vector<std::vector<uint32_t>>> tp, dp;
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> sends;
    std::vector<std::vector<uint32_t>> chips;
};
plan_groups groups_of(const std::vector<uint32_t>& placement, const parallel_plan& p);

// The GEMM (one instance) and the vector phase an operation of layer_plan.h is, in the model dtype t: the one
// reading of an operation the composed step and the whole step share.
tb::gemm_spec gemm_of(const layer_op& o, numerics::dtype t);

// The HBM a chip of each pipeline stage needs (stage_result's estimate: params, state_bytes, activation_bytes,
// in_flight filled in).
struct stage_memory {
    uint64_t params = 0, in_flight = 0;
    double state_bytes = 0, activation_bytes = 0;
};
std::vector<stage_memory> stage_memory_of(const model_spec& m, const parallel_plan& p, const layer_plan& lp);
phase_spec phase_of(const layer_op& o, numerics::dtype t);

// What an operand of o (by role, layer_op::io) covers for one instance: rows x cols of its tensor (a tp_allreduce's
// "x": the whole tensor, rows = cols = 0), whether o reads and writes it, and whether it is FP32 (else the model
// dtype t). `partitions`: the SBUF partitions (the norm backward's gain-gradient rows). std::logic_error for a role
// o does not have.
struct operand_use {
    uint64_t rows = 0, cols = 0;
    bool read = false, written = false, fp32 = false;
};
operand_use use_of(const layer_op& o, const std::string& role, numerics::dtype t, uint32_t partitions);
// The bytes of a declared tensor.
uint64_t bytes_of(const tensor_decl& d, numerics::dtype t);

// Checks the dataflow of a layer plan (plan_layer): every operand of every operation names a tensor of its part
// (layer, head, embedding), of the operand's type, and lies inside it for every instance; a tp all-reduce covers
// its whole tensor; every tensor an operation reads is an input, weight or table or was written by an earlier
// operation of the passes (the forward, then the backward of the same micro-batch); every activation, and the
// gradient of every weight the passes read, is written.
// Throws std::logic_error naming the operation, operand and tensor.
void check_dataflow(const layer_plan& lp, numerics::dtype t, uint32_t partitions);

// Throws std::invalid_argument (bad plan: names the option) or std::runtime_error (a simulation failed: names it).
train_result run_train(const platform::platform_config& cfg, const model_spec& m, const parallel_plan& p,
                       const train_options& opt);

}  // namespace trnsim::train

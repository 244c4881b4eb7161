// What one chip does for one micro-batch: the decoder layer's work on one tensor-parallel shard, as a list of
// operations that are each simulated on their own (train_run.h): GEMMs (the chip's GEMM compiler over all its
// cores), vector phases (phase_kernel.h: norms, softmax, RoPE, SwiGLU, residual adds, Adam on the Vector and
// Scalar Engines, streaming through HBM) and tensor-parallel all-reduces. Plain C++.
//
// Shapes per chip, tokens T = micro_batch * seq, H hidden, d head dim, heads and kv heads and ffn divided by tp:
//   forward   norm1 (T x H), qkv GEMM T x H x (h + 2 kv) d, RoPE on q and k, per head: scores seq x d x seq,
//             softmax, P V seq x seq x d; output projection T x h d x H, all-reduce T x H; residual add, norm2,
//             gate+up GEMM T x H x 2F, SwiGLU, down T x F x H, all-reduce T x H, residual add.
//   backward  per linear layer y = x W (x: T x in): dgrad T x out x in and wgrad in x T x out; per head
//             dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q; softmax, SwiGLU, RoPE and norm backward phases;
//             all-reduces of the input gradients after the qkv and gate+up dgrads (Megatron's f/g operators).
// Attention is not fused (scores and probabilities go through HBM) and the causal mask's zero half is computed
// (no block skipping): both stated in docs/training.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "testbench/workloads/train/train_spec.h"

namespace trnsim::train {

enum class phase_kind : uint8_t {
    rmsnorm, rmsnorm_bwd, softmax, softmax_bwd, rope, swiglu, swiglu_bwd, add, copy, adam, colsum,
    softmax_stats, softmax_merge,  // a softmax over a row split across chips (the vocabulary-parallel LM head)
    gather, scatter_add            // the embedding's row lookups and their gradients' accumulation (row DMAs)
};
const char* name_of(phase_kind k);
// The phases that move rows by index (phase_spec::index: the embedding's tokens) rather than stream a tensor.
inline bool row_moves(phase_kind k) { return k == phase_kind::gather || k == phase_kind::scatter_add; }

// The step's tensors on one chip, by name. Scopes: a layer's inputs ("x", the layer below's "y" or the stage's input;
// "dy", the layer above's "dx" or the head's), activations (one set per layer and micro-batch, kept from the forward
// to the backward), weights and their gradients (per layer, each in one flat buffer in the order declared: the
// gradient bucket all-reduced and updated by Adam as a whole, the gradient of weight w named "d" + w), and tables
// (one per stage: RoPE's cos and sin, and sin negated for the backward rotation).
enum class tensor_scope : uint8_t { input, activation, weight, table };
struct tensor_decl {
    std::string name;
    uint64_t rows = 0, cols = 0;
    tensor_scope scope = tensor_scope::activation;
    bool fp32 = false;           // else the model dtype
    bool all_reduced = false;    // a tensor-parallel all-reduce runs on it in place
};

// Where an operation's operand lies: a block of a step tensor from row `row` and column `col` (its rows the
// tensor's width apart). An operation of `count` instances (attention's (sequence b, head j) pairs of a chip and
// micro-batch, instance i = b * heads + j) moves instance i's block down by b * b_rows + i * i_rows rows and right
// by (j / group) * j_cols columns (group: the query heads that share a key/value head).
struct operand {
    std::string tensor;
    uint64_t row = 0, col = 0;
    uint64_t b_rows = 0, i_rows = 0, j_cols = 0;
    uint64_t group = 1;
};

struct layer_op {
    enum class kind : uint8_t { gemm, phase, tp_allreduce, tp_allgather };
    kind k = kind::gemm;
    std::string name;         // "fwd.qkv", "bwd.down.wgrad", ...
    uint64_t m = 0, kk = 0, n = 0;  // gemm: C[m x n] = A[m x kk] B[kk x n]
    phase_kind phase = phase_kind::add;
    uint64_t rows = 0, cols = 0;    // phase: a rows x cols tensor (rows are tokens or score rows)
    uint64_t bytes = 0;             // tp_allreduce, tp_allgather: message size per chip
    uint32_t parts = 1;             // phase softmax_merge: the shards it merges; tp_allgather: the chips (y holds
                                    // parts x bytes, chip t's at t x bytes)
    uint32_t count = 1;             // identical instances (attention heads of this chip and micro-batch)
    // gemm: the operands as the step stores them (gemm.h): A as M x K (a token-major activation) rather than A^T,
    // B as N x K (a weight or activation used transposed) rather than K x N, C in the model dtype rather than FP32.
    bool a_rows = false, b_cols = false, c_model = false;
    // phase softmax / softmax_bwd: attention's scale 1 / sqrt(head dim) and causal mask (phase_kernel.h).
    float scale = 1.0f;
    uint64_t causal_block = 0;
    uint64_t rope_dim = 0;  // phase rope: rotated per head of this many columns
    // phase gather / scatter_add: the embedding's vocabulary shard (table_rows rows) and each token's row in it, or
    // -1 (phase_spec::index). The plan leaves index empty: the tokens are the step's data (step_tokens), set by the
    // step that runs the operation for a replica, micro-batch and shard.
    uint64_t table_rows = 0;
    std::vector<int64_t> index;
    // The operands by role: gemm "a", "b", "c"; a phase its tensors' names (phase_kernel.h); tp_allreduce "x" (in
    // place); tp_allgather "x" (this chip's) and "y" (every chip's).
    std::vector<std::pair<std::string, operand>> io;
    uint32_t heads = 1;      // count > 1: query heads per sequence (instance i is head i mod heads)
    // Writes a weight's gradient (a wgrad GEMM's C, a gain gradient's colsum): summed over the micro-batches, the
    // first micro-batch's backward stores it and the later ones add to it (accumulate: gemm_spec::c_accumulate,
    // phase_spec::accumulate).
    bool gradient = false, accumulate = false;
    double flops() const { return k == kind::gemm ? 2.0 * double(m) * double(kk) * double(n) * count : 0.0; }
};

struct layer_plan {
    std::vector<layer_op> fwd, bwd;        // one decoder layer, one micro-batch
    // The tensors the operations name: a decoder layer's, the head's (last stage), the embedding's (first stage).
    std::vector<tensor_decl> layer_tensors, head_tensors, embed_tensors;
    std::vector<layer_op> head_fwd, head_bwd;  // last stage: final norm, LM head GEMM, softmax cross-entropy
    std::vector<layer_op> embed_fwd;       // first stage: embedding gather (+ all-reduce of the vocab-parallel lookup)
    std::vector<layer_op> embed_bwd;       // first stage: the token gradients added into the embedding's gradient
    uint64_t layer_params_per_chip = 0;    // the layer's parameters on one chip (its tp shard, norms replicated)
    uint64_t head_params_per_chip = 0;     // LM head shard (hidden x vocab / tp) + final norm
    uint64_t embed_params_per_chip = 0;    // embedding shard (vocab / tp x hidden)
    uint64_t activation_bytes = 0;         // T x H in the model dtype: a pipeline send, a tp all-reduce
};

layer_plan plan_layer(const model_spec& m, const parallel_plan& p);

// The step's tokens (seeded, uniform over the vocabulary): replica r's micro-batches' tokens one after another
// (micro_batches x micro_batch x seq of them). The same in timing-only and functional runs: the embedding's row
// moves follow them.
std::vector<uint32_t> step_tokens(const model_spec& m, const parallel_plan& p, uint64_t seed, uint32_t replica);
// Micro-batch mb's tokens as rows of vocabulary shard t (vocab / tp rows from t x vocab / tp): each token's row in
// the shard, -1 for a token outside it (layer_op::index).
std::vector<int64_t> shard_rows(const std::vector<uint32_t>& tokens, const model_spec& m, const parallel_plan& p,
                                uint64_t mb, uint32_t t);

// The backward of a micro-batch after the first: ops with every gradient-writing operation accumulating.
std::vector<layer_op> accumulating(std::vector<layer_op> ops);

// The parameters of stage st's ends on one chip (of S stages): the embedding on the first, the head on the last.
inline uint64_t ends_params(const layer_plan& lp, uint32_t st, uint32_t S) {
    return (st == 0 ? lp.embed_params_per_chip : 0) + (st + 1 == S ? lp.head_params_per_chip : 0);
}

// Adam over `params` parameters of one chip: a phase on a 128-row tensor (the parameters laid out flat).
layer_op adam_op(uint64_t params, std::string name);

// Model FLOPs of one step (all chips; matmuls, forward + backward, no recomputation): the numerator of MFU.
double step_model_flops(const model_spec& m, const parallel_plan& p, const layer_plan& lp);

}  // namespace trnsim::train

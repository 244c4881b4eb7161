// A training job: the model (a Llama-style decoder stack, from JSON: configs/models/NAME.json) and its parallelism
// plan (data, tensor and pipeline degrees, micro-batches, schedule) on a multi-chip platform. Plain C++.
//
// Parallelism (docs/training.md): Megatron-style tensor parallelism inside a layer (attention heads and the MLP's
// hidden dimension split over tp chips, an all-reduce of the activations after the attention output and the MLP
// down projection, two more in the backward pass), pipeline parallelism over layers (pp stages of layers / pp
// layers, 1F1B schedule over the micro-batches) and data parallelism over dp replicas (gradients all-reduced per
// layer as soon as the last micro-batch's backward pass of that layer is done, overlapping the rest of backward).
// Rank r = t + tp * (d + dp * s) (tensor rank t innermost, then data, then stage) sits on chip place(r) of the
// platform (train_run.h: the torus in snake order, so a tensor-parallel group is a chain of neighbours).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/numerics/dtype.h"

namespace trnsim::train {

struct model_spec {
    std::string name, description, source;  // source: the file it came from
    uint32_t layers = 2, hidden = 256, heads = 4, kv_heads = 4, ffn = 512, vocab = 1024;
    uint32_t seq = 128;            // tokens per sequence
    uint64_t global_batch = 8;     // sequences per optimizer step
    numerics::dtype dtype = numerics::dtype::bf16;  // weights, activations, gradients on the wire
    uint32_t head_dim() const { return hidden / heads; }
    // Parameters of one decoder layer (attention, SwiGLU MLP, two RMS norms) and of the whole model (plus the
    // token embedding and an untied LM head, vocab x hidden each, and the final norm).
    uint64_t layer_params() const;
    uint64_t params() const;
};

enum class pipeline_schedule : uint8_t { one_f_one_b };

struct parallel_plan {
    uint32_t dp = 1, tp = 1, pp = 1;
    uint32_t micro_batch = 1;       // sequences per micro-batch
    pipeline_schedule schedule = pipeline_schedule::one_f_one_b;
    uint32_t ranks() const { return dp * tp * pp; }
    // Micro-batches each data-parallel replica runs per step: global_batch / (dp * micro_batch).
    uint64_t micro_batches(const model_spec& m) const { return m.global_batch / (uint64_t(dp) * micro_batch); }
};

// Reads a model from `what`: a preset name (configs/models/NAME.json under config_dir) or a file path. Throws
// config::config_error naming the file and key path of a bad value, or the known presets for an unknown name.
model_spec load_model(const std::string& what, const std::string& config_dir);
// The preset names under config_dir/models.
std::vector<std::string> model_presets(const std::string& config_dir);

// Throws std::invalid_argument naming the option (--dp, --tp, --pp, --micro-batch, ...) when the plan does not
// fit the model and a platform of `chips` chips: dp * tp * pp == chips, heads, kv_heads and ffn divisible by tp,
// layers by pp, global_batch by dp * micro_batch.
void validate(const parallel_plan& p, const model_spec& m, uint32_t chips);

}  // namespace trnsim::train

// Where the tensors of a training step lie in one chip's HBM (whole_step.h), the same on every chip of a pipeline
// stage. Plain C++.
//
// Per stage, once: RoPE's tables and the embedding's zero row. Per layer, and for the stage's ends (the embedding
// on the first stage, the head on the last, in one set of buffers): the weights, their gradients (the bucket the
// data-parallel all-reduce reduces in place), the FP32 master weights and Adam's two moments, each one flat buffer in
// the order layer_plan declares the weights, padded to Adam's 128-row tensor. Per micro-batch: the activations a
// stage receives and the gradients it receives and sends (kept apart, so that a send never reads a buffer a later
// pass reuses). Per layer, head or embedding and micro-batch: a block of its activations, taken when the forward
// first names one of them and given back once the micro-batch's backward on the stage is done; blocks of one kind
// have one size and are reused, so a stage holds the blocks of the micro-batches it has in flight (1F1B).
//
// A layer's inputs are its neighbours' tensors: "x" is the layer below's "y" (layer 0: the embedding's "y" on the
// first stage, the received activations on the others), "dy" the layer above's "dx" (the last layer: the head's
// "dx" on the last stage, the received gradients on the others); layer 0's "dx" on a stage after the first is the
// buffer sent back. The head's "x" is the last layer's "y", the embedding's "dy" layer 0's "dx".
//
// Without the embedding (`embedding` false, as a checked stack of layers runs) the first stage takes its input
// activations as received and sends back its input gradients; without the head (`head` false) the last stage takes
// its output gradients as received. The head's labels: one tensor per micro-batch.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "models/numerics/dtype.h"
#include "testbench/workloads/train/layer_plan.h"

namespace trnsim::train {

enum class step_part : uint8_t { layer, head, embed };

struct placed_tensor {
    uint64_t addr = 0;   // offset from the HBM base
    uint64_t cols = 0;   // elements from one row to the next
    bool fp32 = false;   // else the model dtype
};

class step_tensors {
public:
    // Stage `stage` of `stages`, `layers` layers on the stage, `micro_batches` of them; HBM offsets [first, last).
    step_tensors(const layer_plan& lp, numerics::dtype t, uint32_t stage, uint32_t stages, uint32_t layers,
                 uint64_t micro_batches, uint64_t first, uint64_t last, bool embedding = true, bool head = true);

    // A tensor of layer `layer` (part layer), of the head or of the embedding, of micro-batch mb, by the name the
    // plan gives it (a weight's gradient: "d" + the weight's name). Takes the activation block when first named.
    // std::invalid_argument when HBM is full (naming chip.hbm.capacity_gib), std::logic_error for an unknown name.
    placed_tensor at(step_part part, uint32_t layer, uint32_t mb, const std::string& name);

    // The flat buffers of layer l (l == layers: the stage's ends), offsets from the HBM base.
    struct flat_buffers {
        uint64_t params = 0;                       // the parameters (Adam's tensor: 128 x ceil(params / 128))
        uint64_t w = 0, g = 0, master = 0, m = 0, v = 0;
    };
    const flat_buffers& flat(uint32_t l) const { return m_flat.at(l); }

    uint64_t received(uint32_t mb) const { return m_x_in.at(mb); }       // activations from the previous stage
    uint64_t labels(uint32_t mb) const { return m_labels.at(mb); }       // the head's labels (last stage)
    uint64_t received_grad(uint32_t mb) const { return m_dy_in.at(mb); }  // gradients from the next stage
    uint64_t sent_grad(uint32_t mb) const { return m_dx_out.at(mb); }     // gradients to the previous stage

    // Gives micro-batch mb's activation blocks back (its backward on the stage is done).
    void release(uint32_t mb);
    uint64_t high_water() const { return m_next; }  // the highest offset taken so far
    uint64_t blocks_taken() const { return m_blocks_taken; }

private:
    struct part_layout {
        std::map<std::string, const tensor_decl*> decl;
        std::map<std::string, uint64_t> off;   // activation: bytes into the block; weight: elements into the flat
        uint64_t block_bytes = 0, params = 0;
        std::vector<uint64_t> free_blocks;
    };
    uint64_t take(uint64_t bytes, const std::string& what);
    uint64_t block(step_part part, uint32_t layer, uint32_t mb);
    placed_tensor weight(step_part part, uint32_t layer, const std::string& name, bool gradient);

    numerics::dtype m_t;
    uint32_t m_stage, m_stages, m_layers;
    bool m_embedding, m_head;
    uint64_t m_next, m_last, m_blocks_taken = 0;
    part_layout m_parts[3];
    uint64_t m_head_in_ends = 0;  // the head's weights' element offset in the ends' flat buffers
    std::map<std::string, uint64_t> m_tables;
    std::vector<flat_buffers> m_flat;
    std::vector<uint64_t> m_x_in, m_dy_in, m_dx_out, m_labels;
    std::map<std::tuple<int, uint32_t, uint32_t>, uint64_t> m_blocks;  // (part, layer, mb) -> offset
};

}  // namespace trnsim::train

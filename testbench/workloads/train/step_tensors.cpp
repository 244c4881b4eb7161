#include "testbench/workloads/train/step_tensors.h"

#include <stdexcept>

namespace trnsim::train {

namespace {

constexpr uint64_t PAGE = 4096;
uint64_t pages(uint64_t bytes) { return (bytes + PAGE - 1) / PAGE * PAGE; }

}  // namespace

step_tensors::step_tensors(const layer_plan& lp, numerics::dtype t, uint32_t stage, uint32_t stages, uint32_t layers,
                           uint64_t micro_batches, uint64_t first, uint64_t last, bool embedding, bool head)
    : m_t(t), m_stage(stage), m_stages(stages), m_layers(layers), m_embedding(embedding), m_head(head),
      m_next(pages(first)), m_last(last) {
    const uint64_t esz = numerics::size_of(t);
    const std::vector<tensor_decl>* decls[3] = {&lp.layer_tensors, &lp.head_tensors, &lp.embed_tensors};
    for (int k = 0; k < 3; ++k) {
        auto& pl = m_parts[k];
        for (const auto& d : *decls[k]) {
            pl.decl[d.name] = &d;
            if (d.scope == tensor_scope::activation) {
                pl.off[d.name] = pl.block_bytes;
                pl.block_bytes += pages(d.rows * d.cols * (d.fp32 ? 4 : esz));
            } else if (d.scope == tensor_scope::weight) {
                pl.off[d.name] = pl.params;
                pl.params += d.rows * d.cols;
            }
        }
    }
    for (const auto& d : lp.layer_tensors)
        if (d.scope == tensor_scope::table) m_tables[d.name] = take(d.rows * d.cols * esz, "RoPE table " + d.name);
    for (const auto& d : lp.embed_tensors)
        if (stage == 0 && embedding && d.scope == tensor_scope::table) m_tables[d.name] = take(d.rows * d.cols * esz, "embedding " + d.name);
    // Flat buffers: every layer's, then the ends' (embedding weights first, then the head's).
    const bool first_stage = stage == 0 && embedding, last_stage = stage + 1 == stages && head;
    m_head_in_ends = first_stage ? m_parts[int(step_part::embed)].params : 0;
    auto flat_of = [&](uint64_t params, const std::string& what) {
        flat_buffers f;
        f.params = params;
        const uint64_t padded = (params + 127) / 128 * 128;
        f.w = take(padded * esz, what + " weights");
        f.g = take(padded * esz, what + " gradients");
        f.master = take(padded * 4, what + " master weights");
        f.m = take(padded * 4, what + " Adam first moments");
        f.v = take(padded * 4, what + " Adam second moments");
        return f;
    };
    for (uint32_t l = 0; l < layers; ++l) m_flat.push_back(flat_of(m_parts[int(step_part::layer)].params, "layer"));
    const uint64_t ends = (first_stage ? m_parts[int(step_part::embed)].params : 0) +
                          (last_stage ? m_parts[int(step_part::head)].params : 0);
    m_flat.push_back(ends ? flat_of(ends, "embedding/head") : flat_buffers{});
    // The tensors exchanged with the neighbouring stages, one per micro-batch.
    const auto& x = *m_parts[int(step_part::layer)].decl.at("x");
    const uint64_t act = x.rows * x.cols * esz;
    for (uint64_t mb = 0; mb < micro_batches; ++mb) {
        if (!first_stage) m_x_in.push_back(take(act, "received activations"));
        if (!first_stage) m_dx_out.push_back(take(act, "gradients sent back"));
        if (!last_stage) m_dy_in.push_back(take(act, "received gradients"));
        if (last_stage) {
            const auto& l = *m_parts[int(step_part::head)].decl.at("labels");
            m_labels.push_back(take(l.rows * l.cols * esz, "labels"));
        }
    }
}

uint64_t step_tensors::take(uint64_t bytes, const std::string& what) {
    const uint64_t at = m_next;
    if (at > m_last || pages(bytes) > m_last - at)
        throw std::invalid_argument("the step's tensors do not fit a chip's HBM: " + what + " (" +
                                    std::to_string(bytes >> 20) + " MiB) above the " + std::to_string(at >> 20) +
                                    " MiB already placed on a chip of stage " + std::to_string(m_stage) +
                                    " (chip.hbm.capacity_gib)");
    m_next += pages(bytes);
    return at;
}

uint64_t step_tensors::block(step_part part, uint32_t layer, uint32_t mb) {
    const auto key = std::make_tuple(int(part), layer, mb);
    const auto it = m_blocks.find(key);
    if (it != m_blocks.end()) return it->second;
    auto& pl = m_parts[int(part)];
    uint64_t at = 0;
    if (!pl.free_blocks.empty()) {
        at = pl.free_blocks.back();
        pl.free_blocks.pop_back();
    } else {
        static const char* names[3] = {"a layer's activations", "the head's activations", "the embedding's activations"};
        at = take(pl.block_bytes, names[int(part)]);
        ++m_blocks_taken;
    }
    m_blocks[key] = at;
    return at;
}

void step_tensors::release(uint32_t mb) {
    for (auto it = m_blocks.begin(); it != m_blocks.end();) {
        if (std::get<2>(it->first) == mb) {
            m_parts[std::get<0>(it->first)].free_blocks.push_back(it->second);
            it = m_blocks.erase(it);
        } else {
            ++it;
        }
    }
}

placed_tensor step_tensors::weight(step_part part, uint32_t layer, const std::string& name, bool gradient) {
    const auto& pl = m_parts[int(part)];
    const tensor_decl& d = *pl.decl.at(name);
    const bool ends = part != step_part::layer;
    const flat_buffers& f = m_flat.at(ends ? m_layers : layer);
    const uint64_t elem = pl.off.at(name) + (part == step_part::head ? m_head_in_ends : 0);
    return {(gradient ? f.g : f.w) + elem * numerics::size_of(m_t), d.cols, false};
}

placed_tensor step_tensors::at(step_part part, uint32_t layer, uint32_t mb, const std::string& name) {
    const bool first_stage = m_stage == 0 && m_embedding, last_stage = m_stage + 1 == m_stages && m_head;
    auto& pl = m_parts[int(part)];
    auto it = pl.decl.find(name);
    if (it == pl.decl.end() && name.size() > 1 && name[0] == 'd') {  // a weight's gradient
        const auto w = pl.decl.find(name.substr(1));
        if (w != pl.decl.end() && w->second->scope == tensor_scope::weight) return weight(part, layer, name.substr(1), true);
    }
    if (it == pl.decl.end()) throw std::logic_error("step tensor '" + name + "' is not declared");
    const tensor_decl& d = *it->second;
    const uint64_t cols = d.cols;
    switch (d.scope) {
    case tensor_scope::weight: return weight(part, layer, name, false);
    case tensor_scope::table: return {m_tables.at(name), cols, d.fp32};
    case tensor_scope::input:
        if (part == step_part::embed) return at(step_part::layer, 0, mb, "dx");  // "dy"
        if (part == step_part::head && name == "labels") return {m_labels.at(mb), cols, d.fp32};
        if (part == step_part::head) return at(step_part::layer, m_layers - 1, mb, "y");  // "x"
        if (name == "x") {
            if (layer > 0) return at(step_part::layer, layer - 1, mb, "y");
            if (first_stage) return at(step_part::embed, 0, mb, "y");
            return {m_x_in.at(mb), cols, false};
        }
        // "dy"
        if (layer + 1 < m_layers) return at(step_part::layer, layer + 1, mb, "dx");
        if (last_stage) return at(step_part::head, 0, mb, "dx");
        return {m_dy_in.at(mb), cols, false};
    case tensor_scope::activation:
        if (part == step_part::layer && layer == 0 && name == "dx" && !first_stage) return {m_dx_out.at(mb), cols, false};
        return {block(part, part == step_part::layer ? layer : 0, mb) + pl.off.at(name), cols, d.fp32};
    }
    throw std::logic_error("tensor scope");
}

}  // namespace trnsim::train

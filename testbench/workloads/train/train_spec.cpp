#include "testbench/workloads/train/train_spec.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "tlm/config/config_node.h"
#include "tlm/config/preset.h"

namespace trnsim::train {

uint64_t model_spec::layer_params() const {
    const uint64_t h = hidden, d = head_dim();
    const uint64_t attn = h * (uint64_t(heads) + 2ull * kv_heads) * d + uint64_t(heads) * d * h;  // Wqkv, Wo
    const uint64_t mlp = 3ull * h * ffn;                                                          // gate, up, down
    return attn + mlp + 2 * h;                                                                    // + two norm gains
}

uint64_t model_spec::params() const { return layers * layer_params() + 2ull * vocab * hidden + hidden; }

std::vector<std::string> model_presets(const std::string& config_dir) { return config::list_presets(config_dir + "/models"); }

model_spec load_model(const std::string& what, const std::string& config_dir) {
    std::string file;
    try {
        file = config::resolve_preset(what, config_dir + "/models", "model", "", "; or give a file path");
    } catch (const config::config_error& e) {
        throw config::config_error(std::string("--model: ") + e.what());
    }
    const nlohmann::json j = config::load_json_file(file);
    const config::node n = config::node::root(j, file);
    model_spec m;
    m.source = file;
    m.name = n.get_label("name", config::printable(std::filesystem::path(file).stem().string()));
    m.description = n.get_label("description", "");
    for (const char* k : {"layers", "hidden", "heads", "ffn", "vocab", "seq", "global_batch"})
        if (!n.has(k)) n.fail(k, "required (the model's shape has no default)");
    m.layers = uint32_t(n.get_uint("layers", m.layers, 1, 1000));
    m.hidden = uint32_t(n.get_uint("hidden", m.hidden, 1, 1u << 20));
    m.heads = uint32_t(n.get_uint("heads", m.heads, 1, 4096));
    m.kv_heads = uint32_t(n.get_uint("kv_heads", m.heads, 1, 4096));
    m.ffn = uint32_t(n.get_uint("ffn", m.ffn, 1, 1u << 22));
    m.vocab = uint32_t(n.get_uint("vocab", m.vocab, 1, 1u << 24));
    m.seq = uint32_t(n.get_uint("seq", m.seq, 1, 1u << 20));
    m.global_batch = n.get_uint("global_batch", m.global_batch, 1, 1u << 24);
    const std::string dt = n.get_choice("dtype", "bf16", {"bf16", "fp16", "fp32"});
    m.dtype = *numerics::parse_dtype(dt);
    n.finish();
    if (m.hidden % m.heads) n.fail("heads", std::to_string(m.heads) + " does not divide hidden " + std::to_string(m.hidden));
    if (m.head_dim() % 2)
        n.fail("heads", "head dim hidden / heads = " + std::to_string(m.head_dim()) + " must be even (RoPE rotates pairs)");
    if (m.heads % m.kv_heads)
        n.fail("kv_heads", std::to_string(m.kv_heads) + " does not divide heads " + std::to_string(m.heads));
    return m;
}

void validate(const parallel_plan& p, const model_spec& m, uint32_t chips) {
    auto bad = [](const std::string& opt, const std::string& why) { throw std::invalid_argument(opt + ": " + why); };
    auto s = [](uint64_t v) { return std::to_string(v); };
    if (p.dp == 0 || p.tp == 0 || p.pp == 0) bad("--dp/--tp/--pp", "degrees start at 1");
    if (p.micro_batch == 0) bad("--micro-batch", "a micro-batch holds at least one sequence");
    if (p.ranks() != chips)
        bad("--dp/--tp/--pp", "dp * tp * pp = " + s(p.dp) + " * " + s(p.tp) + " * " + s(p.pp) + " = " + s(p.ranks()) +
                                  " ranks, but the platform has " + s(chips) + " chips");
    if (m.heads % p.tp) bad("--tp", s(p.tp) + " does not divide the model's " + s(m.heads) + " heads");
    if (m.kv_heads % p.tp) bad("--tp", s(p.tp) + " does not divide the model's " + s(m.kv_heads) + " kv_heads");
    if (m.ffn % p.tp) bad("--tp", s(p.tp) + " does not divide the model's ffn " + s(m.ffn));
    if (m.vocab % p.tp) bad("--tp", s(p.tp) + " does not divide the model's vocab " + s(m.vocab));
    if (m.layers % p.pp) bad("--pp", s(p.pp) + " does not divide the model's " + s(m.layers) + " layers");
    if (p.micro_batch > 65536) bad("--micro-batch", s(p.micro_batch) + " sequences: at most 65536");
    if (m.global_batch / (uint64_t(p.dp) * p.micro_batch) > 100000)
        bad("--global-batch", s(m.global_batch) + " sequences make " + s(m.global_batch / (uint64_t(p.dp) * p.micro_batch)) +
                                  " micro-batches per replica: at most 100000");
    if (m.global_batch % (uint64_t(p.dp) * p.micro_batch))
        bad("--global-batch", s(m.global_batch) + " sequences do not split into dp " + s(p.dp) + " x micro-batch " +
                                  s(p.micro_batch));
}

}  // namespace trnsim::train

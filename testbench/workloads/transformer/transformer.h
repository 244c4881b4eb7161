// Transformer workloads on one NeuronCore of a single chip (issue 6): multi-head attention, a SwiGLU MLP, a
// Llama-style decoder layer forward and backward, and an Adam step. Each is compiled by kernel_builder into the
// core's DMA / Tensor / Vector / Scalar instruction streams, run on the platform with real data, and every output is
// checked against an FP64 golden model (golden_transformer.h) with a stated tolerance.
//
// Layouts (docs/vector_engine.md, "Workloads"): token-major tiles put the S tokens on partitions (S x H),
// feature-major tiles put features on partitions (H x S). A MATMUL contracts over partitions (y = s^T x), so every
// linear layer is one or more MATMULs with the right operand layouts; the Vector Engine transposes between them.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "platforms/config/platform_config.h"
#include "testbench/sim_run.h"

namespace trnsim::tb {

enum class transformer_kind { attention, mlp, decoder, adam };

struct transformer_spec {
    transformer_kind kind = transformer_kind::decoder;
    uint32_t seq = 64, hidden = 64, heads = 4, ffn = 128;  // S, H, N (head dim H / N), F
    bool backward = true;     // decoder: forward and backward (false: forward only)
    bool causal = true;       // attention mask
    bool layer_norm = false;  // decoder: LayerNorm (with bias) instead of RMSNorm
    float eps = 1e-5f;        // norm epsilon
    // adam: a rows x cols parameter tensor
    uint32_t rows = 128, cols = 1024;
    float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, adam_eps = 1e-8f;
    uint32_t step = 10;       // Adam step number t (bias corrections 1 - beta^t)
    uint64_t seed = 1;
};

// Throws std::invalid_argument naming the option for shapes the compiler cannot map (docs/vector_engine.md).
void validate(const transformer_spec& s, const platform::chip_config& chip);
const char* name_of(transformer_kind k);

struct tensor_check {
    std::string name;
    uint64_t elements = 0;
    double max_abs_err = 0, max_ref = 0;  // max |got - golden|, max |golden|
    double rel_err = 0;                   // max_abs_err / max_ref (normwise)
    double tolerance = 0;                 // rel_err must be <= tolerance
    bool pass = false;
};

struct transformer_result {
    transformer_spec spec;
    double sim_ns = 0, wall_s = 0;
    double flops = 0;                     // matmul FLOPs (2 per MAC)
    double achieved_tflops = 0, peak_tflops = 0;
    uint64_t te_instructions = 0, vector_instructions = 0, scalar_instructions = 0, dma_instructions = 0;
    double te_busy_ns = 0, vector_busy_ns = 0, scalar_busy_ns = 0;  // engine busy time (vector/scalar: per instruction)
    double vector_elements = 0, scalar_elements = 0;
    uint64_t sbuf_bytes_per_partition = 0;  // SBUF the compiled kernel allocates
    bool functional = true, checked = false, pass = false;
    std::vector<tensor_check> checks;
    std::map<std::string, double> stats;
};

struct transformer_options {
    bool check = true;
    sim_options sim;
};

transformer_result run_transformer(const platform::platform_config& cfg, const transformer_spec& s,
                                   const transformer_options& opt);

} // namespace trnsim::tb

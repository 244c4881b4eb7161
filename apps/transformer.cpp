#include "apps/transformer.h"

#include <algorithm>
#include <set>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "apps/report.h"
#include "testbench/workloads/transformer/transformer.h"

namespace trnsim::app {

const char* const TRANSFORMER_USAGE = R"(  --workload attention|mlp|decoder|adam: transformer workloads on core 0 (docs/vector_engine.md), checked against
  an FP64 golden model: attention: multi-head attention (QK^T, causal softmax, PV, output projection); mlp: SwiGLU
  MLP; decoder: a pre-norm decoder layer (RMS or layer norm, attention, MLP, residuals) forward and backward;
  adam: one Adam step on an R x C parameter tensor.  defaults: --seq 64 --hidden 64 --heads 4 --ffn 128
  (S, H, F <= 128: one partition tile), --rows 128 --cols 1024 --step 10 --lr 1e-3
)";

const std::vector<std::string> TRANSFORMER_OPTIONS = {"seq",  "hidden", "heads", "ffn",  "rows",         "cols",
                                                       "step", "lr",     "norm",  "forward-only", "no-causal"};

bool is_transformer_workload(const std::string& w) {
    return w == "attention" || w == "mlp" || w == "decoder" || w == "adam";
}

int cmd_transformer(const args& a, const platform::platform_config& cfg, const std::string& workload,
                    const tb::sim_options& sim) {
    // The options each kernel reads; any other workload option is a mistake worth naming.
    const bool adam = workload == "adam";
    std::set<std::string> applies = adam ? std::set<std::string>{"rows", "cols", "step", "lr"}
                                         : std::set<std::string>{"seq", "hidden", "forward-only"};
    if (workload != "attention" && !adam) applies.insert("ffn");
    if (workload != "mlp" && !adam) applies.insert({"heads", "no-causal"});
    if (workload == "decoder") applies.insert("norm");
    std::vector<std::string> workload_options = {"m", "k", "n", "dtype", "program"};
    workload_options.insert(workload_options.end(), TRANSFORMER_OPTIONS.begin(), TRANSFORMER_OPTIONS.end());
    for (const std::string& k : workload_options)
        if (a.has(k) && !applies.count(k)) throw usage_error("--" + k + " does not apply to --workload " + workload);
    tb::transformer_spec s;
    s.kind = workload == "attention" ? tb::transformer_kind::attention
             : workload == "mlp"     ? tb::transformer_kind::mlp
             : workload == "adam"    ? tb::transformer_kind::adam
                                     : tb::transformer_kind::decoder;
    s.seq = a.u32("seq", s.seq);
    s.hidden = a.u32("hidden", s.hidden);
    s.heads = a.u32("heads", s.heads);
    s.ffn = a.u32("ffn", s.ffn);
    s.rows = a.u32("rows", s.rows);
    s.cols = a.u32("cols", s.cols);
    s.step = a.u32("step", s.step);
    s.lr = float(a.num("lr", s.lr));
    s.seed = a.u64("seed", s.seed);
    s.backward = !a.has("forward-only");
    s.causal = !a.has("no-causal");
    const std::string norm = a.str("norm", "rms");
    if (norm != "rms" && norm != "layer") throw usage_error("--norm: '" + norm + "' is not rms or layer");
    s.layer_norm = norm == "layer";
    try {
        tb::validate(s, cfg.chip);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    tb::transformer_options opt;
    opt.check = !a.has("no-check");
    opt.sim = sim;
    auto r = tb::run_transformer(cfg, s, opt);

    const auto& c = cfg.chip;
    std::ostringstream o;
    o << "trnsim " << workload << " report\n";
    o << fmt("  platform        %s (%s): core 0 of %u, TE %ux%u @ %.2f GHz, Vector %.2f GHz x %u/cycle, "
             "Scalar %.2f GHz x %u/cycle\n",
             cfg.preset.c_str(), c.name.c_str(), c.cores, c.core.te.rows, c.core.te.cols, c.core.te.clock_ghz,
             c.core.vector.clock_ghz, c.core.vector.elements_per_cycle, c.core.scalar.clock_ghz,
             c.core.scalar.elements_per_cycle);
    if (s.kind == tb::transformer_kind::adam)
        o << fmt("  workload        Adam step %u on a %u x %u FP32 tensor (lr %g, betas %g %g, eps %g)\n", s.step, s.rows,
                 s.cols, double(s.lr), double(s.beta1), double(s.beta2), double(s.adam_eps));
    else if (s.kind == tb::transformer_kind::mlp)  // heads, norm and mask do not apply
        o << fmt("  workload        mlp (SwiGLU): seq %u, hidden %u, ffn %u, FP32\n", s.seq, s.hidden, s.ffn);
    else if (s.kind == tb::transformer_kind::attention)  // ffn and norm do not apply
        o << fmt("  workload        attention: seq %u, hidden %u, heads %u (head dim %u), FP32, %s mask\n", s.seq, s.hidden,
                 s.heads, s.heads ? s.hidden / s.heads : 0, s.causal ? "causal" : "no");
    else
        o << fmt("  workload        decoder%s: seq %u, hidden %u, heads %u (head dim %u), ffn %u, %s norm, FP32, %s mask\n",
                 s.backward ? " forward + backward" : " forward", s.seq, s.hidden, s.heads, s.heads ? s.hidden / s.heads : 0,
                 s.ffn, s.layer_norm ? "layer" : "RMS", s.causal ? "causal" : "no");
    o << fmt("  instructions    %llu MATMUL, %llu VECTOR, %llu SCALAR, %llu DMA; SBUF %llu B per partition\n",
             (unsigned long long)r.te_instructions, (unsigned long long)r.vector_instructions,
             (unsigned long long)r.scalar_instructions, (unsigned long long)r.dma_instructions,
             (unsigned long long)r.sbuf_bytes_per_partition);
    o << fmt("  simulated time  %s\n", time_str(r.sim_ns).c_str());
    const double t = r.sim_ns > 0 ? r.sim_ns : 1;
    o << fmt("  engine busy     TE %s (%.1f%%), Vector %s (%.1f%%), Scalar %s (%.1f%%)\n", time_str(r.te_busy_ns).c_str(),
             100 * r.te_busy_ns / t, time_str(r.vector_busy_ns).c_str(), 100 * r.vector_busy_ns / t,
             time_str(r.scalar_busy_ns).c_str(), 100 * r.scalar_busy_ns / t);
    if (r.flops > 0)
        o << fmt("  matmul          %.3f MFLOP, %.3f TFLOP/s of %.2f FP32 peak (one core)\n", r.flops / 1e6,
                 r.achieved_tflops, r.peak_tflops);
    o << fmt("  wall time       %.2f s in all, %.2f s of it simulation\n", std::max(process_wall_s(), r.wall_s), r.wall_s);
    for (const auto& k : r.checks)
        o << fmt("  check %-9s %s: normwise error %.3g (max |err| %.3g, max |golden| %.3g), tolerance %.1g\n",
                 k.name.c_str(), k.pass ? "PASS" : "FAIL", k.rel_err, k.max_abs_err, k.max_ref, k.tolerance);
    if (r.checked)
        o << fmt("  result check    %s (%zu tensors against the FP64 golden model)\n", r.pass ? "PASS" : "FAIL",
                 r.checks.size());
    else
        o << (cfg.functional ? "  result check    skipped (--no-check)\n"
                             : "  result check    none: timing-only run (sim.functional=false)\n");
    std::cout << o.str();

    if (a.has("stats")) {
        nlohmann::json j;
        j["config"] = cfg.source;
        j["preset"] = cfg.preset;
        j["workload"] = {{"name", workload}, {"seq", s.seq}, {"hidden", s.hidden}, {"heads", s.heads}, {"ffn", s.ffn},
                         {"backward", s.backward}, {"causal", s.causal}, {"norm", norm}, {"rows", s.rows}, {"cols", s.cols}, {"seed", s.seed}};
        nlohmann::json checks = nlohmann::json::array();
        for (const auto& k : r.checks)
            checks.push_back({{"tensor", k.name}, {"rel_err", k.rel_err}, {"max_abs_err", k.max_abs_err},
                              {"tolerance", k.tolerance}, {"pass", k.pass}});
        j["result"] = {{"sim_ns", r.sim_ns}, {"wall_s", r.wall_s}, {"flops", r.flops},
                       {"te_instructions", r.te_instructions}, {"vector_instructions", r.vector_instructions},
                       {"scalar_instructions", r.scalar_instructions}, {"dma_instructions", r.dma_instructions},
                       {"te_busy_ns", r.te_busy_ns}, {"vector_busy_ns", r.vector_busy_ns},
                       {"scalar_busy_ns", r.scalar_busy_ns}, {"checked", r.checked}, {"pass", r.pass},
                       {"checks", checks}};
        j["stats"] = r.stats;
        if (a.has("no-wall-time")) strip_wall_time(j);
        write_file_atomic(a.str("stats", ""), j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    }
    return r.checked && !r.pass ? 1 : 0;
}

} // namespace trnsim::app

#include "apps/train.h"

#include <algorithm>
#include <iostream>
#include <sstream>
#include <thread>

#include "apps/args.h"
#include "apps/collective.h"
#include "apps/observers.h"
#include "apps/report.h"
#include "tlm/config/config_node.h"
#include "platforms/config/platform_config.h"
#include "testbench/workloads/train/train_run.h"
#include "testbench/workloads/train/whole_step.h"

namespace trnsim::app {

const char* TRAIN_USAGE = R"(trnsim train [--platform NAME | --config FILE] [--set key.path=value ...] [--config-dir DIR]
             --model NAME|FILE --dp D --tp T --pp P [--micro-batch B] [--global-batch G] [--steps N]
             [--tp-algo ring|bidir_ring] [--dp-algo ring|bidir_ring] [--no-replay [--max-host-gib G]] [--jobs J]
             [--whole [--check]] [--timeline FILE.json [--timeline-max-events N] [--timeline-window B:E]]
             [--compose passes|ops] [--stats FILE.json] [--quiet]
  one training step of a Llama-style model (configs/models: llama-7b, llama-70b, llama-7b-2layers, tiny; or a JSON
  file) on a server or cluster platform: tensor parallelism over T chips, pipeline parallelism over P stages (1F1B over the
  micro-batches), data parallelism over D replicas with the gradient all-reduce overlapping backward; D*T*P must
  equal the platform's chips. Every distinct operation (GEMMs, vector phases, Adam on the full chip model; group
  all-reduces and pipeline sends on the whole platform) is simulated once, timing-only, and replayed for every
  layer, micro-batch and chip that runs it (--no-replay simulates each use on its own: small models only). On
  full chips each distinct layer pass (forward; backward beside the gradient bucket of the layer above or not) is
  also simulated on the whole platform, every chip running it as --whole does, and the layers' operations are
  timed from there (--compose passes, the default; --compose ops: each operation alone).
  Reports step time, tokens/s, MFU, the time breakdown and the operations; --timeline writes every chip's step as
  a Chrome/Perfetto trace. --whole (full chips: --set chips.model=full) also simulates the step whole, every
  chip running its own instruction streams in one simulation (the gradient all-reduces beside the backward pass:
  --set chip.collective_reduce=dma), and compares it with the composed step; --timeline then records every chip's
  engines and queues (--timeline-window B:E in ns: a part of the step; --timeline-max-events N: the cap).
  --whole --check runs the step whole with data instead (every layer's forward and backward with its all-reduces,
  sends, gradient buckets and Adam, the embedding's row lookups and gradient scatter-add over seeded tokens, and
  the LM head with its loss over seeded labels) and checks every chip's output, probabilities, reduced gradients
  (the embedding's and the head's too, summed over the micro-batches) and Adam updates against the FP64 model (exit
  1 if one fails). defaults: --platform trn2-ultraserver-64 --micro-batch 1, the model's global batch,
  --tp-algo bidir_ring --dp-algo bidir_ring, --jobs = host cores. docs/training.md
)";

namespace {

std::string ms(double ns) { return fmt("%.3f ms", ns * 1e-6); }

}  // namespace

const option_set TRAIN_OPTIONS = {{"platform", "config", "set", "config-dir", "model", "dp", "tp", "pp", "micro-batch",
                                   "global-batch", "steps", "tp-algo", "dp-algo", "jobs", "timeline", "timeline-max-events",
                                   "timeline-window", "stats", "max-host-gib", "compose"},
                                  {"no-replay", "quiet", "whole", "check"},
                                  {"set"}};

int cmd_train(const args& a) {
    a.no_positional();
    if (!a.has("model")) throw usage_error("--model is required (llama-7b, llama-70b, llama-7b-2layers, tiny, or a JSON file)");
    for (const char* k : {"stats", "timeline"})
        if (a.has(k)) check_writable(std::string("--") + k, a.str(k, ""));
    const std::string dir = a.config_dir();
    train::model_spec m;
    try {
        m = train::load_model(a.str("model", ""), dir);
    } catch (const config::config_error& e) {
        throw usage_error(std::string(e.what()).rfind("--model", 0) == 0 ? e.what() : std::string("--model: ") + e.what());
    }
    if (a.has("global-batch")) {
        m.global_batch = a.u64("global-batch", m.global_batch);
        if (m.global_batch == 0) throw usage_error("--global-batch: at least one sequence");
    }
    train::parallel_plan p;
    p.dp = a.u32("dp", 1), p.tp = a.u32("tp", 1), p.pp = a.u32("pp", 1);
    p.micro_batch = a.u32("micro-batch", 1);
    train::train_options o;
    o.replay = !a.has("no-replay");
    if (!o.replay) o.host_limit_bytes = host_memory_limit(a);
    else a.refuse({"max-host-gib"}, "applies to --no-replay (replay's memory does not grow with the model)");
    o.quiet = a.has("quiet");
    const std::string compose = a.str("compose", "passes");
    if (compose != "passes" && compose != "ops") throw usage_error("--compose: passes or ops, got '" + compose + "'");
    o.layer_passes = compose == "passes";
    o.steps = a.u32("steps", 1);
    if (o.steps == 0) throw usage_error("--steps: at least 1");
    o.jobs = a.u32("jobs", std::max(1u, std::thread::hardware_concurrency()));
    if (o.jobs == 0 || o.jobs > 256) throw usage_error("--jobs: 1 .. 256");
    const bool whole = a.has("whole");
    if (a.has("check") && !whole) throw usage_error("--check checks the step simulated whole: add --whole");
    if (!whole) {
        o.timeline_file = a.str("timeline", "");
        a.refuse({"timeline-max-events", "timeline-window"},
                 "records the instructions of the step simulated whole: add --whole (the composed step's timeline has "
                 "one span per operation)");
    }
    try {
        o.tp_algo = collective::parse_algo(a.str("tp-algo", "bidir_ring"));
        o.dp_algo = collective::parse_algo(a.str("dp-algo", "bidir_ring"));
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
    for (auto [k, v] : {std::pair<const char*, collective::algo>{"tp-algo", o.tp_algo}, {"dp-algo", o.dp_algo}})
        if (v != collective::algo::ring && v != collective::algo::bidir_ring)
            throw usage_error(std::string("--") + k + ": a group all-reduce runs ring or bidir_ring");

    const platform::platform_config cfg = load_multichip(a, a.list("set"), "training runs on");
    check_distinct_files(a, &cfg);
    const std::string& what = cfg.preset;
    try {
        train::validate(p, m, cfg.multichip.chips());
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }

    train::train_result r;
    train::whole_result w;
    std::unique_ptr<observers> obs;
    try {
        if (whole) train::check_whole(cfg, m, p);  // before the composed step's simulations
        r = train::run_train(cfg, m, p, o);
        if (whole) {
            platform::platform_config wcfg = cfg;
            obs = std::make_unique<observers>(a, wcfg, "trnsim train --whole");
            train::whole_options wo;
            wo.tp_algo = o.tp_algo, wo.dp_algo = o.dp_algo;
            wo.check = a.has("check");
            wo.sim.wall_limit_s = a.wall_limit_s();
            if (o.quiet) wo.sim.progress_after_s = 0;
            wo.on_platform = [&](platform::multichip_platform& pl) { obs->attach_platform(pl); };
            w = train::run_whole_step(wcfg, m, p, wo);
            obs->finish();
        }
    } catch (const std::invalid_argument& e) {  // a plan or shape the chip cannot map
        throw usage_error(e.what());
    }

    std::ostringstream out;
    const double tokens = double(m.global_batch) * m.seq;
    out << "trnsim train report\n";
    out << fmt("  model           %s: %u layers, hidden %u, %u heads (%u kv, head dim %u), ffn %u, vocab %u, %.2f B "
               "parameters, %s\n",
               m.name.c_str(), m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim(), m.ffn, m.vocab,
               double(m.params()) * 1e-9, std::string(numerics::name_of(m.dtype)).c_str());
    out << fmt("  platform        %s: %s (%s, %s, peak %.1f dense TFLOP/s per chip in %s)\n",
               what.c_str(), count_text(r.chips, "chip").c_str(), cfg.chip.name.c_str(),
               count_text(cfg.chip.cores, "core").c_str(), r.peak_tflops_per_chip,
               std::string(numerics::name_of(m.dtype)).c_str());
    out << fmt("  plan            dp %u x tp %u x pp %u, 1F1B, %s of %u x %u tokens per replica, "
               "global batch %s (%.0f tokens)\n",
               p.dp, p.tp, p.pp, count_text(r.micro_batches, "micro-batch", "micro-batches").c_str(), p.micro_batch, m.seq,
               count_text(m.global_batch, "sequence").c_str(), tokens);
    out << fmt("  collectives     tp all-reduce %s over %s, dp all-reduce %s over %s, per-layer gradient "
               "buckets overlapping backward\n",
               std::string(collective::name_of(o.tp_algo)).c_str(), count_text(p.tp, "chip").c_str(),
               std::string(collective::name_of(o.dp_algo)).c_str(), count_text(p.dp, "chip").c_str());
    out << fmt("  step time       %s%s\n", ms(r.step_ns).c_str(),
               o.steps > 1 ? fmt(" (x %u steps = %s: every step of a plan has the same timing)", o.steps,
                                 ms(r.step_ns * o.steps).c_str()).c_str()
                           : "");
    out << fmt("  throughput      %.0f tokens/s, %.2f steps/s\n", r.tokens_per_s, 1e9 / r.step_ns);
    out << fmt("  MFU             %.1f %% (%.3g model FLOP per step / (step time x %u chips x %.1f TFLOP/s))\n",
               100 * r.mfu, r.model_flops, r.chips, r.peak_tflops_per_chip);
    auto pct = [&](double ns) { return fmt("%10s  %5.1f %%", ms(ns).c_str(), 100 * ns / r.step_ns); };
    out << fmt("  breakdown (stage %u, the one that finishes last):\n", r.critical_stage);
    out << "    compute-bound operations (GEMMs, phases)     " << pct(r.compute_ns) << "\n";
    out << "    memory-bound operations (HBM bound)          " << pct(r.memory_ns) << "\n";
    out << "    exposed communication: tp all-reduces        " << pct(r.tp_exposed_ns) << "\n";
    out << "    barriers between operations                  " << pct(r.sync_ns)
        << fmt("  (%.2f us each)\n", r.barrier_ns * 1e-3);
    out << "    exposed communication: dp gradients          " << pct(r.dp_exposed_ns) << "\n";
    out << "    pipeline bubble (incl. waiting for sends)    " << pct(r.bubble_ns) << "\n";
    out << "    optimizer (Adam)                             " << pct(r.optimizer_ns) << "\n";
    for (uint32_t s = 0; s < p.pp; ++s) {
        const auto& st = r.stages[s];
        out << fmt("  stage %-3u       fwd %s + bwd %s per micro-batch; last backward at %s, gradients done %s "
                   "(%s exposed), Adam %s, end %s\n",
                   s, ms(st.fwd_ns).c_str(), ms(st.bwd_ns).c_str(), ms(st.pipeline_end_ns).c_str(),
                   ms(st.dp_end_ns).c_str(), ms(st.dp_exposed_ns).c_str(), ms(st.optimizer_ns).c_str(),
                   ms(st.end_ns).c_str());
    }
    {
        const double gib = 1.0 / (1ull << 30);
        for (uint32_t s = 0; s < p.pp; ++s) {
            const auto& st = r.stages[s];
            const double need = st.state_bytes + st.activation_bytes;
            out << fmt("  HBM stage %-3u   %.1f GiB of %.3g GiB per chip: %.2f B parameters x 16 B (weights, gradients, "
                       "Adam) %.1f GiB + activations of %llu micro-batch%s in flight %.1f GiB%s\n",
                       s, need * gib, r.hbm_capacity_bytes * gib, double(st.params) * 1e-9, st.state_bytes * gib,
                       (unsigned long long)st.in_flight, st.in_flight == 1 ? "" : "es", st.activation_bytes * gib,
                       need > r.hbm_capacity_bytes ? "  DOES NOT FIT (estimate)" : "");
        }
        if (!r.fits)
            out << "  warning         the plan does not fit HBM (activation recomputation, more tp / pp or ZeRO are "
                   "not modelled): the times assume it did\n";
    }
    if (p.pp > 1) out << fmt("  pipeline send   %s per activation hand-over (all pairs at once)\n", time_str(r.send_ns).c_str());
    if (p.dp > 1)
        out << fmt("  dp bucket       %s per layer (%s), %s for the embedding/head\n", time_str(r.dp_bucket.ns).c_str(),
                   r.dp_bucket.what.c_str(), time_str(r.dp_head_bucket.ns).c_str());
    auto table = [&](const char* title, const std::vector<train::op_cost>& v) {
        if (v.empty()) return;
        double tot = 0;
        for (const auto& c : v) tot += c.ns * c.count;
        out << fmt("  %s (%s per micro-batch):\n", title, time_str(tot).c_str());
        for (const auto& c : v) {
            const double t = c.ns * c.count;
            std::string achieved;
            if (c.flops > 0) achieved = fmt("  %.0f TFLOP/s", c.flops / t * 1e-3);
            else if (c.hbm_bytes > 0) achieved = fmt("  %.0f GB/s HBM", c.hbm_bytes / c.ns);
            out << fmt("    %-22s %-34s %3s %10s %5.1f %%  %s%s\n", c.name.c_str(), c.what.c_str(),
                       c.count > 1 ? fmt("x%u", c.count).c_str() : "", time_str(t).c_str(), 100 * t / tot,
                       train::tp_comm(c.kind) ? "comm" : c.memory_bound ? "memory-bound" : "compute",
                       achieved.c_str());
        }
    };
    table("decoder layer forward", r.layer_fwd);
    const std::string acc = r.micro_batches > 1 ? " (the last micro-batch: its weight gradients accumulate)" : "";
    table(("decoder layer backward" + acc).c_str(), r.layer_bwd);
    table("embedding forward (first stage)", r.embed_fwd);
    table(("embedding backward (first stage)" + acc).c_str(), r.embed_bwd);
    table("LM head forward (last stage)", r.head_fwd);
    table(("LM head backward (last stage)" + acc).c_str(), r.head_bwd);
    out << fmt("  Adam            %s per layer (%s), %s embedding/head\n", time_str(r.adam_layer.ns).c_str(),
               r.adam_layer.what.c_str(), time_str(r.adam_head.ns).c_str());
    out << fmt("  sampling        %s: %llu simulations, %llu operation uses replayed from them (every chip of a "
               "stage runs the same shapes)\n",
               o.replay ? "replay" : "no replay", (unsigned long long)r.simulations, (unsigned long long)r.replayed);
    if (r.layer_passes)
        out << fmt("  layer passes    the layers' operations timed in their passes simulated on the whole platform "
                   "(%u simulations: forward, backward beside the bucket of the layer above or not)\n",
                   r.layer_pass_sims);
    else if (!r.layer_pass_note.empty())
        out << "  layer passes    each operation simulated alone (" << r.layer_pass_note << ")\n";
    if (r.tp_at_step_places)
        out << "  tp places       each tensor-parallel all-reduce simulated where the step holds its activation (under "
               "the HBM channel hash its time depends on the place)\n";
    else if (!r.tp_place_note.empty() && !r.layer_passes)
        out << "  tp places       the tensor-parallel all-reduces at the bottom of HBM, not where the step would hold "
               "them (the whole step cannot run this plan: " << r.tp_place_note << ")\n";
    out << fmt("  wall time       %.1f s (simulations %.1f s of host time on %u jobs; the largest, %s, peaked at %.0f "
               "MiB)\n",
               r.wall_s, r.sim_wall_s, o.jobs, r.sim_peak_rss_what.c_str(), r.sim_peak_rss_mib);
    if (!o.timeline_file.empty()) out << "  timeline        " << o.timeline_file << "\n";
    if (whole && w.checked) {
        out << fmt("  whole step      %s: the embedding, the decoder stack and the LM head simulated whole on %s "
                   "with data (seeded tokens and labels)\n",
                   ms(w.step_ns).c_str(), count_text(r.chips, "full chip").c_str());
        // The worst of each kind of compared tensor over the chips.
        std::vector<std::pair<std::string, train::whole_check>> worst;
        for (const auto& c : w.checks) {
            const std::string kind = c.name.find("Adam") != std::string::npos       ? "Adam updates"
                                     : c.name.find("input gradient") != std::string::npos ? "input gradients"
                                     : c.name.find("embedding gradients") != std::string::npos ? "embedding gradients"
                                     : c.name.find("gradients") != std::string::npos      ? "reduced gradients"
                                                                                          : "outputs";
            auto it = std::find_if(worst.begin(), worst.end(), [&](const auto& x) { return x.first == kind; });
            if (it == worst.end()) worst.emplace_back(kind, c);
            else if (c.rel_err / c.tolerance > it->second.rel_err / it->second.tolerance) it->second = c;
        }
        out << fmt("  check           %s: %zu tensors of %s against the FP64 model (normwise error / tolerance, "
                   "the worst of each kind):\n",
                   w.pass ? "PASS" : "FAIL", w.checks.size(), count_text(r.chips, "chip").c_str());
        for (const auto& [kind, c] : worst)
            out << fmt("    %-20s %.3g / %.3g  %s (%s)\n", kind.c_str(), c.rel_err, c.tolerance,
                       c.pass ? "ok" : "FAIL", c.name.c_str());
    } else if (whole) {
        const double diff = r.step_ns / w.step_ns - 1;
        out << fmt("  whole step      %s simulated whole on %s (every chip's instruction streams in one simulation): "
                   "the composed step is %+.1f %% off it; %.0f tokens/s, MFU %.1f %%\n",
                   ms(w.step_ns).c_str(), count_text(r.chips, "full chip").c_str(), 100 * diff, w.tokens_per_s,
                   100 * w.mfu);
        auto wpct = [&](double ns) { return fmt("%10s  %5.1f %%", ms(ns).c_str(), 100 * ns / w.step_ns); };
        out << fmt("  whole breakdown (chip %u, the one that finishes last; measured from its instructions):\n",
                   w.critical_chip);
        out << "    GEMMs                                        " << wpct(w.gemm_ns) << "\n";
        out << "    vector phases                                " << wpct(w.phase_ns) << "\n";
        out << "    tp all-reduces                               " << wpct(w.tp_ns) << "\n";
        out << "    exposed communication: dp gradients          " << wpct(w.dp_exposed_ns) << "\n";
        out << "    optimizer (Adam)                             " << wpct(w.optimizer_ns) << "\n";
        out << "    pipeline bubble (waiting for sends)          " << wpct(w.bubble_ns) << "\n";
        out << "    barriers, waiting (other chips)              " << wpct(w.sync_ns) << "\n";
        // Each stage's chip that finished last (every chip's breakdown: --stats, whole.per_chip).
        for (size_t st = 0; st < w.stage_critical.size(); ++st) {
            const auto& b = w.per_chip[w.stage_critical[st]];
            out << fmt("  whole stage %-3zu chip %u ends %s: GEMMs %s, phases %s, tp %s, dp exposed %s, Adam %s, "
                       "bubble %s, barriers/waiting %s\n",
                       st, b.chip, ms(b.end_ns).c_str(), ms(b.gemm_ns).c_str(), ms(b.phase_ns).c_str(),
                       ms(b.tp_ns).c_str(), ms(b.dp_exposed_ns).c_str(), ms(b.optimizer_ns).c_str(),
                       ms(b.bubble_ns).c_str(), ms(b.sync_ns).c_str());
        }
        // The compute operation whose slowest core lagged the chip's other cores most, on the critical chip.
        const train::whole_span* held = nullptr;
        for (const auto& sp : w.spans)
            if (sp.chip == w.critical_chip && (sp.kind == "gemm" || sp.kind == "phase") &&
                (!held || sp.lag_ns > held->lag_ns))
                held = &sp;
        if (held && held->lag_ns > 0)
            out << fmt("  whole lag       %s (micro-batch %u) on chip %u: core %u finished %s after the chip's other "
                       "cores, of %s (the largest lag of its compute operations; every span's: --stats "
                       "whole.spans[].lag_ns)\n",
                       held->name.c_str(), held->micro_batch, held->chip, held->last_core, ms(held->lag_ns).c_str(),
                       ms(held->end_ns - held->begin_ns).c_str());
        out << fmt("  whole run       %llu operations, %llu barrier writes, %llu instructions; %.1f s wall (%.1f s "
                   "building the programs and the platform)\n",
                   (unsigned long long)w.operations, (unsigned long long)w.barrier_writes,
                   (unsigned long long)w.instructions, w.wall_s + w.setup_wall_s, w.setup_wall_s);
    }
    std::cout << out.str();
    if (obs) obs->report(std::cout);
    if (a.has("stats")) {
        auto j = r.to_json();
        if (whole) j["whole"] = w.to_json();
        write_file_atomic(a.str("stats", ""), j.dump(2) + "\n");
    }
    return w.checked && !w.pass ? 1 : 0;
}

}  // namespace trnsim::app

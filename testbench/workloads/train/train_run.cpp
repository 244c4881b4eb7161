#include "testbench/workloads/train/train_run.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "models/collective/groups.h"
#include "tlm/output_file.h"
#include "testbench/workloads/collective/collective_run.h"
#include "testbench/workloads/gemm/gemm_run.h"
#include "testbench/forked.h"
#include "testbench/workloads/train/phase_kernel.h"
#include "testbench/workloads/train/pipeline.h"
#include "testbench/workloads/train/whole_step.h"
#include "tlm/trace_events.h"

namespace trnsim::train {

namespace {

using clock_type = std::chrono::steady_clock;
using json = nlohmann::json;

// What one simulation computes.
struct sim_req {
    std::string kind;  // gemm | phase | tp_allreduce | dp_allreduce | send | barrier
    layer_op op;       // gemm, phase: the operation (count > 1: heads side by side, whole_step.h)
    uint64_t offset = 0;  // phase: its tensors' place above the HBM base; tp_allreduce: its tensor's (0: the base)
    uint64_t region = 0;  // tp_allreduce at offset: its scratch region's place above the HBM base
    uint64_t bytes = 0;
    std::string use;  // the first operation that needs it ("bwd.norm1"), for messages
    std::string key() const {
        std::ostringstream o;
        o << kind << ' ' << op.m << ' ' << op.kk << ' ' << op.n << ' ' << op.count << ' ' << op.a_rows << op.b_cols
          << op.c_model << ' ' << int(op.phase) << ' ' << op.rows << ' ' << op.cols << ' ' << op.scale << ' '
          << op.causal_block << ' ' << op.rope_dim << ' ' << op.accumulate << ' ' << op.parts << ' ' << offset << ' ' << region << ' ' << bytes;
        if (!op.index.empty()) {  // a row move: its table and which rows (FNV-1a over the indices)
            uint64_t h = 0xcbf29ce484222325ull;
            for (int64_t v : op.index) h = (h ^ uint64_t(v)) * 0x100000001b3ull;
            o << ' ' << op.table_rows << ' ' << h;
        }
        return o.str();
    }
    std::string what() const {
        std::ostringstream o;
        if (kind == "gemm")
            o << "gemm " << op.m << "x" << op.kk << "x" << op.n
              << (op.count > 1 ? " x" + std::to_string(op.count) + " side by side" : "")
              << (op.accumulate ? " accumulating" : "");
        else if (kind == "phase")
            o << "phase " << name_of(op.phase) << " " << op.rows << "x" << op.cols << (op.accumulate ? " accumulating" : "");
        else o << kind << " " << bytes << " B";
        return o.str();
    }
};

struct use {
    const layer_op* op = nullptr;  // null for buckets, sends, Adam
    size_t req = 0;
};

}  // namespace

std::vector<uint32_t> snake_placement(const collective::topology& t) {
    const uint32_t servers = t.k == collective::topology::kind::cluster ? t.servers : 1;
    const uint32_t X = t.dims[0], Y = t.dims[1], Z = t.dims[2], per = X * Y * Z;
    std::vector<uint32_t> v;
    for (uint32_t s = 0; s < servers; ++s)
        for (uint32_t z = 0; z < Z; ++z)
            for (uint32_t yy = 0; yy < Y; ++yy) {
                const uint32_t y = z % 2 ? Y - 1 - yy : yy, line = z * Y + yy;
                for (uint32_t xx = 0; xx < X; ++xx) {
                    const uint32_t x = line % 2 ? X - 1 - xx : xx;
                    v.push_back(s * per + x + X * (y + Y * z));
                }
            }
    return v;
}

plan_groups groups_of(const std::vector<uint32_t>& placement, const parallel_plan& p) {
    auto rank = [&](uint32_t t, uint32_t d, uint32_t s) { return placement.at(t + p.tp * (d + p.dp * s)); };
    plan_groups g;
    g.tp.resize(p.pp), g.dp.resize(p.pp), g.sends.resize(p.pp), g.chips.resize(p.pp);
    for (uint32_t s = 0; s < p.pp; ++s) {
        for (uint32_t d = 0; d < p.dp; ++d) {
            g.tp[s].emplace_back();
            for (uint32_t t = 0; t < p.tp; ++t) {
                g.tp[s].back().push_back(rank(t, d, s));
                g.chips[s].push_back(rank(t, d, s));
                if (s + 1 < p.pp) g.sends[s].emplace_back(rank(t, d, s), rank(t, d, s + 1));
            }
        }
        for (uint32_t t = 0; t < p.tp; ++t) {
            g.dp[s].emplace_back();
            for (uint32_t d = 0; d < p.dp; ++d) g.dp[s].back().push_back(rank(t, d, s));
        }
    }
    return g;
}

std::vector<stage_memory> stage_memory_of(const model_spec& m, const parallel_plan& p, const layer_plan& lp) {
    const uint32_t S = p.pp, L = m.layers / p.pp;
    const uint64_t M = p.micro_batches(m);
    std::vector<stage_memory> out(S);
    for (uint32_t s = 0; s < S; ++s) {
        auto& st = out[s];
        st.params = uint64_t(L) * lp.layer_params_per_chip + ends_params(lp, s, S);
        st.state_bytes = 16.0 * double(st.params);
        st.in_flight = std::min<uint64_t>(S - s, M);
        const double sq = m.seq, b = p.micro_batch, h = m.hidden, a = m.heads, t = p.tp;
        const double per_layer = sq * b * h * (10 + 24 / t + 5 * a * sq / (h * t));
        st.activation_bytes = per_layer * L * double(st.in_flight);
    }
    return out;
}

tb::collective_options step_collective(uint32_t stream, uint32_t cores, const parallel_plan& p) {
    tb::collective_options co;
    co.copy_piece = uint64_t(1) << 20;
    co.notify_landing = true;  // the whole step's operations end when what was copied into a chip has landed
    const uint32_t half = cores / 2;
    if (cores >= 2 && (p.dp > 1 || p.pp > 1)) {
        co.first_core = stream == STREAM_PASSES ? 0 : half;
        co.cores = stream == STREAM_PASSES ? half : cores - half;
    }
    return co;
}

collective::params step_collective_params(collective::op o, collective::algo a, numerics::dtype model, uint64_t bytes) {
    collective::params cp;
    cp.o = o;
    cp.a = a;
    cp.dt = o == collective::op::allgather ? numerics::dtype::fp32 : model;
    cp.bytes = bytes;
    return cp;
}

tb::gemm_spec gemm_of(const layer_op& o, numerics::dtype t) {
    tb::gemm_spec g;
    g.m = o.m, g.k = o.kk, g.n = o.n, g.dtype = t;
    g.a_rows = o.a_rows, g.b_cols = o.b_cols;
    g.c_type = o.c_model ? t : numerics::dtype::fp32;
    g.c_accumulate = o.accumulate;
    return g;
}

phase_spec phase_of(const layer_op& o, numerics::dtype t) {
    phase_spec ps;
    ps.kind = o.phase, ps.rows = o.rows, ps.cols = o.cols, ps.dtype = t;
    ps.scale = o.scale, ps.causal_block = o.causal_block, ps.rope_dim = o.rope_dim;
    ps.accumulate = o.accumulate;
    ps.parts = o.parts;
    ps.table_rows = o.table_rows, ps.index = o.index;
    return ps;
}

operand_use use_of(const layer_op& o, const std::string& role, numerics::dtype t, uint32_t partitions) {
    operand_use u;
    if (o.k == layer_op::kind::gemm) {
        if (role == "a") u.rows = o.a_rows ? o.m : o.kk, u.cols = o.a_rows ? o.kk : o.m, u.read = true;
        else if (role == "b") u.rows = o.b_cols ? o.n : o.kk, u.cols = o.b_cols ? o.kk : o.n, u.read = true;
        else if (role == "c") u.rows = o.m, u.cols = o.n, u.written = true, u.read = o.accumulate, u.fp32 = !o.c_model;
        else throw std::logic_error("operation " + o.name + ": a GEMM has no operand '" + role + "'");
        return u;
    }
    if (o.k == layer_op::kind::tp_allreduce) {
        if (role != "x") throw std::logic_error("operation " + o.name + ": an all-reduce has no operand '" + role + "'");
        u.read = u.written = true;
        return u;
    }
    if (o.k == layer_op::kind::tp_allgather) {
        if (role != "x" && role != "y")
            throw std::logic_error("operation " + o.name + ": an all-gather has no operand '" + role + "'");
        u.read = role == "x", u.written = role == "y", u.fp32 = true;  // a phase's FP32 row statistics
        return u;
    }
    for (const auto& i : phase_tensors(phase_of(o, t), partitions))
        if (i.name == role) {
            u.rows = i.rows, u.cols = i.cols, u.read = i.read, u.written = i.written, u.fp32 = i.fp32;
            return u;
        }
    throw std::logic_error("operation " + o.name + ": phase " + name_of(o.phase) + " has no tensor '" + role + "'");
}

uint64_t bytes_of(const tensor_decl& d, numerics::dtype t) {
    return d.rows * d.cols * (d.fp32 ? 4 : numerics::size_of(t));
}

void check_dataflow(const layer_plan& lp, numerics::dtype t, uint32_t partitions) {
    auto part = [&](const std::vector<tensor_decl>& decls, const std::vector<const std::vector<layer_op>*>& passes,
                    const char* what) {
        std::map<std::string, const tensor_decl*> by_name;
        std::set<std::string> written;
        std::vector<tensor_decl> grad_list;  // the gradient of every weight, "d" + its name
        for (const auto& d : decls)
            if (d.scope == tensor_scope::weight) grad_list.push_back({"d" + d.name, d.rows, d.cols, tensor_scope::activation});
        const std::vector<tensor_decl>& grads = grad_list;
        for (const auto* v : {&decls, &grads})
            for (const auto& d : *v) {
                if (!by_name.emplace(d.name, &d).second)
                    throw std::logic_error(std::string(what) + ": tensor " + d.name + " declared twice");
                if (d.scope != tensor_scope::activation) written.insert(d.name);
            }
        for (const auto* pass : passes)
            for (const auto& o : *pass) {
                if (o.k == layer_op::kind::phase)  // every tensor of a phase is bound (else it lands at the HBM base)
                    for (const auto& i : phase_tensors(phase_of(o, t), partitions)) {
                        bool bound = false;
                        for (const auto& io : o.io) bound = bound || io.first == i.name;
                        if (!bound)
                            throw std::logic_error(std::string(what) + " operation " + o.name + ": its tensor " + i.name +
                                                   " is not bound to a step tensor");
                    }
                std::set<std::string> writes;
                for (const auto& [role, od] : o.io) {
                    const std::string at = std::string(what) + " operation " + o.name + ", operand " + role + " (" +
                                           od.tensor + ")";
                    const auto it = by_name.find(od.tensor);
                    if (it == by_name.end()) throw std::logic_error(at + ": no such tensor");
                    const tensor_decl& d = *it->second;
                    const operand_use u = use_of(o, role, t, partitions);
                    if (u.fp32 != d.fp32) throw std::logic_error(at + ": the operand's type is not the tensor's");
                    if (u.rows == 0) {  // the whole tensor (an all-gather's output: every chip's part)
                        const uint64_t want = o.bytes * (role == "y" ? o.parts : 1);
                        if (bytes_of(d, t) != want || od.row || od.col)
                            throw std::logic_error(at + ": a collective's " + std::to_string(want) +
                                                   " B on a tensor of " + std::to_string(bytes_of(d, t)) + " B");
                    } else {
                        const uint64_t seqs = o.count / o.heads;
                        const uint64_t last_row = od.row + (seqs - 1) * od.b_rows + (o.count - 1) * od.i_rows + u.rows;
                        const uint64_t last_col = od.col + (o.heads - 1) / od.group * od.j_cols + u.cols;
                        if (last_row > d.rows || last_col > d.cols)
                            throw std::logic_error(at + ": rows to " + std::to_string(last_row) + ", columns to " +
                                                   std::to_string(last_col) + " of a " + std::to_string(d.rows) +
                                                   " x " + std::to_string(d.cols) + " tensor");
                    }
                    if (u.read && !written.count(od.tensor)) throw std::logic_error(at + ": read before it is written");
                    if (u.written) writes.insert(od.tensor);
                }
                written.insert(writes.begin(), writes.end());
            }
        std::set<std::string> read;
        for (const auto* pass : passes)
            for (const auto& o : *pass)
                for (const auto& [role, od] : o.io)
                    if (use_of(o, role, t, partitions).read) read.insert(od.tensor);
        for (const auto& d : decls)
            if (d.scope == tensor_scope::activation && !written.count(d.name))
                throw std::logic_error(std::string(what) + ": tensor " + d.name + " is never written");
        for (const auto& d : grads)  // the gradient of every weight the passes read
            if (read.count(d.name.substr(1)) && !written.count(d.name))
                throw std::logic_error(std::string(what) + ": tensor " + d.name + " is never written");
    };
    part(lp.layer_tensors, {&lp.fwd, &lp.bwd}, "layer");
    part(lp.head_tensors, {&lp.head_fwd, &lp.head_bwd}, "head");
    part(lp.embed_tensors, {&lp.embed_fwd, &lp.embed_bwd}, "embedding");
}

json train_result::to_json() const {
    auto ops = [](const std::vector<op_cost>& v) {
        json a = json::array();
        for (const auto& o : v)
            a.push_back({{"name", o.name}, {"sim", o.what}, {"count", o.count}, {"ns", o.ns}, {"flops", o.flops},
                         {"hbm_bytes", o.hbm_bytes}, {"memory_bound", o.memory_bound}});
        return a;
    };
    auto one = [](const op_cost& o) { return json{{"sim", o.what}, {"ns", o.ns}}; };
    json st = json::array();
    for (const auto& s : stages)
        st.push_back({{"fwd_ns", s.fwd_ns}, {"bwd_ns", s.bwd_ns}, {"pipeline_end_ns", s.pipeline_end_ns},
                      {"bubble_ns", s.bubble_ns}, {"dp_end_ns", s.dp_end_ns}, {"dp_exposed_ns", s.dp_exposed_ns},
                      {"optimizer_ns", s.optimizer_ns}, {"end_ns", s.end_ns}, {"params", s.params},
                      {"state_bytes", s.state_bytes}, {"activation_bytes", s.activation_bytes},
                      {"micro_batches_in_flight", s.in_flight}});
    return json{{"model", {{"name", model.name}, {"layers", model.layers}, {"hidden", model.hidden},
                           {"heads", model.heads}, {"kv_heads", model.kv_heads}, {"ffn", model.ffn},
                           {"vocab", model.vocab}, {"seq", model.seq}, {"global_batch", model.global_batch},
                           {"params", model.params()}}},
                {"plan", {{"dp", plan.dp}, {"tp", plan.tp}, {"pp", plan.pp}, {"micro_batch", plan.micro_batch},
                          {"micro_batches", micro_batches}, {"schedule", "1f1b"}}},
                {"platform", platform},
                {"chips", chips},
                {"replay", opt.replay},
                {"step_ns", step_ns},
                {"steps", opt.steps},
                {"tokens_per_s", tokens_per_s},
                {"model_flops", model_flops},
                {"peak_tflops_per_chip", peak_tflops_per_chip},
                {"mfu", mfu},
                {"barrier_ns", barrier_ns},
                {"breakdown_ns", {{"compute", compute_ns}, {"memory_bound", memory_ns}, {"tp_comm", tp_exposed_ns},
                                  {"sync", sync_ns},
                                  {"pipeline_bubble", bubble_ns}, {"dp_comm_exposed", dp_exposed_ns},
                                  {"optimizer", optimizer_ns}}},
                {"critical_stage", critical_stage},
                {"send_ns", send_ns},
                {"hbm_capacity_bytes", hbm_capacity_bytes},
                {"fits_hbm", fits},
                {"tp_allreduce_at_step_places", tp_at_step_places},
                {"tp_place_note", tp_place_note},
                {"layer_passes", layer_passes},
                {"layer_pass_simulations", layer_pass_sims},
                {"layer_pass_note", layer_pass_note},
                {"stages", st},
                {"layer_fwd", ops(layer_fwd)},
                {"layer_bwd", ops(layer_bwd)},
                {"head_fwd", ops(head_fwd)},
                {"head_bwd", ops(head_bwd)},
                {"embed_fwd", ops(embed_fwd)},
                {"embed_bwd", ops(embed_bwd)},
                {"dp_bucket", one(dp_bucket)},
                {"dp_head_bucket", one(dp_head_bucket)},
                {"adam_layer", one(adam_layer)},
                {"adam_head", one(adam_head)},
                {"simulations", simulations},
                {"replayed", replayed},
                {"sim_wall_s", sim_wall_s},
                {"sim_peak_rss_mib", sim_peak_rss_mib},
                {"sim_peak_rss_sim", sim_peak_rss_what}};
}

train_result run_train(const platform::platform_config& cfg, const model_spec& m, const parallel_plan& p,
                       const train_options& opt) {
    const auto t_start = clock_type::now();
    const auto& mc = cfg.multichip;
    if (mc.kind == platform::platform_kind::single_chip)
        throw std::invalid_argument("--platform: '" + cfg.preset + "' is a single chip; training runs on a server or "
                                    "cluster platform (trnsim list)");
    validate(p, m, mc.chips());
    train_result r;
    r.model = m;
    r.plan = p;
    r.opt = opt;
    r.platform = cfg.preset;
    r.chips = mc.chips();
    r.micro_batches = p.micro_batches(m);
    r.placement = snake_placement(mc.topo);
    const layer_plan lp = plan_layer(m, p);
    const uint32_t L = m.layers / p.pp, S = p.pp;
    const uint64_t M = r.micro_batches;

    platform::platform_config tcfg = cfg;  // every simulation is timing-only
    platform::set_functional(tcfg, false);
    // Every stage's groups at once (the composition's collectives run them all together).
    const plan_groups g = groups_of(r.placement, p);
    auto rank = [&](uint32_t t, uint32_t d, uint32_t s) { return g.tp[s][d][t]; };
    std::vector<std::vector<uint32_t>> tp_groups, dp_groups;
    std::vector<std::pair<uint32_t, uint32_t>> sends;
    for (uint32_t s = 0; s < S; ++s) {
        tp_groups.insert(tp_groups.end(), g.tp[s].begin(), g.tp[s].end());
        dp_groups.insert(dp_groups.end(), g.dp[s].begin(), g.dp[s].end());
        sends.insert(sends.end(), g.sends[s].begin(), g.sends[s].end());
    }

    // Requests: one per distinct operation (replay) or one per use (no replay).
    std::vector<sim_req> reqs;
    std::map<std::string, size_t> index;
    uint64_t uses = 0, instance = 0;
    auto need = [&](sim_req q) {
        ++uses;
        if (!opt.replay && q.kind == "phase")  // its own HBM placement: one of 8 slots of up to 1 GiB
            q.offset = (++instance % 8) * std::min<uint64_t>(1ull << 30, cfg.chip.hbm.capacity_bytes / 16 >> 22 << 22);
        const std::string key = opt.replay ? q.key() : q.key() + " #" + std::to_string(uses);
        if (q.use.empty()) q.use = q.kind;
        auto [it, fresh] = index.emplace(key, reqs.size());
        if (fresh) reqs.push_back(q);
        return it->second;
    };
    // On full chips, each tensor-parallel all-reduce where the whole step runs it: in place on its activation, its
    // scratch in the passes' region (the step's placement, whole_step.h). Under the HBM channel hash its time depends
    // on both. Plans the whole step cannot hold (its buffers do not fit HBM, a Vector Engine reduce with dp > 1) keep
    // the layout's own place, and the result says so.
    std::map<std::tuple<uint32_t, uint64_t, int, uint32_t, std::string>, const tp_place*> tp_at;
    std::vector<tp_place> places;
    if (mc.all_full() && p.tp > 1) {
        whole_options wo;
        wo.tp_algo = opt.tp_algo, wo.dp_algo = opt.dp_algo;
        try {
            places = whole_tp_places(cfg, m, p, wo);
            r.tp_at_step_places = true;
        } catch (const std::invalid_argument& e) {
            r.tp_place_note = e.what();
        }
        for (const auto& pl : places) tp_at[{pl.stage, pl.micro_batch, int(pl.part), pl.layer, pl.op}] = &pl;
    }
    // On full chips, the layers' passes simulated on the whole platform (train_options::layer_passes), where the
    // whole step can run the plan.
    bool passes = false;
    if (!opt.replay) r.layer_pass_note = "--no-replay: every use a simulation of its own";
    else if (!opt.layer_passes) r.layer_pass_note = "--compose ops";
    else if (!mc.all_full()) r.layer_pass_note = "light chips (the passes run on full chips: --set chips.model=full)";
    else
        try {
            check_whole(cfg, m, p);
            check_reduces_in_place(p, opt.tp_algo, opt.dp_algo, "");
            passes = true;
        } catch (const std::invalid_argument& e) {
            r.layer_pass_note = e.what();
        }
    r.layer_passes = passes;
    // The embedding's row moves as the whole step runs them for replica 0's first micro-batch in vocabulary shard 0
    // (its default seed): a micro-batch's share of tokens in a shard varies little.
    const std::vector<int64_t> embed_rows = shard_rows(step_tokens(m, p, whole_options{}.seed, 0), m, p, 0, 0);
    auto req_of = [&](const layer_op& o, uint32_t s, uint64_t mb, step_part part, uint32_t l) {
        sim_req q;
        if (o.k == layer_op::kind::gemm) q.kind = "gemm", q.op = o;
        else if (o.k == layer_op::kind::phase) q.kind = "phase", q.op = o;
        else if (o.k == layer_op::kind::tp_allgather) q.kind = "tp_allgather", q.bytes = o.bytes * o.parts;
        else {
            q.kind = "tp_allreduce", q.bytes = o.bytes;
            const auto at = tp_at.find({s, mb, int(part), l, o.name});
            if (at != tp_at.end()) q.offset = at->second->tensor, q.region = at->second->region;
        }
        if (o.k == layer_op::kind::phase && row_moves(o.phase)) q.op.index = embed_rows;
        q.use = o.name;
        return need(q);
    };
    auto uses_of = [&](const std::vector<layer_op>& v, uint32_t s, uint64_t mb, step_part part, uint32_t l) {
        std::vector<use> u;
        u.reserve(v.size());
        for (const auto& o : v) u.push_back({&o, req_of(o, s, mb, part, l)});
        return u;
    };
    const size_t elt = numerics::size_of(m.dtype);
    auto bucket_req = [&](uint64_t params) {
        sim_req q;
        q.kind = "dp_allreduce";
        q.bytes = params * elt;
        return need(q);
    };
    auto adam_req = [&](uint64_t params) {
        sim_req q;
        q.kind = "phase";
        q.op = adam_op(params, "adam");
        q.use = "adam";
        return need(q);
    };
    // Without replay every use is a request and a simulation of its own: counted (in closed form, as the loops below
    // make them) before anything is built. Measured: 1.3 KiB of host memory a use (tiny, 1,245 uses: 1.6 MB),
    // estimated as 2 KiB.
    if (!opt.replay && opt.host_limit_bytes > 0) {
        const double per_pass = double(L) * double(lp.fwd.size() + lp.bwd.size());
        const double ends = double(lp.embed_fwd.size() + lp.embed_bwd.size()) + double(lp.head_fwd.size() + lp.head_bwd.size());
        const double all_uses = double(S) * double(M) * per_pass + double(M) * ends + 2.0 * S * (L + 1);
        const double bytes = all_uses * 2048.0;
        if (bytes > opt.host_limit_bytes) {
            char buf[400];
            std::snprintf(buf, sizeof buf,
                          "--no-replay simulates every operation use on its own: %.3g uses (%u stages x %llu "
                          "micro-batches x %u layers), about %.1f GiB of host memory for their requests alone, more "
                          "than the %.1f GiB limit (drop --no-replay: replay gives the same step; or a smaller model, "
                          "fewer micro-batches; --max-host-gib raises the limit)",
                          all_uses, S, (unsigned long long)M, L, bytes / 1073741824.0, opt.host_limit_bytes / 1073741824.0);
            throw std::invalid_argument(buf);
        }
    }
    // Per stage and micro-batch: the forward and backward operation lists (layers in order).
    struct pass {
        std::vector<std::vector<use>> layers;  // per layer of the stage
        std::vector<use> head, embed;
    };
    std::vector<std::vector<pass>> fwd(S), bwd(S);
    std::vector<std::vector<size_t>> buckets(S);  // per stage: per layer (stage order), then the head/embedding
    std::vector<std::vector<size_t>> adam(S);
    size_t send_req = 0;
    const bool dp = p.dp > 1;
    // The backward of a micro-batch after the first adds to the gradients the earlier ones wrote.
    const std::vector<layer_op> bwd_acc = accumulating(lp.bwd), head_bwd_acc = accumulating(lp.head_bwd),
                                embed_bwd_acc = accumulating(lp.embed_bwd);
    for (uint32_t s = 0; s < S; ++s) {
        for (uint64_t i = 0; i < M; ++i) {
            pass f, b;
            for (uint32_t l = 0; l < L; ++l) {
                f.layers.push_back(uses_of(lp.fwd, s, i, step_part::layer, l));
                b.layers.push_back(uses_of(i == 0 ? lp.bwd : bwd_acc, s, i, step_part::layer, l));
            }
            if (s == 0)
                f.embed = uses_of(lp.embed_fwd, s, i, step_part::embed, 0),
                b.embed = uses_of(i == 0 ? lp.embed_bwd : embed_bwd_acc, s, i, step_part::embed, 0);
            if (s == S - 1)
                f.head = uses_of(lp.head_fwd, s, i, step_part::head, 0),
                b.head = uses_of(i == 0 ? lp.head_bwd : head_bwd_acc, s, i, step_part::head, 0);
            fwd[s].push_back(std::move(f));
            bwd[s].push_back(std::move(b));
        }
        if (dp) {
            for (uint32_t l = 0; l < L; ++l) buckets[s].push_back(bucket_req(lp.layer_params_per_chip));
            if (s == 0 || s == S - 1) buckets[s].push_back(bucket_req(ends_params(lp, s, S)));
        }
        for (uint32_t l = 0; l < L; ++l) adam[s].push_back(adam_req(lp.layer_params_per_chip));
        if (s == 0 || s == S - 1) adam[s].push_back(adam_req(ends_params(lp, s, S)));
    }
    size_t barrier_req;
    {
        sim_req q;
        q.kind = "barrier";
        barrier_req = need(q);
    }
    if (S > 1) {
        sim_req q;
        q.kind = "send";
        q.bytes = lp.activation_bytes;
        send_req = need(q);
    }

    // Every phase maps onto the chip (SBUF, HBM) before anything runs: a bad shape fails at once, naming the
    // operation and what sets its size.
    auto phase_spec_of = [&](const sim_req& q) {
        phase_spec ps = phase_of(q.op, m.dtype);
        ps.hbm_offset = q.offset;
        return ps;
    };
    for (const auto& q : reqs)
        if (q.kind == "phase") {
            phase_spec ps = phase_spec_of(q);
            ps.compile_only = true;
            try {
                run_phase(tcfg, ps, {});
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument("model " + m.name + ", operation " + q.use + ": " + e.what() +
                                            " (its size follows the model's hidden, seq, ffn, vocab and heads, "
                                            "--micro-batch and --tp)");
            }
        }

    // Simulate.
    std::vector<std::function<json()>> jobs;
    jobs.reserve(reqs.size() + 4);  // the operations, then up to four layer passes
    for (const auto& q : reqs)
        jobs.push_back([&cfg, &tcfg, &m, &p, &opt, &tp_groups, &dp_groups, &sends, &phase_spec_of, q]() -> json {
            tb::sim_options so;
            so.progress_after_s = 0;
            if (q.kind == "barrier") {
                const auto t0 = clock_type::now();
                const double ns = barrier_ns(tcfg, so);
                return {{"ns", ns}, {"wall_s", std::chrono::duration<double>(clock_type::now() - t0).count()},
                        {"hbm_bytes", 0}, {"memory_bound", false}};
            }
            if (q.kind == "gemm" && q.op.count > 1) {
                // The heads side by side over the cores, as the whole step runs them: one instance's share.
                const tb::gemm_spec gs = gemm_of(q.op, m.dtype);
                uint64_t next = 4096;
                auto progs = heads_side_by_side(tcfg.chip, gs, q.op.count, [&](uint64_t bytes) {
                    const uint64_t at = next;
                    next += (bytes + 4095) & ~uint64_t(4095);
                    if (next > tcfg.chip.hbm.capacity_bytes)
                        throw std::invalid_argument("operation " + q.use + ": " + std::to_string(q.op.count) +
                                                    " heads' operands do not fit a chip's HBM");
                    return at;
                });
                const auto t0 = clock_type::now();
                const chip_run run = simulate_on_chip(tcfg, std::move(progs), so);
                // Memory-bound as a single GEMM's run decides (every head has the same bounds).
                return {{"ns", run.ns / q.op.count},
                        {"wall_s", std::chrono::duration<double>(clock_type::now() - t0).count()},
                        {"hbm_bytes", run.hbm_bytes / q.op.count},
                        {"memory_bound", tb::bounds_of(gs, tb::plan_layout(gs, tcfg.chip), tcfg.chip).memory_bound()},
                        {"peak_tflops", tb::chip_peak_tflops(tcfg.chip, m.dtype)}};
            }
            if (q.kind == "gemm") {
                const tb::gemm_spec gs = gemm_of(q.op, m.dtype);
                tb::gemm_options go;
                go.check = false;
                go.sim = so;
                const auto gr = tb::run_gemm(tcfg, gs, go);
                return {{"ns", gr.sim_ns}, {"wall_s", gr.wall_s}, {"hbm_bytes", gr.hbm_bytes},
                        {"memory_bound", gr.min_time_hbm_ns >= gr.min_time_compute_ns},
                        {"peak_tflops", gr.peak_tflops}};
            }
            if (q.kind == "phase") {
                const auto pr = run_phase(tcfg, phase_spec_of(q), so);
                return {{"ns", pr.sim_ns}, {"wall_s", pr.wall_s}, {"hbm_bytes", pr.hbm_bytes},
                        {"memory_bound", pr.memory_bound()}};
            }
            collective::schedule sch;
            if (q.kind == "send") {
                sch = collective::build_sends(cfg.multichip.topo, sends, q.bytes);
            } else {
                const bool tp = tp_comm(q.kind);
                sch = collective::build_groups(
                    cfg.multichip.topo, tp ? tp_groups : dp_groups,
                    step_collective_params(q.kind == "tp_allgather" ? collective::op::allgather : collective::op::allreduce,
                                           tp ? opt.tp_algo : opt.dp_algo, m.dtype, q.bytes));
            }
            tb::collective_options co = step_collective(tp_comm(q.kind) ? STREAM_PASSES
                                                        : q.kind == "send"       ? STREAM_SENDS_FWD
                                                                                 : STREAM_BUCKETS,
                                                        tcfg.chip.cores, p);
            co.check = false;
            co.sim = so;
            // The step's all-reduces reduce its activations and gradient buckets in place (the whole step runs them
            // so, with the algorithms that can); the all-gather and the sends land in tensors of their own.
            co.in_place = (q.kind == "tp_allreduce" || q.kind == "dp_allreduce") && tb::reduces_in_place(sch.p.a);
            if (q.kind == "tp_allreduce" && q.offset && co.in_place) co.tensor_at = q.offset, co.region_at = q.region;
            const auto cr = tb::run_schedule(tcfg, sch, co);
            return {{"ns", cr.sim_ns}, {"wall_s", cr.wall_s}, {"hbm_bytes", 0}, {"memory_bound", false}};
        });
    // The layers' passes (train_options::layer_passes): variant bits 1 backward, 2 accumulating (a micro-batch
    // after the first), 4 beside the bucket of the layer above (the last micro-batch's backward of every layer of a
    // stage but its last, with dp > 1). Each stage's chip that ends the pass last gives the pass's time and its
    // operations' spans.
    auto variant_of = [&](bool backward, uint64_t mb, uint32_t l) {
        if (!backward) return 0;
        int v = 1;
        if (mb > 0) v |= 2;
        if (dp && mb + 1 == M && l + 1 < L) v |= 4;
        return v;
    };
    std::vector<int> variants;
    if (passes) {
        std::set<int> vs;
        for (uint64_t i = 0; i < M; ++i)
            for (uint32_t l = 0; l < L; ++l) vs.insert(variant_of(false, i, l)), vs.insert(variant_of(true, i, l));
        variants.assign(vs.begin(), vs.end());
    }
    for (int v : variants)
        jobs.emplace_back([&tcfg, &m, &p, &opt, &g, S, v]() -> json {
            whole_options wo;
            wo.tp_algo = opt.tp_algo, wo.dp_algo = opt.dp_algo;
            wo.sim.progress_after_s = 0;
            wo.pass = whole_options::layer_pass{(v & 1) != 0, (v & 2) != 0, (v & 4) != 0};
            const whole_result w = run_whole_step(tcfg, m, p, wo);
            // The pass's end on each chip: its last operation but the bucket beside.
            std::map<uint32_t, double> end;
            for (const auto& sp : w.spans)
                if (sp.kind != "dp_allreduce") end[sp.chip] = std::max(end[sp.chip], sp.end_ns);
            json stages = json::array();
            for (uint32_t s = 0; s < S; ++s) {
                uint32_t crit = g.chips[s].front();
                for (uint32_t c : g.chips[s])
                    if (end[c] > end[crit]) crit = c;
                json ops = json::object();
                for (const auto& sp : w.spans)
                    if (sp.chip == crit && sp.kind != "dp_allreduce") ops[sp.name] = sp.end_ns - sp.begin_ns;
                stages.push_back({{"chip", crit}, {"end_ns", end[crit]}, {"ops", ops}});
            }
            return {{"stages", stages}, {"wall_s", w.wall_s}};
        });
    const auto res = tb::run_forked(jobs, opt.jobs, opt.quiet);
    auto what_of = [&](size_t i) {  // job i: an operation's simulation, then the layer passes
        return i < reqs.size() ? reqs[i].what()
                               : "a layer's pass on the whole platform (variant " +
                                     std::to_string(variants[i - reqs.size()]) + ")";
    };
    for (size_t i = 0; i < res.size(); ++i)
        if (res[i].contains("error"))
            throw std::runtime_error("train: simulating " + what_of(i) + " failed: " +
                                     res[i]["error"].get<std::string>());
    r.layer_pass_sims = uint32_t(variants.size());
    r.simulations = res.size();
    r.replayed = uses - reqs.size();
    for (size_t i = 0; i < res.size(); ++i) {
        r.sim_wall_s += res[i]["wall_s"].get<double>();
        const double mib = res[i]["rss_kib"].get<double>() / 1024;
        if (mib > r.sim_peak_rss_mib) r.sim_peak_rss_mib = mib, r.sim_peak_rss_what = what_of(i);
    }
    auto ns_of = [&](size_t q) { return res[q]["ns"].get<double>(); };

    // Every operation is followed by a barrier before the next one starts (op_sequence.h: the whole step's
    // synchronisation, measured on the chip), counted apart as "sync".
    const double barrier = ns_of(barrier_req);
    auto cost = [&](const use& u) {
        op_cost c;
        const auto& j = res[u.req];
        c.what = reqs[u.req].what();
        c.kind = reqs[u.req].kind;
        c.ns = j["ns"].get<double>();
        c.hbm_bytes = j["hbm_bytes"].get<double>();
        c.memory_bound = j["memory_bound"].get<bool>();
        c.wall_s = j["wall_s"].get<double>();
        if (u.op) c.name = u.op->name, c.count = u.op->count, c.flops = u.op->flops();
        return c;
    };
    auto costs = [&](const std::vector<use>& v) {
        std::vector<op_cost> o;
        for (const auto& u : v) o.push_back(cost(u));
        return o;
    };
    // A layer's pass as simulated on the whole platform: each operation's span on the stage's chip that ends the pass
    // last (one instance's share), and what the pass took beyond its operations and a barrier after each (waiting
    // for other chips) as `rest`.
    struct pass_cost {
        std::vector<op_cost> ops;
        double rest = 0;
    };
    std::map<std::pair<uint32_t, int>, pass_cost> pass_costs;  // (stage, variant)
    auto layer_costs = [&](const std::vector<use>& v, uint32_t s, int variant) -> pass_cost {
        pass_cost pc;
        pc.ops = costs(v);
        if (!passes) return pc;
        const json& st = res[reqs.size() + size_t(std::find(variants.begin(), variants.end(), variant) -
                                                  variants.begin())]["stages"][s];
        double sum = 0;
        for (auto& c : pc.ops) {
            const std::string name = "L" + std::to_string(s * L) + " " + c.name;
            if (!st["ops"].contains(name))
                throw std::logic_error("train: the layer pass on the whole platform has no operation " + name);
            c.ns = st["ops"][name].get<double>() / c.count;
            sum += c.ns * c.count + barrier;
        }
        pc.rest = st["end_ns"].get<double>() + barrier - sum;
        return pc;
    };
    auto layer_cost = [&](const std::vector<use>& v, uint32_t s, int variant) -> const pass_cost& {
        auto it = pass_costs.find({s, variant});
        if (it == pass_costs.end()) it = pass_costs.emplace(std::make_pair(s, variant), layer_costs(v, s, variant)).first;
        return it->second;
    };
    r.layer_fwd = layer_cost(fwd[0][0].layers[0], 0, 0).ops;
    // The last micro-batch: with M > 1, its gradients accumulate; beside the bucket of the layer above.
    r.layer_bwd = layer_cost(bwd[0][M - 1].layers[0], 0, variant_of(true, M - 1, 0)).ops;
    r.head_fwd = costs(fwd[S - 1][0].head);
    r.head_bwd = costs(bwd[S - 1][M - 1].head);
    r.embed_fwd = costs(fwd[0][0].embed);
    r.embed_bwd = costs(bwd[0][M - 1].embed);
    if (dp) {
        r.dp_bucket = cost({nullptr, buckets[0][0]});
        r.dp_head_bucket = cost({nullptr, buckets[0].back()});
    }
    r.adam_layer = cost({nullptr, adam[0][0]});
    r.adam_head = cost({nullptr, adam[0].back()});
    for (const auto& j : res)
        if (j.contains("peak_tflops")) r.peak_tflops_per_chip = j["peak_tflops"].get<double>();
    r.barrier_ns = barrier;
    r.send_ns = S > 1 ? ns_of(send_req) + barrier : 0;

    // Operation times by category.
    struct tally {
        double barrier;
        double total = 0, compute = 0, memory = 0, tp = 0, sync = 0;
        void add(const op_cost& c) {
            const double t = c.ns * c.count;
            total += t + barrier;
            sync += barrier;
            if (tp_comm(c.kind)) tp += t;
            else if (c.memory_bound) memory += t;
            else compute += t;
        }
    };
    auto sum = [&](const std::vector<use>& v, tally& t) {
        for (const auto& u : v) t.add(cost(u));
    };
    // Layer l of stage s in micro-batch mb's forward or backward.
    auto sum_layer = [&](const std::vector<use>& v, uint32_t s, bool backward, uint64_t mb, uint32_t l, tally& t) {
        const pass_cost& pc = layer_cost(v, s, variant_of(backward, mb, l));
        for (const auto& c : pc.ops) t.add(c);
        t.total += pc.rest, t.sync += pc.rest;
    };
    // Durations: F[s][i], B[s][i]; the backward's layer times (for gradient buckets) of the last micro-batch.
    r.stages.resize(S);
    std::vector<std::vector<double>> F(S, std::vector<double>(M)), B(S, std::vector<double>(M));
    std::vector<tally> busy(S, tally{barrier});
    for (uint32_t s = 0; s < S; ++s)
        for (uint64_t i = 0; i < M; ++i) {
            tally f{barrier}, b{barrier};
            sum(fwd[s][i].embed, f);
            for (uint32_t l = 0; l < L; ++l) sum_layer(fwd[s][i].layers[l], s, false, i, l, f);
            sum(fwd[s][i].head, f);
            sum(bwd[s][i].head, b);
            for (uint32_t l = 0; l < L; ++l) sum_layer(bwd[s][i].layers[l], s, true, i, l, b);
            sum(bwd[s][i].embed, b);
            F[s][i] = f.total, B[s][i] = b.total;
            for (const tally* t : {&f, &b}) {
                busy[s].total += t->total, busy[s].compute += t->compute;
                busy[s].memory += t->memory, busy[s].tp += t->tp, busy[s].sync += t->sync;
            }
            if (i == M - 1) {  // the last micro-batch's (the backward of the others but the first alike)
                r.stages[s].fwd_ns = f.total, r.stages[s].bwd_ns = b.total;
                r.stages[s].compute_ns = f.compute + b.compute;
                r.stages[s].memory_ns = f.memory + b.memory;
                r.stages[s].tp_ns = f.tp + b.tp;
                r.stages[s].sync_ns = f.sync + b.sync;
            }
        }

    const auto spans = schedule_1f1b(F, B, r.send_ns);
    for (uint32_t s = 0; s < S; ++s) r.stages[s].spans = spans[s];

    // Gradient buckets (last micro-batch's backward: head, then the layers last to first) and Adam.
    for (uint32_t s = 0; s < S; ++s) {
        auto& st = r.stages[s];
        st.pipeline_end_ns = st.spans.back().end_ns;
        st.bubble_ns = st.pipeline_end_ns - busy[s].total;
        const auto& last = bwd[s][M - 1];
        double t = st.spans.back().begin_ns, comm = 0;
        tally h{barrier};
        sum(last.head, h);
        t += h.total;
        std::vector<double> ready;
        const bool own_head = s == S - 1, own_embed = s == 0;
        double head_ready = own_head ? t : 0;
        for (uint32_t l = 0; l < L; ++l) {  // the backward's order: the stage's last layer first
            tally lt{barrier};
            sum_layer(last.layers[l], s, true, M - 1, L - 1 - l, lt);
            t += lt.total;
            ready.push_back(t);
        }
        if (own_embed) head_ready = std::max(head_ready, st.pipeline_end_ns);
        if (dp) {
            // Buckets go in the order their gradients are ready (the last stage's LM head first, the first stage's
            // embedding last), one after another on the links.
            if (own_head || own_embed) ready.push_back(head_ready);
            std::vector<size_t> by_ready(buckets[s].size());
            for (size_t k = 0; k < by_ready.size(); ++k) by_ready[k] = k;
            std::stable_sort(by_ready.begin(), by_ready.end(), [&](size_t a, size_t b) { return ready[a] < ready[b]; });
            for (size_t k : by_ready) {
                const double b = std::max(ready[k], comm), e = b + ns_of(buckets[s][k]) + barrier;
                st.dp_buckets.push_back({k < L ? "layer " + std::to_string(s * L + L - 1 - k) : "embedding/head", b, e});
                comm = e;
            }
        }
        st.dp_end_ns = comm;
        st.dp_exposed_ns = std::max(0.0, comm - st.pipeline_end_ns);
        for (size_t q : adam[s]) st.optimizer_ns += ns_of(q) + barrier;
        st.end_ns = std::max(st.pipeline_end_ns, st.dp_end_ns) + st.optimizer_ns;
        if (st.end_ns > r.step_ns) r.step_ns = st.end_ns, r.critical_stage = s;
    }
    // HBM per chip (estimate; see stage_result).
    r.hbm_capacity_bytes = double(cfg.chip.hbm.capacity_bytes);
    const std::vector<stage_memory> mem = stage_memory_of(m, p, lp);
    for (uint32_t s = 0; s < S; ++s) {
        auto& st = r.stages[s];
        st.params = mem[s].params, st.in_flight = mem[s].in_flight;
        st.state_bytes = mem[s].state_bytes, st.activation_bytes = mem[s].activation_bytes;
        if (st.state_bytes + st.activation_bytes > r.hbm_capacity_bytes) r.fits = false;
    }
    const auto& cs = r.stages[r.critical_stage];
    r.compute_ns = busy[r.critical_stage].compute;
    r.memory_ns = busy[r.critical_stage].memory;
    r.tp_exposed_ns = busy[r.critical_stage].tp;
    r.sync_ns = busy[r.critical_stage].sync;
    r.bubble_ns = cs.bubble_ns;
    r.dp_exposed_ns = cs.dp_exposed_ns;
    r.optimizer_ns = cs.optimizer_ns;
    r.tokens_per_s = double(m.global_batch) * m.seq / (r.step_ns * 1e-9);
    r.model_flops = step_model_flops(m, p, lp);
    r.mfu = r.peak_tflops_per_chip > 0 ? r.model_flops / (r.step_ns * 1e-9) / (r.peak_tflops_per_chip * 1e12 * r.chips)
                                       : 0;

    if (!opt.timeline_file.empty()) {
        tlmx::trace_limits lim;
        lim.max_events = 2000000;
        tlmx::trace_event_writer w(lim);
        auto ps = [](double ns) { return uint64_t(ns * 1000.0 + 0.5); };
        for (uint32_t s = 0; s < S; ++s)
            for (uint32_t d = 0; d < p.dp; ++d)
                for (uint32_t t = 0; t < p.tp; ++t) {
                    const uint32_t chip = rank(t, d, s);
                    const auto& st = r.stages[s];
                    w.process(chip, "chip " + std::to_string(chip) + " (stage " + std::to_string(s) + ", dp " +
                                        std::to_string(d) + ", tp " + std::to_string(t) + ")");
                    const size_t pipe = w.track(chip, "pipeline (1F1B)"), ops = w.track(chip, "operations (micro-batch 0)");
                    const size_t grad = w.track(chip, "gradient all-reduce"), optim = w.track(chip, "optimizer");
                    for (const auto& sp : st.spans)
                        w.span(pipe, std::string(1, sp.kind) + std::to_string(sp.micro_batch), "compute", ps(sp.begin_ns),
                               ps(sp.end_ns), tlmx::trace_args().num("micro_batch", uint64_t(sp.micro_batch)));
                    for (const auto& sp : st.spans) {
                        if (sp.micro_batch != 0) continue;
                        const pass& pa = sp.kind == 'F' ? fwd[s][0] : bwd[s][0];
                        double at = sp.begin_ns;
                        auto emit = [&](const std::vector<op_cost>& v, const std::string& prefix, double rest) {
                            for (const auto& c : v) {
                                const double e = at + c.ns * c.count;
                                w.span(ops, prefix + c.name, c.kind, ps(at), ps(e),
                                       tlmx::trace_args().str("sim", c.what).num("count", uint64_t(c.count)));
                                at = e + barrier;
                            }
                            at += rest;
                        };
                        auto emit_layer = [&](uint32_t l, bool backward) {  // l: the stage's layer
                            const pass_cost& pc = layer_cost(pa.layers[l], s, variant_of(backward, 0, l));
                            emit(pc.ops, "L" + std::to_string(s * L + l) + " ", pc.rest);
                        };
                        if (sp.kind == 'F') {
                            emit(costs(pa.embed), "", 0);
                            for (uint32_t l = 0; l < L; ++l) emit_layer(l, false);
                            emit(costs(pa.head), "", 0);
                        } else {
                            emit(costs(pa.head), "", 0);
                            for (uint32_t l = L; l-- > 0;) emit_layer(l, true);
                        }
                    }
                    for (const auto& bk : st.dp_buckets) w.span(grad, bk.name, "comm", ps(bk.begin_ns), ps(bk.end_ns));
                    const double ob = std::max(st.pipeline_end_ns, st.dp_end_ns);
                    w.span(optim, "Adam", "compute", ps(ob), ps(ob + st.optimizer_ns));
                }
        std::ostringstream f;
        w.write(f, {{"model", m.name}, {"platform", cfg.preset}, {"replay", opt.replay ? "true" : "false"}});
        platform::write_file(opt.timeline_file, f.str());
    }
    r.wall_s = std::chrono::duration<double>(clock_type::now() - t_start).count();
    return r;
}

}  // namespace trnsim::train

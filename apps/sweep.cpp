#include "apps/sweep.h"

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <systemc>

#include "apps/report.h"
#include "platforms/config/platform_config.h"
#include "testbench/workloads/gemm/gemm_run.h"
#include "testbench/tools/sweep/process_pool.h"
#include "testbench/tools/sweep/sweep_spec.h"
#include "testbench/tools/sweep/sweep_table.h"

namespace trnsim::app {

const char* SWEEP_USAGE = R"(trnsim sweep SWEEP.json [--out DIR] [--jobs N] [--retry-failed] [--list] [--config-dir DIR]
    runs every point not yet done (one trnsim process each, N at a time, progress on stderr), then writes
    DIR/results.csv and DIR/results.json; an interrupted sweep resumes where it stopped
trnsim sweep SWEEP.json --emit slurm [--out DIR] [--partition P] [--time HH:MM:SS] [--max-parallel K]
    writes DIR/slurm/sweep.sbatch (a job array, one task per point not yet done) and DIR/slurm/commands.txt
    (one command per line, for GNU parallel); run them, then collect
trnsim sweep --collect (SWEEP.json | --out DIR)
    merges DIR/points/*.json into DIR/results.csv and DIR/results.json (missing points listed as missing)
trnsim sweep --point I --out DIR
    runs point I of DIR/manifest.json in this process and writes DIR/points/<id>.json (what each task runs)
  default DIR: the sweep file's name without .json, plus ".out", in the current directory
)";

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A Ctrl-C (or SIGTERM) stops launching points; the handler can only set a flag.
std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop = true; }

std::string self_exe() {
    std::error_code ec;
    auto p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("cannot find the trnsim executable (/proc/self/exe): " + ec.message());
    return p.string();
}

json read_json(const fs::path& p) { return config::load_json_file(p.string()); }

std::string tail_of(const fs::path& log, size_t lines) {
    std::ifstream in(log);
    std::vector<std::string> all;
    for (std::string l; std::getline(in, l);)
        if (!l.empty()) all.push_back(l);
    std::string out;
    for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += (out.empty() ? "" : " | ") + all[i];
    return out;
}

struct sweep_dir {
    fs::path root;
    fs::path manifest() const { return root / "manifest.json"; }
    fs::path point(const std::string& id) const { return root / "points" / (id + ".json"); }
    fs::path log(const std::string& id) const { return root / "logs" / (id + ".log"); }
};

fs::path default_out(const std::string& sweep_file) { return fs::path(fs::path(sweep_file).stem().string() + ".out"); }

// The frozen sweep every task reads: spec, config dir and the points' inputs.
struct manifest {
    sweep::spec spec;
    std::vector<sweep::point> points;
    std::string config_dir;
};

manifest load_manifest(const sweep_dir& d) {
    if (!fs::exists(d.manifest())) throw std::runtime_error(d.manifest().string() + ": no manifest (is this a sweep directory?)");
    json m = read_json(d.manifest());
    manifest out;
    out.spec = sweep::parse(m.at("spec"), d.manifest().string());
    out.points = sweep::expand(out.spec);
    out.config_dir = m.value("config_dir", platform::default_config_dir());
    return out;
}

void write_manifest(const sweep_dir& d, const manifest& m, const std::string& sweep_file) {
    json pts = json::array();
    for (const auto& p : m.points) pts.push_back({{"id", p.id}, {"index", p.index}, {"inputs", p.inputs(m.spec)}});
    json j = {{"trnsim_sweep_manifest", 1}, {"sweep_file", fs::absolute(sweep_file).string()},
              {"config_dir", m.config_dir}, {"spec", m.spec.source}, {"points", pts}};
    write_file_atomic(d.manifest().string(), j.dump(1) + "\n");
}

// The point's row if its file exists and belongs to these inputs (else null).
json finished_row(const sweep_dir& d, const sweep::point& p, const json& inputs) {
    const auto f = d.point(p.id);
    if (!fs::exists(f)) return json();
    try {
        json r = read_json(f);
        if (r.value("inputs", json()) != inputs) return json();
        return r;
    } catch (const std::exception&) {
        return json();  // a damaged row runs again
    }
}

json failure_row(const sweep::point& p, const json& inputs, const std::string& error) {
    return {{"id", p.id}, {"index", p.index}, {"status", "failed"}, {"error", error}, {"inputs", inputs},
            {"outputs", json::object()}};
}

// ---- one point, in this process ----
int run_point(const sweep_dir& d, size_t index) {
    manifest m = load_manifest(d);
    if (index >= m.points.size())
        throw usage_error("--point " + std::to_string(index) + ": the sweep has " + std::to_string(m.points.size()) + " points");
    const auto& p = m.points[index];
    const json inputs = p.inputs(m.spec);
    json row = {{"id", p.id}, {"index", p.index}, {"status", "ok"}, {"error", ""}, {"inputs", inputs}};
    try {
        std::vector<std::string> sets;
        for (const auto& [k, v] : m.spec.base_set) sets.push_back(k + "=" + v.dump());
        for (auto& s : p.overrides()) sets.push_back(s);
        const std::string what = m.spec.config_file.empty() ? m.spec.preset : m.spec.config_file;
        auto cfg = platform::load_platform(what, sets, m.config_dir);
        const json w = p.workload(m.spec);
        for (auto it = w.begin(); it != w.end(); ++it)
            if (!std::set<std::string>{"name", "m", "k", "n", "dtype", "seed", "check", "wall_limit_s"}.count(it.key()))
                throw config::config_error("workload." + it.key() + ": unknown workload parameter (gemm takes m, k, n, dtype, seed, check, wall_limit_s)");
        if (w.value("name", "gemm") != "gemm") throw config::config_error("workload.name: only \"gemm\" is available");
        tb::gemm_spec g;
        auto num = [&](const char* k, uint64_t def) {
            if (!w.contains(k)) return def;
            if (!w[k].is_number_unsigned()) throw config::config_error(std::string("workload.") + k + ": expected a whole number, got " + w[k].dump());
            return w[k].get<uint64_t>();
        };
        g.m = num("m", g.m);
        g.k = num("k", g.k);
        g.n = num("n", g.n);
        g.seed = num("seed", g.seed);
        const std::string dt = w.value("dtype", "bf16");
        auto t = numerics::parse_dtype(dt);
        if (!t) throw config::config_error("workload.dtype: unknown type '" + dt + "'");
        g.dtype = *t;
        tb::gemm_options opt;
        opt.check = w.value("check", false);
        opt.sim.progress_after_s = 0;
        opt.sim.wall_limit_s = w.value("wall_limit_s", 0.0);
        auto r = tb::run_gemm(cfg, g, opt);
        json full = gemm_result_json(cfg, r);
        json out = full["result"];
        for (auto it = full["energy_j"].begin(); it != full["energy_j"].end(); ++it) out["energy." + it.key()] = it.value();
        out["simulated_s_per_wall_s"] = r.wall_s > 0 ? r.sim_ns * 1e-9 / r.wall_s : 0;
        row["outputs"] = out;
        if (r.checked && !r.pass) {
            row["status"] = "failed";
            row["error"] = "result check failed: " + std::to_string(r.mismatches) + " elements differ; first " + r.first_mismatch;
        }
    } catch (const sc_core::sc_report& e) {
        row = failure_row(p, inputs, std::string("simulation error: ") + e.what());
    } catch (const std::exception& e) {
        row = failure_row(p, inputs, e.what());
    }
    fs::create_directories(d.root / "points");
    write_file_atomic(d.point(p.id).string(), row.dump(1) + "\n");
    std::cout << p.id << " " << row["status"].get<std::string>() << (row["error"] == "" ? "" : ": " + row["error"].get<std::string>()) << "\n";
    return row["status"] == "ok" ? 0 : 1;
}

// ---- merging ----
int collect(const sweep_dir& d, bool quiet = false) {
    manifest m = load_manifest(d);
    std::vector<json> rows;
    size_t ok = 0, failed = 0, missing = 0;
    for (const auto& p : m.points) {
        const json inputs = p.inputs(m.spec);
        json r = finished_row(d, p, inputs);
        if (r.is_null()) {
            r = {{"id", p.id}, {"index", p.index}, {"status", "missing"}, {"error", "no result yet"}, {"inputs", inputs},
                 {"outputs", json::object()}};
            ++missing;
        } else if (r.value("status", "") == "ok") {
            ++ok;
        } else {
            ++failed;
        }
        rows.push_back(std::move(r));
    }
    write_file_atomic((d.root / "results.csv").string(), sweep::to_csv(rows));
    json doc = {{"sweep", m.spec.name}, {"points", rows.size()}, {"ok", ok}, {"failed", failed}, {"missing", missing},
                {"rows", sweep::to_json(rows)}};
    write_file_atomic((d.root / "results.json").string(), doc.dump(1) + "\n");
    if (!quiet || failed || missing) {
        std::cout << "sweep " << m.spec.name << ": " << rows.size() << " points, " << ok << " ok, " << failed << " failed, "
                  << missing << " missing -> " << (d.root / "results.csv").string() << ", "
                  << (d.root / "results.json").string() << "\n";
        for (const auto& r : rows)
            if (r["status"] == "failed") std::cout << "  " << r["id"].get<std::string>() << " failed: " << r["error"].get<std::string>() << "\n";
    }
    return failed || missing ? 1 : 0;
}

std::string index_ranges(const std::vector<size_t>& idx) {
    std::string s;
    for (size_t i = 0; i < idx.size();) {
        size_t j = i;
        while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
        s += (s.empty() ? "" : ",") + std::to_string(idx[i]) + (j > i ? "-" + std::to_string(idx[j]) : "");
        i = j + 1;
    }
    return s;
}

std::string shell_quote(const std::string& s) {
    if (s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+") == std::string::npos) return s;
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

} // namespace

int cmd_sweep(const args& a) {
    const auto& pos = a.positional();
    if (pos.size() > 1) throw usage_error("one sweep file, got " + std::to_string(pos.size()) + "\n" + SWEEP_USAGE);
    const std::string file = pos.empty() ? "" : pos[0];
    sweep_dir d{a.has("out") ? fs::path(a.str("out", "")) : file.empty() ? fs::path() : default_out(file)};
    if (d.root.empty()) throw usage_error("give a sweep file or --out DIR\n" + std::string(SWEEP_USAGE));
    d.root = fs::absolute(d.root);

    if (a.has("point")) return run_point(d, a.u64("point", 0));
    if (a.has("collect")) return collect(d);
    if (file.empty()) throw usage_error("give the sweep file\n" + std::string(SWEEP_USAGE));

    manifest m;
    m.spec = sweep::parse(config::load_json_file(file), file);
    if (!m.spec.config_file.empty() && fs::path(m.spec.config_file).is_relative()) {
        // A config file named by the sweep is relative to the sweep file (tasks may run elsewhere).
        m.spec.config_file = (fs::absolute(file).parent_path() / m.spec.config_file).lexically_normal().string();
        m.spec.source["config"] = m.spec.config_file;
    }
    m.points = sweep::expand(m.spec);
    m.config_dir = fs::absolute(a.config_dir()).string();
    if (m.points.empty()) throw config::config_error(file + ": the sweep has no points");
    if (a.has("list")) {
        for (const auto& p : m.points) std::cout << p.id << " " << p.inputs(m.spec).dump() << "\n";
        return 0;
    }
    fs::create_directories(d.root / "points");
    fs::create_directories(d.root / "logs");
    write_manifest(d, m, file);

    std::vector<size_t> pending;
    size_t done = 0;
    const bool retry = a.has("retry-failed");
    for (const auto& p : m.points) {
        json r = finished_row(d, p, p.inputs(m.spec));
        if (!r.is_null() && (r.value("status", "") == "ok" || !retry)) ++done;
        else pending.push_back(p.index);
    }
    const std::string exe = self_exe();
    auto point_argv = [&](size_t i) {
        return std::vector<std::string>{exe, "sweep", "--point", std::to_string(i), "--out", d.root.string()};
    };

    if (a.has("emit")) {
        if (a.str("emit", "") != "slurm") throw usage_error("--emit: only 'slurm' is available");
        // What goes into #SBATCH lines must be one plain word of Slurm's syntax (a newline would add a command).
        if (a.has("partition") && !std::regex_match(a.str("partition", ""), std::regex("[A-Za-z0-9_.,-]+")))
            throw usage_error("--partition: '" + a.str("partition", "") + "' is not a partition name (letters, digits, _ . , -)");
        if (a.has("time") && !std::regex_match(a.str("time", ""), std::regex("([0-9]+-)?[0-9]+(:[0-9]+){0,2}")))
            throw usage_error("--time: '" + a.str("time", "") + "' is not a Slurm time (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM:SS)");
        if (a.has("max-parallel") && a.u32("max-parallel", 1) == 0) throw usage_error("--max-parallel: must be >= 1");
        fs::create_directories(d.root / "slurm");
        std::string cmds;
        for (size_t i : pending) {
            std::string line;
            for (const auto& w : point_argv(i)) line += (line.empty() ? "" : " ") + shell_quote(w);
            cmds += line + " >" + shell_quote(d.log(m.points[i].id).string()) + " 2>&1\n";
        }
        write_file_atomic((d.root / "slurm" / "commands.txt").string(), cmds);
        std::ostringstream sb;
        sb << "#!/bin/bash\n# trnsim sweep " << m.spec.name << ": one array task per point not yet done ("
           << pending.size() << " of " << m.points.size() << ").\n"
           << "#SBATCH --job-name=trnsim-" << m.spec.name << "\n";
        if (!pending.empty()) {
            sb << "#SBATCH --array=" << index_ranges(pending);
            if (a.has("max-parallel")) sb << "%" << a.u32("max-parallel", 1);
            sb << "\n";
        }
        sb << "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n"
           << "#SBATCH --output=" << (d.root / "logs" / "slurm-%A_%a.log").string() << "\n";
        if (a.has("partition")) sb << "#SBATCH --partition=" << a.str("partition", "") << "\n";
        if (a.has("time")) sb << "#SBATCH --time=" << a.str("time", "") << "\n";
        if (pending.empty()) sb << "echo 'every point is done: nothing to run'\nexit 0\n";
        sb << "set -eu\nexec " << shell_quote(exe) << " sweep --point \"$SLURM_ARRAY_TASK_ID\" --out "
           << shell_quote(d.root.string()) << "\n";
        const fs::path sbatch = d.root / "slurm" / "sweep.sbatch";
        write_file_atomic(sbatch.string(), sb.str());
        fs::permissions(sbatch, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);
        std::cout << "sweep " << m.spec.name << ": " << pending.size() << " of " << m.points.size() << " points to run\n"
                  << "  Slurm:        sbatch " << sbatch.string() << "\n"
                  << "  GNU parallel: parallel -j N < " << (d.root / "slurm" / "commands.txt").string() << "\n"
                  << "  then:         " << exe << " sweep --collect --out " << d.root.string() << "\n";
        return 0;
    }

    const unsigned jobs = a.u32("jobs", std::max(1u, std::thread::hardware_concurrency()));
    if (jobs == 0) throw usage_error("--jobs: must be >= 1");
    std::cerr << "sweep " << m.spec.name << ": " << m.points.size() << " points, " << done << " already done, "
              << pending.size() << " to run, " << jobs << " at a time -> " << d.root.string() << "\n";
    std::vector<sweep::task> tasks;
    for (size_t i : pending) tasks.push_back({point_argv(i), d.log(m.points[i].id).string(), {}});
    sweep::pool_options po;
    po.jobs = jobs;
    po.tty = isatty(2);
    po.already_done = done;
    po.total = m.points.size();
    po.stop = &g_stop;
    g_stop = false;
    auto old_int = std::signal(SIGINT, on_stop_signal);
    auto old_term = std::signal(SIGTERM, on_stop_signal);
    sweep::run_tasks(tasks, po, [&](size_t t, const sweep::task_end& e) {
        const auto& p = m.points[pending[t]];
        const json inputs = p.inputs(m.spec);
        json r = finished_row(d, p, inputs);
        if (r.is_null()) {  // the task died before writing its row (crash, kill, cannot start)
            r = failure_row(p, inputs, e.describe() + ": " + tail_of(d.log(p.id), 3));
            write_file_atomic(d.point(p.id).string(), r.dump(1) + "\n");
        }
        return r.value("status", "") != "ok";
    });
    std::signal(SIGINT, old_int);
    std::signal(SIGTERM, old_term);
    const int rc = collect(d);
    if (g_stop) {
        std::cerr << "sweep interrupted: run the same command again to resume\n";
        return 130;
    }
    return rc;
}

} // namespace trnsim::app

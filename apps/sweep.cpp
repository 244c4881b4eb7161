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

#include "apps/collective.h"
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

const option_set SWEEP_OPTIONS = {
    {"out", "jobs", "config-dir", "emit", "partition", "time", "max-parallel", "point"}, {"collect", "retry-failed", "list"}, {}};

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
    const std::string file = d.manifest().string();
    json m = read_json(d.manifest());
    if (!m.is_object()) throw config::config_error(file + ": expected a sweep manifest (an object), got " + m.type_name());
    if (!m.contains("spec")) throw config::config_error(file + ": spec: required (the sweep file, as written by trnsim sweep)");
    if (m.contains("config_dir") && !m["config_dir"].is_string())
        throw config::config_error(file + ": config_dir: expected a directory name, got " + config::show(m["config_dir"]));
    manifest out;
    out.spec = sweep::parse(m["spec"], file + " spec");
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

// What is wrong with a point's row ("" if nothing): the keys the sweep reads, with their types.
std::string row_problem(const json& r) {
    if (!r.is_object()) return std::string("expected a row (an object), got ") + r.type_name();
    if (!r.contains("status") || !r["status"].is_string() || (r["status"] != "ok" && r["status"] != "failed"))
        return "status: expected \"ok\" or \"failed\", got " + (r.contains("status") ? config::show(r["status"]) : "nothing");
    if (!r.contains("error") || !r["error"].is_string())
        return "error: expected a string, got " + (r.contains("error") ? config::show(r["error"]) : "nothing");
    if (!r.contains("outputs") || !r["outputs"].is_object())
        return "outputs: expected an object, got " + (r.contains("outputs") ? config::show(r["outputs"]) : "nothing");
    return {};
}

// The point's row if its file exists and belongs to these inputs (else null). A damaged row (not JSON, a key of the
// wrong type) counts as not run: it runs again, and `damage` (if given) says which file and key.
json finished_row(const sweep_dir& d, const sweep::point& p, const json& inputs, std::string* damage = nullptr) {
    const auto f = d.point(p.id);
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(f, ec))) return json();
    try {
        json r = read_json(f);
        if (r.is_object() && r.value("inputs", json()) != inputs) return json();
        const std::string why = row_problem(r);
        if (!why.empty()) throw config::config_error(f.string() + ": " + why);
        return r;
    } catch (const std::exception& e) {
        if (damage) *damage = std::string(e.what()) + " (a damaged row: the point counts as not run)";
        return json();
    }
}

json failure_row(const sweep::point& p, const json& inputs, const std::string& error) {
    return {{"id", p.id}, {"index", p.index}, {"status", "failed"}, {"error", error}, {"inputs", inputs},
            {"outputs", json::object()}};
}

// A point's workload, every field checked by type and range (errors name workload.KEY).
struct gemm_workload {
    tb::gemm_spec spec;
    bool check = false;
    double wall_limit_s = 0;
};

gemm_workload parse_workload(const json& w) {
    using config::config_error;
    auto bad = [](const std::string& k, const std::string& why) { throw config_error("workload." + k + ": " + why); };
    for (auto it = w.begin(); it != w.end(); ++it)
        if (!std::set<std::string>{"name", "m", "k", "n", "dtype", "seed", "check", "wall_limit_s"}.count(it.key()))
            bad(it.key(), "unknown workload parameter (gemm takes m, k, n, dtype, seed, check, wall_limit_s)");
    if (w.contains("name") && w["name"] != "gemm") bad("name", "only \"gemm\" is available, got " + w["name"].dump());
    gemm_workload out;
    auto num = [&](const char* k, uint64_t def) {
        if (!w.contains(k)) return def;
        if (!w[k].is_number_unsigned()) bad(k, "expected a whole number, got " + w[k].dump());
        return w[k].get<uint64_t>();
    };
    out.spec.m = num("m", out.spec.m);
    out.spec.k = num("k", out.spec.k);
    out.spec.n = num("n", out.spec.n);
    out.spec.seed = num("seed", out.spec.seed);
    if (w.contains("dtype") && !w["dtype"].is_string()) bad("dtype", "expected a type name, got " + w["dtype"].dump());
    const std::string dt = w.value("dtype", "bf16");
    auto t = numerics::parse_dtype(dt);
    if (!t) bad("dtype", "unknown type '" + dt + "' (fp32, tf32, bf16, fp16, fp8_e4m3, fp8_e5m2)");
    out.spec.dtype = *t;
    if (w.contains("check") && !w["check"].is_boolean()) bad("check", "expected true or false, got " + w["check"].dump());
    out.check = w.value("check", false);
    if (w.contains("wall_limit_s")) {
        // As --wall-limit: 0 = no limit, at most 1e9 s (the watchdog's clock overflows past that).
        const json& v = w["wall_limit_s"];
        if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1e9))
            bad("wall_limit_s", "expected seconds from 0 (no limit) to 1e9, got " + v.dump());
        out.wall_limit_s = v.get<double>();
    }
    return out;
}

// ---- one point, in this process ----
// A directory of the sweep's output (DIR/points, ...), created if missing; an error naming --out and the reason
// (not writable, a file in the way) otherwise.
void make_dir(const sweep_dir& d, const char* sub) {
    std::error_code ec;
    const fs::path p = d.root / sub;
    fs::create_directories(p, ec);
    if (ec || !fs::is_directory(p))
        throw std::runtime_error("--out " + d.root.string() + ": cannot create the directory " + p.string() + ": " +
                                 (ec ? ec.message() : std::string("a file of that name is in the way")));
}

// The most simulations a sweep runs at once on this machine (each a process with its own memory).
constexpr unsigned MAX_JOBS = 256;

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
        require_single_chip(cfg, std::string(m.spec.config_file.empty() ? "preset " : "config ") + what,
                            "a sweep point (a GEMM)", (m.spec.config_file.empty() ? "--platform " : "--config ") + what);
        const gemm_workload gw = parse_workload(p.workload(m.spec));
        tb::gemm_spec g = gw.spec;
        tb::gemm_options opt;
        opt.check = gw.check;
        opt.sim.progress_after_s = 0;
        opt.sim.wall_limit_s = gw.wall_limit_s;
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
    make_dir(d, "points");
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
        std::string damage;
        json r = finished_row(d, p, inputs, &damage);
        if (r.is_null()) {
            if (!damage.empty() && !quiet) std::cerr << "sweep: " << damage << "\n";
            r = {{"id", p.id}, {"index", p.index}, {"status", "missing"}, {"error", damage.empty() ? "no result yet" : damage},
                 {"inputs", inputs}, {"outputs", json::object()}};
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
    // An option the chosen mode ignores is an error naming it.
    if (a.has("point")) a.refuse({"collect", "list", "retry-failed", "emit", "jobs", "config-dir"},
                                 "cannot go with --point (it runs one point of DIR/manifest.json)");
    if (a.has("collect")) a.refuse({"list", "retry-failed", "emit", "jobs", "config-dir"}, "cannot go with --collect");
    if (a.has("list")) a.refuse({"retry-failed", "emit", "jobs"}, "cannot go with --list (it runs nothing)");
    if (a.has("emit")) a.refuse({"jobs"}, "applies to a sweep run here, not --emit slurm");
    else a.refuse({"partition", "time", "max-parallel"}, "applies to --emit slurm");
    const auto& pos = a.positional();
    if (pos.size() > 1) throw usage_error("one sweep file, got " + std::to_string(pos.size()) + "\n" + SWEEP_USAGE);
    const std::string file = pos.empty() ? "" : pos[0];
    sweep_dir d{a.has("out") ? fs::path(a.str("out", "")) : file.empty() ? fs::path() : default_out(file)};
    if (d.root.empty()) throw usage_error("give a sweep file or --out DIR\n" + std::string(SWEEP_USAGE));
    d.root = fs::absolute(d.root);
    {
        std::error_code ec;
        const auto st = fs::status(d.root, ec);
        if (fs::exists(st) && !fs::is_directory(st))
            throw usage_error("--out " + d.root.string() + ": not a directory (a sweep writes a directory of results)");
    }

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
    {
        std::vector<platform::named_file> files{{"the sweep file", file, false}};
        if (!m.spec.config_file.empty()) files.push_back({"the sweep's config", m.spec.config_file, false});
        for (const fs::path& f : {d.manifest(), d.root / "results.csv", d.root / "results.json",
                                  d.root / "slurm" / "sweep.sbatch", d.root / "slurm" / "commands.txt"})
            files.push_back({"the sweep's output", f.string(), true});
        check_distinct_files(a, nullptr, files);
    }
    m.points = sweep::expand(m.spec);
    m.config_dir = fs::absolute(a.config_dir()).string();
    if (m.points.empty()) throw config::config_error(file + ": the sweep has no points");
    for (const auto& p : m.points) {  // every point's workload checked before anything runs
        try {
            parse_workload(p.workload(m.spec));
        } catch (const config::config_error& e) {
            throw config::config_error(file + ": point " + p.id + ": " + e.what());
        }
    }
    if (a.has("list")) {
        for (const auto& p : m.points) std::cout << p.id << " " << p.inputs(m.spec).dump() << "\n";
        return 0;
    }
    make_dir(d, "points");
    make_dir(d, "logs");
    write_manifest(d, m, file);

    std::vector<size_t> pending;
    size_t done = 0;
    const bool retry = a.has("retry-failed");
    for (const auto& p : m.points) {
        std::string damage;
        json r = finished_row(d, p, p.inputs(m.spec), &damage);
        if (!damage.empty()) std::cerr << "sweep: " << damage << "\n";
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
        make_dir(d, "slurm");
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

    const unsigned jobs = a.u32("jobs", std::max(1u, std::min(MAX_JOBS, std::thread::hardware_concurrency())));
    if (jobs == 0 || jobs > MAX_JOBS)
        throw usage_error("--jobs: " + std::to_string(jobs) + " is outside 1 .. " + std::to_string(MAX_JOBS) +
                          " (simulations run at once, each a process)");
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

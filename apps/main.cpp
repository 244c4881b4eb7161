// trnsim: the command line. Thin: parses options, loads the platform config, calls the testbench drivers.
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include <unistd.h>
#include <iostream>

#include <systemc>

#include "apps/args.h"
#include "apps/cosim.h"
#include "apps/collective.h"
#include "apps/observers.h"
#include "apps/report.h"
#include "apps/sweep.h"
#include "apps/train.h"
#include "apps/transformer.h"
#include "platforms/config/platform_config.h"
#include "platforms/single_chip/factories.h"
#include "testbench/workloads/gemm/gemm_run.h"
#include "testbench/tools/hbm_trace.h"
#include "testbench/workloads/train/train_spec.h"

using namespace trnsim;

namespace {

const char* USAGE = R"(usage: trnsim <command> [options]

commands:
  run       simulate a workload on a platform and print a report
  sweep     run a design-space sweep (parallel processes, Slurm or GNU parallel), collect its results
  plot      roofline | pareto | utilisation plots (PNG, SVG) of runs, sweeps and timelines (apps/trnsim_plot.py)
  list      list presets and workloads
  hbm       drive the HBM DRAM model from a trace or a synthetic pattern (trnsim hbm --help)
  cosim     co-verify the RTL matrix engine against the TLM model, bit and cycle exact (below)
  collective  run a collective (allreduce, ...) on a server / cluster platform (trnsim collective --help)
  train     one training step of a model under a dp / tp / pp plan on a server or cluster (trnsim train --help)
  help      this text

trnsim run [--preset NAME | --config FILE] [--set key.path=value ...] [--workload gemm]
           [--m M] [--k K] [--n N] [--dtype fp32|tf32|bf16|fp16|fp8_e4m3|fp8_e5m2] [--seed S]
           [--no-check] [--stats FILE.json] [--wall-limit SECONDS] [--config-dir DIR] [--quiet]
           [--timeline FILE.json [--timeline-max-events N] [--timeline-window BEGIN_NS:END_NS] [--timeline-noc]]
           [--vcd FILE.vcd] [--wave FILE.fst|FILE.vcd (with --set chip.core.te.impl=rtl)]
  defaults: --preset trn2 --workload gemm --m 1024 --k 1024 --n 1024 --dtype bf16 --seed 1

trnsim run [--preset NAME | --config FILE] [--set key.path=value ...] [--fault TARGET:KIND[,key=value...] ...]
           [--workload gemm|program] [--m M] [--k K] [--n N] [--dtype fp32|tf32|bf16|fp16|fp8_e4m3|fp8_e5m2]
           [--seed S] [--program FILE.json] [--no-check] [--stats FILE.json] [--no-wall-time]
           [--wall-limit SECONDS] [--stall-limit-us US] [--config-dir DIR] [--quiet]
  defaults: --preset trn2 --workload gemm --m 1024 --k 1024 --n 1024 --dtype bf16 --seed 1
  --workload program runs the instruction streams of a program file (docs/program_format.md)
  --fault injects a fault (see tests/robustness), e.g. hbm.channel3:disable,policy=remap  core0.dma2:error,after=10
  --wall-limit / --stall-limit-us stop a run after that much wall time / simulated time without progress
  --no-wall-time leaves wall-clock times out of --stats (byte-identical files for the same config and seed)
exit status: 0 pass, 1 error or failed check, 2 usage error, 3 simulation error (deadlock, watchdog, bus error)
)";

platform::platform_config load_cfg(const app::args& a) {
    std::string dir = a.config_dir();
    if (a.has("preset") && a.has("config")) throw app::usage_error("give --preset or --config, not both");
    std::string what = a.has("config") ? a.str("config", "") : a.str("preset", "trn2");
    // --config names a file even without a directory or a .json suffix.
    if (a.has("config") && what.find('/') == std::string::npos) what = "./" + what;
    return platform::load_platform(what, a.list("set"), a.list("fault"), dir);
}

tb::sim_options sim_opts(const app::args& a) {
    tb::sim_options o;
    o.wall_limit_s = a.wall_limit_s();
    // 0 = no limit; else at least 1 ps, the simulation's time resolution (shorter limits never advance time).
    o.stall_limit_us = a.num("stall-limit-us", 0, 0, 1e12);
    if (o.stall_limit_us > 0 && o.stall_limit_us < 1e-6)
        throw app::usage_error("option --stall-limit-us: must be 0 (no limit) or at least 0.000001 (1 ps)");
    if (a.has("quiet")) o.progress_after_s = 0;
    return o;
}

void write_stats(const app::args& a, nlohmann::json j) {
    if (!a.has("stats")) return;
    if (a.has("no-wall-time")) app::strip_wall_time(j);
    app::write_file_atomic(a.str("stats", ""), j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

int cmd_program(const app::args& a, const platform::platform_config& cfg) {
    if (!a.has("program")) throw app::usage_error("--workload program needs --program FILE.json");
    std::vector<std::string> gemm_and_transformer = {"m", "k", "n", "dtype", "seed"};
    gemm_and_transformer.insert(gemm_and_transformer.end(), app::TRANSFORMER_OPTIONS.begin(), app::TRANSFORMER_OPTIONS.end());
    for (const std::string& k : gemm_and_transformer)
        if (a.has(k)) throw app::usage_error("--" + k + " does not apply to --workload program");
    auto p = tb::load_program(a.str("program", ""), cfg.chip);
    auto r = tb::run_program(cfg, p, sim_opts(a));
    std::cout << app::format_program_report(cfg, p, r);
    write_stats(a, app::program_result_json(cfg, p, r));
    return r.checked && !r.pass ? 1 : 0;
}

int cmd_list(const app::args& a) {
    if (!a.positional().empty()) throw app::usage_error("unexpected argument '" + a.positional()[0] + "'");
    std::string dir = a.config_dir();
    std::cout << "presets (" << dir << "):\n";
    for (const auto& p : platform::list_presets(dir)) {
        std::string desc;
        try {
            desc = platform::load_platform(p, {}, dir).description;
        } catch (const std::exception& e) {
            desc = std::string("(invalid: ") + e.what() + ")";
        }
        std::cout << "  " << p << (desc.empty() ? "" : "  - " + desc) << "\n";
    }
    std::cout << "workloads:\n  gemm     - C[MxN] = A[MxK] * B[KxN] (--m --k --n --dtype --seed)\n"
                 "  program  - hand-written instruction streams from a file (--program FILE.json)\n"
                 "  attention, mlp, decoder, adam - transformer kernels on one core (--seq --hidden --heads --ffn)\n";
    std::cout << "models (trnsim train --model, " << dir << "/models):\n";
    for (const auto& m : train::model_presets(dir)) {
        std::string desc;
        try {
            desc = train::load_model(m, dir).description;
        } catch (const std::exception& e) {
            desc = std::string("(invalid: ") + e.what() + ")";
        }
        std::cout << "  " << m << (desc.empty() ? "" : "  - " + desc) << "\n";
    }
    std::cout << "fault targets: " << platform::fault_targets_help() << "\n";
    std::cout << "tensor engine back ends: tlm" << (platform::rtl_available() ? ", rtl (" + platform::rtl_sizes() + ")" : "")
              << "\n";
    return 0;
}

int cmd_run(const app::args& a) {
    if (!a.positional().empty()) throw app::usage_error("unexpected argument '" + a.positional()[0] + "'");
    std::string workload = a.str("workload", "gemm");
    if (workload != "gemm" && workload != "program" && !app::is_transformer_workload(workload))
        throw app::usage_error("unknown workload '" + workload + "' (trnsim list shows the workloads)");
    if (a.has("stats")) app::check_writable("--stats", a.str("stats", ""));
    tb::sim_options so = sim_opts(a);
    auto cfg = load_cfg(a);
    if (workload == "program") return cmd_program(a, cfg);
    if (app::is_transformer_workload(workload)) return app::cmd_transformer(a, cfg, workload);
    if (a.has("program")) throw app::usage_error("--program applies to --workload program");
    for (const std::string& k : app::TRANSFORMER_OPTIONS)
        if (a.has(k)) throw app::usage_error("--" + k + " applies to the transformer workloads, not gemm");
    tb::gemm_spec g;
    g.m = a.u64("m", g.m);
    g.k = a.u64("k", g.k);
    g.n = a.u64("n", g.n);
    g.seed = a.u64("seed", g.seed);
    std::string dt = a.str("dtype", "bf16");
    auto t = numerics::parse_dtype(dt);
    if (!t) throw app::usage_error("--dtype: unknown type '" + dt + "' (fp32, tf32, bf16, fp16, fp8_e4m3, fp8_e5m2)");
    g.dtype = *t;
    if (cfg.chip.core.te.impl == te::te_impl::rtl) {
        app::check_rtl_dtype("--dtype", g.dtype);
        if (cfg.chip.core.te.fp8_double_row && numerics::size_of(g.dtype) == 1)
            throw app::usage_error("--dtype " + dt + ": FP8 with chip.core.te.fp8_double_row=true (two MACs per PE) is "
                                   "TLM-only; the RTL has one MAC per PE: add --set chip.core.te.fp8_double_row=false");
    }
    tb::gemm_options opt;
    opt.check = !a.has("no-check");
    opt.sim = so;
    app::observers obs(a, cfg);
    obs.hook(opt);
    auto r = tb::run_gemm(cfg, g, opt);
    std::cout << app::format_gemm_report(cfg, r);
    write_stats(a, app::gemm_result_json(cfg, r));
    obs.report(std::cout);
    return r.checked && !r.pass ? 1 : 0;
}

// trnsim plot KIND ...: hands over to the plotting script (matplotlib) with the same arguments.
int cmd_plot(int argc, char** argv) {
    const char* py_env = std::getenv("TRNSIM_PYTHON");
    std::string py = py_env && *py_env ? py_env : TRNSIM_PYTHON_DEFAULT;
    if (py.empty()) py = "python3";
    const char* script_env = std::getenv("TRNSIM_PLOT_SCRIPT");
    std::string script = script_env && *script_env ? script_env : TRNSIM_PLOT_SCRIPT;
    std::vector<std::string> words = {py, script};
    for (int i = 2; i < argc; ++i) words.push_back(argv[i]);
    std::vector<char*> av;
    for (auto& w : words) av.push_back(w.data());
    av.push_back(nullptr);
    std::fflush(stdout);
    execvp(av[0], av.data());
    std::cerr << "trnsim plot: cannot run " << py << " (" << std::strerror(errno)
              << "); install python3-matplotlib or set TRNSIM_PYTHON\n";
    return 1;
}

} // namespace

static int run_command(int argc, char** argv) {
    std::string cmd = argc > 1 ? argv[1] : "help";
    try {
        bool help = cmd == "help" || cmd == "--help" || cmd == "-h";
        if (cmd == "run" || cmd == "list" || cmd == "sweep" || cmd == "cosim")
            for (int i = 2; i < argc; ++i) help |= std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0;
        if (help) {
            if (cmd == "help" && argc > 2) throw app::usage_error(std::string("unexpected argument '") + argv[2] + "'");
            std::cout << USAGE << app::TRANSFORMER_USAGE << app::SWEEP_USAGE << app::COSIM_USAGE;
            return argc > 1 ? 0 : 2;
        }
        if (cmd == "hbm") return tb::hbm_trace_main(argc - 1, argv + 1);
        if (cmd == "list") return cmd_list(app::args(argc, argv, 2, {"config-dir"}, {}));
        if (cmd == "run")
            return cmd_run(app::args(argc, argv, 2,
                                     {"preset", "config", "set", "workload", "m", "k", "n", "dtype", "seed", "stats",
                                      "wall-limit", "config-dir", "timeline", "timeline-max-events",
                                      "timeline-window", "vcd", "wave", "fault", "program", "stall-limit-us",
                                      "seq", "hidden", "heads", "ffn", "rows", "cols", "step", "lr", "norm"},
                                     {"no-check", "quiet", "timeline-noc", "no-wall-time", "forward-only", "no-causal"}, {"set", "fault"}));
        if (cmd == "plot") return cmd_plot(argc, argv);
        if (cmd == "cosim") return app::cmd_cosim(app::args(argc, argv, 2, app::COSIM_OPTIONS, {}));
        if (cmd == "collective") return app::cmd_collective(argc, argv);
        if (cmd == "train") return app::cmd_train(argc, argv);
        if (cmd == "sweep")
            return app::cmd_sweep(app::args(argc, argv, 2,
                                            {"out", "jobs", "config-dir", "emit", "partition", "time", "max-parallel", "point"},
                                            {"collect", "retry-failed", "list"}));
        std::cerr << "trnsim: unknown command '" << cmd << "'\n" << USAGE;
        return 2;
    } catch (const app::usage_error& e) {
        std::cerr << "trnsim " << cmd << ": " << e.what() << "\n";
        return 2;
    } catch (const sc_core::sc_report& e) {
        std::cerr << "trnsim " << cmd << ": simulation error: " << e.what() << "\n";
        return 3;
    } catch (const tb::sim_error& e) {
        std::cerr << "trnsim " << cmd << ": simulation error: " << e.what() << "\n";
        return 3;
    } catch (const std::bad_alloc&) {
        std::cerr << "trnsim " << cmd << ": error: out of memory: what was asked for does not fit this machine's memory "
                     "(fewer chips, smaller sizes, fewer points or requests)\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "trnsim " << cmd << ": error: " << e.what() << "\n";
        return 1;
    }
}

int sc_main(int argc, char** argv) {
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
    sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DISPLAY);
    const int rc = run_command(argc, argv);
    std::cout.flush();
    if (!std::cout) {  // e.g. > /dev/full: the report was lost
        std::cerr << "trnsim: error writing the standard output\n";
        return rc ? rc : 1;
    }
    return rc;
}

// Our own entry point, so the SystemC banner can be switched off before the kernel prints it.
int main(int argc, char** argv) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    return sc_core::sc_elab_and_sim(argc, argv);
}

// trnsim: the command line. Thin: parses options, loads the platform config, calls the testbench drivers.
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <vector>

#include <unistd.h>
#include <iostream>

#include <systemc>

#include "apps/args.h"
#include "apps/cosim.h"
#include "apps/collective.h"
#include "apps/hbm.h"
#include "apps/observers.h"
#include "apps/platform_run.h"
#include "apps/report.h"
#include "apps/sweep.h"
#include "apps/train.h"
#include "apps/transformer.h"
#include "platforms/config/platform_config.h"
#include "platforms/single_chip/factories.h"
#include "testbench/workloads/gemm/gemm_run.h"
#include "testbench/workloads/train/train_spec.h"

using namespace trnsim;

namespace {

const char* RUN_USAGE = R"(trnsim run [--preset NAME | --config FILE] [--set key.path=value ...] [--fault TARGET:KIND[,key=value...] ...]
           [--workload gemm|program|attention|mlp|decoder|adam] [--config-dir DIR]
           gemm: [--m M] [--k K] [--n N] [--dtype fp32|tf32|bf16|fp16|fp8_e4m3|fp8_e5m2] [--seed S]
                 [--a-layout km|mk] [--b-layout kn|nk] [--c-dtype fp32|DTYPE]
                 [--timeline FILE.json [--timeline-max-events N] [--timeline-window BEGIN_NS:END_NS] [--timeline-noc]]
                 [--vcd FILE.vcd] [--wave FILE.fst|FILE.vcd (with --set chip.core.te.impl=rtl) [--wave-cores 0,1,..|all]]
           program: --program FILE.json
           attention|mlp|decoder|adam: [--seq S] [--hidden H] [--heads N] [--ffn F] [--norm rms|layer] [--forward-only]
                 [--no-causal] [--rows R] [--cols C] [--step T] [--lr LR] [--seed S]
           [--timing-only | --no-check] [--stats FILE.json [--no-wall-time]] [--wall-limit SECONDS] [--stall-limit-us US]
           [--max-host-gib G] [--quiet]
       trnsim run --platform NAME [--set chips.model=full] [--chips all|0,3,...] [gemm options]
           [--concurrent OP:SIZE[:ALGO[:DTYPE]]] [--timeline FILE.json [--timeline-max-events N] [--timeline-window B:E]]
           [--timing-only | --no-check]
           [--stats FILE.json [--no-wall-time]] [--wall-limit SECONDS] [--stall-limit-us US] [--max-host-gib G] [--quiet]
  simulates a workload on one chip and prints a report (a server / cluster preset runs with trnsim collective or
  trnsim train)
  defaults: --preset trn2 --workload gemm --m 1024 --k 1024 --n 1024 --dtype bf16 --seed 1
  --platform runs the GEMM on every chosen full chip of a server or cluster preset at once (SPMD; chip c's operands
  from seed S + c x 0x9e3779b97f4a7c15), checks every chip's result and reports each chip and the platform;
  --concurrent runs a collective (e.g. allreduce:256MiB:ring) on every chip at the same time, on the chips' own DMA
  queues and Vector Engines beside the GEMM, checked element by element
  --a-layout mk / --b-layout nk store A as M x K / B as N x K (default A^T and B, contraction-major): each tile is
  loaded as stored and turned on the Vector Engine; --c-dtype DTYPE stores C in the input dtype, cast out of PSUM by
  the Scalar Engine
  --workload program runs the instruction streams of a program file (docs/program_format.md)
  --fault injects a fault (see tests/robustness), e.g. hbm.channel3:disable,policy=remap  core0.dma2:error,after=10
  --wave traces core 0's RTL engine (--wave-cores picks others: one file each, tens of MB and a slower run per core)
  --wall-limit / --stall-limit-us stop a run after that much wall time / simulated time without progress
  --timing-only (= --set sim.functional=false) stores and computes no data: the same transactions, timing and
  statistics, no result check
  --no-wall-time leaves wall-clock times out of --stats (byte-identical files for the same config and seed)
  --max-host-gib: the host memory a run may take (default: what the host has available); a run estimated above it
  is refused before it starts. Numbers are decimal (010 is ten)
)";

const char* EXIT_STATUS =
    "exit status: 0 pass, 1 error or failed check, 2 usage error, 3 simulation error (deadlock, watchdog, bus error)\n";

const app::option_set RUN_OPTIONS = {
    {"preset", "config", "set", "workload", "m", "k", "n", "dtype", "seed", "stats", "wall-limit", "config-dir",
     "timeline", "timeline-max-events", "timeline-window", "vcd", "wave", "wave-cores", "fault", "program",
     "stall-limit-us", "seq", "max-host-gib", "platform", "chips", "concurrent",
     "hidden", "heads", "ffn", "rows", "cols", "step", "lr", "norm", "a-layout", "b-layout", "c-dtype"},
    {"no-check", "quiet", "timeline-noc", "no-wall-time", "forward-only", "no-causal", "timing-only"},
    {"set", "fault"}};

// The options only the gemm workload reads (its observers).
const std::initializer_list<const char*> GEMM_OBSERVER_OPTIONS = {"timeline", "timeline-max-events", "timeline-window",
                                                                  "timeline-noc", "vcd", "wave", "wave-cores"};

platform::platform_config load_cfg(const app::args& a) {
    std::string dir = a.config_dir();
    if (a.has("preset") && a.has("config")) throw app::usage_error("give --preset or --config, not both");
    std::string what = a.has("config") ? a.str("config", "") : a.str("preset", "trn2");
    // --config names a file even without a directory or a .json suffix.
    if (a.has("config") && what.find('/') == std::string::npos) what = "./" + what;
    if (a.has("timing-only")) a.refuse({"seed"}, "applies to real data, not --timing-only");
    const std::vector<std::string> sets = app::config_overrides(a);
    auto cfg = platform::load_platform(what, sets, a.list("fault"), dir);
    app::require_single_chip(cfg, (a.has("config") ? "--config " : "--preset ") + what, "trnsim run",
                             (a.has("config") ? "--config " : "--platform ") + what);
    return cfg;
}

int cmd_program(const app::args& a, const platform::platform_config& cfg) {
    a.refuse(GEMM_OBSERVER_OPTIONS, "applies to --workload gemm, not program");
    if (!a.has("program")) throw app::usage_error("--workload program needs --program FILE.json");
    std::vector<std::string> gemm_and_transformer = {"m", "k", "n", "dtype", "seed"};
    gemm_and_transformer.insert(gemm_and_transformer.end(), app::TRANSFORMER_OPTIONS.begin(), app::TRANSFORMER_OPTIONS.end());
    for (const std::string& k : gemm_and_transformer)
        if (a.has(k)) throw app::usage_error("--" + k + " does not apply to --workload program");
    auto p = tb::load_program(a.str("program", ""), cfg.chip);
    auto r = tb::run_program(cfg, p, app::sim_options_from(a), !a.has("no-check"));
    std::cout << app::format_program_report(cfg, p, r);
    app::write_stats(a, app::program_result_json(cfg, p, r));
    return r.checked && !r.pass ? 1 : 0;
}

int cmd_list(const app::args& a) {
    a.no_positional();
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
    a.no_positional();
    if (a.has("platform")) return app::cmd_run_platform(a);
    a.refuse({"chips", "concurrent"}, "applies to --platform (a GEMM on chips of a server or cluster)");
    std::string workload = a.str("workload", "gemm");
    if (workload != "gemm" && workload != "program" && !app::is_transformer_workload(workload))
        throw app::usage_error("unknown workload '" + workload + "' (trnsim list shows the workloads)");
    if (a.has("stats")) app::check_writable("--stats", a.str("stats", ""));
    else a.refuse({"no-wall-time"}, "applies to --stats FILE");
    tb::sim_options so = app::sim_options_from(a);
    auto cfg = load_cfg(a);
    app::check_distinct_files(a, &cfg);
    if (workload == "program") return cmd_program(a, cfg);
    if (app::is_transformer_workload(workload)) {
        a.refuse(GEMM_OBSERVER_OPTIONS, "applies to --workload gemm, not " + workload);
        return app::cmd_transformer(a, cfg, workload, so);
    }
    if (a.has("program")) throw app::usage_error("--program applies to --workload program");
    for (const std::string& k : app::TRANSFORMER_OPTIONS)
        if (a.has(k)) throw app::usage_error("--" + k + " applies to the transformer workloads, not gemm");
    const tb::gemm_spec g = app::gemm_spec_from(a, cfg);
    app::check_gemm_host_memory(a, cfg, g, 1);
    tb::gemm_options opt;
    opt.check = !a.has("no-check");
    opt.sim = so;
    app::observers obs(a, cfg);
    obs.hook(opt);
    auto r = tb::run_gemm(cfg, g, opt);
    obs.warnings(std::cout);
    std::cout << app::format_gemm_report(cfg, r);
    app::write_stats(a, app::gemm_result_json(cfg, r));
    obs.report(std::cout);
    return r.checked && !r.pass ? 1 : 0;
}

// trnsim plot KIND ...: hands over to the plotting script (matplotlib) with the same arguments (its own --help).
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

// One subcommand: `trnsim help NAME` and `trnsim NAME --help` print its usage; the handler gets its parsed options.
// A pass-through command (plot) gets argv instead and answers --help itself.
struct command {
    const char* name;
    const char* summary;
    std::string usage;
    app::option_set options;
    std::function<int(const app::args&)> run;
    std::function<int(int, char**)> pass_through;
};

const std::vector<command>& commands() {
    static const std::vector<command> table = {
        {"run", "simulate a workload on one chip and print a report", std::string(RUN_USAGE) + app::TRANSFORMER_USAGE + EXIT_STATUS,
         RUN_OPTIONS, cmd_run, nullptr},
        {"collective", "run a collective (allreduce, ...) on a server / cluster platform",
         app::COLLECTIVE_USAGE, app::COLLECTIVE_OPTIONS, app::cmd_collective, nullptr},
        {"train", "one training step of a model under a dp / tp / pp plan on a server or cluster",
         app::TRAIN_USAGE, app::TRAIN_OPTIONS, app::cmd_train, nullptr},
        {"sweep", "run a design-space sweep (parallel processes, Slurm or GNU parallel), collect its results",
         app::SWEEP_USAGE, app::SWEEP_OPTIONS, app::cmd_sweep, nullptr},
        {"plot", "roofline | pareto | utilisation plots (PNG, SVG) of runs, sweeps and timelines",
         "trnsim plot roofline|pareto|utilisation ... (trnsim plot --help: apps/trnsim_plot.py's options)\n", {},
         nullptr, cmd_plot},
        {"list", "list presets, workloads, models, fault targets", "trnsim list [--config-dir DIR]\n",
         {{"config-dir"}, {}, {}}, cmd_list, nullptr},
        {"hbm", "drive the HBM DRAM model from a trace or a synthetic pattern", app::HBM_USAGE, app::HBM_OPTIONS,
         app::cmd_hbm, nullptr},
        {"cosim", "co-verify the RTL matrix engine against the TLM model, bit and cycle exact",
         app::COSIM_USAGE, {app::COSIM_OPTIONS, {}, {}}, app::cmd_cosim, nullptr},
    };
    return table;
}

const command* find_command(const std::string& name) {
    for (const auto& c : commands())
        if (name == c.name) return &c;
    return nullptr;
}

std::string command_list() {
    std::string s = "usage: trnsim <command> [options]\n\ncommands:\n";
    for (const auto& c : commands()) s += app::fmt("  %-11s %s\n", c.name, c.summary);
    s += "  help        this list; trnsim help COMMAND (or trnsim COMMAND --help): that command's options\n";
    return s + EXIT_STATUS;
}

// trnsim help [COMMAND]
int cmd_help(int argc, char** argv) {
    if (argc > 3) throw app::usage_error(std::string("unexpected argument '") + argv[3] + "'");
    if (argc < 3) {
        std::cout << command_list();
        return 0;
    }
    const command* c = find_command(argv[2]);
    if (!c) throw app::usage_error(std::string("unknown command '") + argv[2] + "' (trnsim help lists them)");
    if (c->pass_through) {
        char help[] = "--help";
        char* av[] = {argv[0], argv[2], help, nullptr};
        return c->pass_through(3, av);
    }
    std::cout << c->usage;
    return 0;
}

} // namespace

static int run_command(int argc, char** argv) {
    std::string cmd = argc > 1 ? argv[1] : "help";
    try {
        if (argc < 2) {
            std::cerr << command_list();
            return 2;
        }
        if (cmd == "help" || cmd == "--help" || cmd == "-h") return cmd_help(argc, argv);
        const command* c = find_command(cmd);
        if (!c) {
            std::cerr << "trnsim: unknown command '" << cmd << "'\n" << command_list();
            return 2;
        }
        if (c->pass_through) return c->pass_through(argc, argv);
        if (app::wants_help(argc, argv, 2)) {
            std::cout << c->usage;
            return 0;
        }
        return c->run(app::args(argc, argv, 2, c->options));
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

#!/usr/bin/env python3
"""bench/speed.py [BUILD_DIR] [--repeats N] [--quick]: the simulation-speed targets of issue 22, each printed beside its
yardstick measured in the same run (machines here are noisy: ratios, best of N).

  1. GEMM 4096^3 BF16 on trn2, --timing-only: simulation wall (target <= 0.15 s), beside the previous figure recorded
     in docs/PERFORMANCE.md and the closed-form bounds of the simulated time.
  2. One NeuronCore, 1024^3 BF16, --timing-only: simulation wall (target <= 4 ms).
  3. Functional 2048^3 and 4096^3 BF16 (bit-exact check included): whole process and simulation alone, against a
     2-thread OpenBLAS FP32 SGEMM of the same size (build/blas_gemm; targets <= 6x and <= 3x).
  4. The detailed HBM model in a full-chip GEMM (trn2-dram, 2048^3 BF16 timing-only) against the simple one (<= 3x).
--quick drops the functional 4096^3 GEMM. Needs build/apps/trnsim (and build/blas_gemm for item 3: OpenBLAS)."""
import json, os, subprocess, sys, tempfile, time

args = [a for a in sys.argv[1:] if not a.startswith("--")]
build = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), "..", "build"))
repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 3
if "--repeats" in sys.argv: args = [a for a in args if a != str(repeats)]
quick = "--quick" in sys.argv
trnsim, blas = os.path.join(build, "apps", "trnsim"), os.path.join(build, "blas_gemm")
if not os.access(trnsim, os.X_OK):
    sys.exit("speed.py: %s not built (cmake --build %s --target trnsim)" % (trnsim, build))
PREVIOUS_4096_TIMING_S = 1.08  # docs/PERFORMANCE.md, "Simulation speed (issue 8)", 2026-12-03, idle machine
tmp = tempfile.mkdtemp(prefix="trnsim-speed-")

def run(*opts):
    """Best of `repeats` runs: (whole-process wall s, simulation wall s, result dict)."""
    best = None
    for _ in range(repeats):
        stats = os.path.join(tmp, "s.json")
        t0 = time.perf_counter()
        subprocess.run([trnsim, "run", "--quiet", "--stats", stats, *opts], check=True, stdout=subprocess.DEVNULL)
        whole = time.perf_counter() - t0
        r = json.load(open(stats))["result"]
        if best is None or r["wall_s"] < best[1]: best = (whole, r["wall_s"], r)
    return best

def sgemm(n):
    if not os.access(blas, os.X_OK): return None
    out = subprocess.run([blas, str(n), str(repeats)], check=True, capture_output=True, text=True).stdout
    return float(out.split("best_s=")[1].split()[0])

rows = []
def row(what, value, target, yardstick, note=""):
    rows.append((what, value, target, yardstick, note))
    print("%-46s %-22s %-16s %-40s %s" % (what, value, target, yardstick, note), flush=True)

print("machine: %d cores; best of %d runs each; build %s" % (os.cpu_count(), repeats, build))
print("%-46s %-22s %-16s %-40s %s" % ("figure", "measured", "target", "yardstick (same run)", ""))
_, sim, r = run("--m", "4096", "--k", "4096", "--n", "4096", "--dtype", "bf16", "--timing-only")
row("4096^3 BF16 trn2 timing-only, simulation", "%.3f s" % sim, "<= 0.15 s",
    "previous %.2f s: %.2fx faster" % (PREVIOUS_4096_TIMING_S, PREVIOUS_4096_TIMING_S / sim),
    "simulated %.3f us; bounds: compute %.1f us, HBM %.1f us; %.2e simulated s per wall s" %
    (r["sim_ns"] / 1e3, r["min_time_compute_ns"] / 1e3, r["min_time_hbm_ns"] / 1e3, r["sim_ns"] * 1e-9 / sim))
_, sim, r = run("--m", "1024", "--k", "1024", "--n", "1024", "--dtype", "bf16", "--timing-only", "--set", "chip.cores=1")
row("1024^3 BF16 one core timing-only, simulation", "%.2f ms" % (sim * 1e3), "<= 4 ms",
    "target ratio %.1fx" % (sim / 0.004), "simulated %.3f us (compute bound %.1f us)" % (r["sim_ns"] / 1e3, r["min_time_compute_ns"] / 1e3))
for n in ([2048] if quick else [2048, 4096]):
    blas_s = sgemm(n)
    whole, sim, r = run("--m", str(n), "--k", str(n), "--n", str(n), "--dtype", "bf16")
    assert r["pass"], "the functional %d^3 GEMM did not pass its check" % n
    if blas_s:
        row("%d^3 BF16 functional, whole process" % n, "%.2f s = %.1fx BLAS" % (whole, whole / blas_s), "<= 6x",
            "OpenBLAS SGEMM 2 threads %.3f s" % blas_s,
            "operands %.2f s, check %.2f s" % (r["operands_wall_s"], r["check_wall_s"]))
        row("%d^3 BF16 functional, simulation" % n, "%.2f s = %.1fx BLAS" % (sim, sim / blas_s), "<= 3x",
            "OpenBLAS SGEMM 2 threads %.3f s" % blas_s, "PASS bit exact")
    else:
        row("%d^3 BF16 functional" % n, "whole %.2f s, sim %.2f s" % (whole, sim), "<= 6x / 3x BLAS",
            "unavailable: build/blas_gemm not built (OpenBLAS)")
_, simple, _ = run("--m", "2048", "--k", "2048", "--n", "2048", "--dtype", "bf16", "--timing-only")
_, dram, r = run("--preset", "trn2-dram", "--m", "2048", "--k", "2048", "--n", "2048", "--dtype", "bf16", "--timing-only")
row("2048^3 BF16 timing-only, dram / simple HBM", "%.2fx" % (dram / simple), "<= 3x",
    "simple model %.3f s, dram %.3f s" % (simple, dram), "simulated %.3f us with the dram model" % (r["sim_ns"] / 1e3))

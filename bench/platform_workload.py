#!/usr/bin/env python3
"""bench/platform_workload.py [BUILD_DIR] [--platform NAME] [--size N] [--concurrent OP:SIZE[:ALGO]]: the issue-40
speed figure of compute and communication on the same full chips: `trnsim run --platform` with an N^3 BF16 GEMM on
every chip and a concurrent collective, timing only (default trn2-server-16, 4096^3, allreduce:256MiB:ring; target
< 60 s wall). The command also runs the GEMM alone and the collective alone (in forked children, two at a time), so
its wall time covers three simulations; the yardsticks printed beside it are measured in the same run: the GEMM on one
chip (trnsim run --preset) times the chips, and the collective alone on full chips (trnsim collective)."""
import json, os, resource, subprocess, sys, tempfile, time

from bench_args import command_line

o, trnsim = command_line(__file__, {"--platform": "trn2-server-16", "--size": "4096",
                                    "--concurrent": "allreduce:256MiB:ring"})
platform, size, conc = o["--platform"], o["--size"], o["--concurrent"]
tmp = tempfile.mkdtemp(prefix="trnsim-platform-")

def timed(args, stats):
    t0 = time.perf_counter()
    subprocess.run([trnsim] + args + ["--timing-only", "--quiet", "--stats", stats], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0

G = ["--m", size, "--k", size, "--n", size, "--dtype", "bf16"]
both = os.path.join(tmp, "both.json")
wall = timed(["run", "--platform", platform, "--set", "chips.model=full"] + G + ["--concurrent", conc], both)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
one = os.path.join(tmp, "one.json")
wall_one = timed(["run", "--preset", "trn2"] + G, one)
op, nbytes = conc.split(":")[0], conc.split(":")[1]
algo = conc.split(":")[2] if conc.count(":") >= 2 else "ring"
coll = os.path.join(tmp, "coll.json")
wall_coll = timed(["collective", "--platform", platform, "--set", "chips.model=full", "--op", op, "--bytes", nbytes,
                   "--algo", algo], coll)
b = json.load(open(both)); o = json.load(open(one)); c = json.load(open(coll))
chips = len(b["chips"])
i = b["interference"]
print("machine: %d cores; %s, %d full chips: %s^3 BF16 GEMM on each + %s, timing-only" % (os.cpu_count(), platform,
      chips, size, conc))
print("run --platform --concurrent: wall %.1f s (target < 60 s; three simulations: alone x2 in parallel, then both), "
      "peak RSS %.2f GiB" % (wall, rss / 2**20))
print("  simulated: GEMM %.1f us alone -> %.1f us together (x%.3f); collective %.1f us alone -> %.1f us (x%.3f)"
      % (i["gemm_alone"]["gemm_ns"] / 1e3, i["together"]["gemm_ns"] / 1e3, i["gemm_slowdown"],
         i["collective_alone"]["collective_ns"] / 1e3, i["together"]["collective_ns"] / 1e3, i["collective_slowdown"]))
print("yardsticks in the same run: one chip's GEMM (run --preset trn2) wall %.2f s (x %d chips = %.1f s), simulated %.1f us;"
      % (wall_one, chips, wall_one * chips, o["result"]["sim_ns"] / 1e3))
print("  the collective alone on full chips (trnsim collective) wall %.1f s, simulated %.1f us"
      % (wall_coll, c["result"]["sim_ns"] / 1e3))

#!/usr/bin/env python3
"""bench/full_chip_collective.py [BUILD_DIR] [--bytes SIZE] [--platform NAME] [--algo A]: the issue-21 speed and
memory figure of a collective on full chips: a timing-only all-reduce on every chip of a server made of the modelled
chip (default trn2-server-16, 1 GiB FP32, ring; target < 60 s wall, < 8 GiB peak RSS), printed beside the same
all-reduce on light chips measured in the same run (the simulated-time yardstick, and the light model's own wall)."""
import json, os, resource, subprocess, sys, tempfile, time

from bench_args import command_line

o, trnsim = command_line(__file__, {"--bytes": "1G", "--platform": "trn2-server-16", "--algo": "ring"})
size, platform, algo = o["--bytes"], o["--platform"], o["--algo"]
tmp = tempfile.mkdtemp(prefix="trnsim-fullcc-")

def run(model):
    stats = os.path.join(tmp, model + ".json")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run([trnsim, "collective", "--platform", platform, "--op", "allreduce", "--algo", algo, "--bytes", size,
                    "--timing-only", "--quiet", "--stats", stats, "--set", "chips.model=" + model],
                   check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    # ru_maxrss of children is the largest child so far: meaningful for the first (largest) run only.
    rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, rss_kib if rss_kib > before else None, json.load(open(stats))["result"]

print("machine: %d cores; %s, allreduce %s FP32 (%s), timing-only" % (os.cpu_count(), platform, size, algo))
wall_f, rss_f, rf = run("full")
wall_l, _, rl = run("light")
print("full chips : wall %.1f s (target < 60 s), peak RSS %.2f GiB (target < 8 GiB), simulated %.1f us, busbw %.1f GB/s"
      % (wall_f, (rss_f or 0) / 2**20, rf["sim_ns"] / 1e3, rf["busbw_gbps"]))
print("light chips: wall %.2f s, simulated %.1f us, busbw %.1f GB/s" % (wall_l, rl["sim_ns"] / 1e3, rl["busbw_gbps"]))
print("full / light simulated time: %.3f; full-chip simulation speed %.2e simulated s per wall s"
      % (rf["sim_ns"] / rl["sim_ns"], rf["sim_ns"] * 1e-9 / wall_f))
print("lowered: %d DMA, %d Vector Engine instructions, %d semaphore-register signals"
      % (rf["lowered_dma"], rf["lowered_vector"], rf["semaphore_signals"]))

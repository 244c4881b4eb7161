#!/usr/bin/env python3
"""bench/whole_step.py [BUILD_DIR] [--platform NAME] [--tp T] [--layers L]: the issue-42 speed figure of a training
step simulated whole on full chips: `trnsim train --whole` with a decoder of llama-7b's shape (hidden 4096, 32 heads,
ffn 11008, seq 4096; L layers, default 1), one micro-batch, tensor parallelism T over the platform's chips (default
ring-8, tp 8), timing-only (target: < 300 s wall for the whole step of one layer, forward and backward; the step
here also runs the embedding, the LM head and Adam). Yardsticks measured in the same run: the composed step's
simulations of every distinct operation (host seconds summed) and the simulated times of both steps."""
import json, os, resource, subprocess, sys, tempfile, time

from bench_args import command_line

o, trnsim = command_line(__file__, {"--platform": "ring-8", "--tp": "8", "--layers": "1"})
tmp = tempfile.mkdtemp(prefix="trnsim-whole-")
model = os.path.join(tmp, "model.json")
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "configs", "models", "llama-7b-2layers.json")) as f:
    m = json.loads("\n".join(l for l in f.read().splitlines() if not l.lstrip().startswith("//")))
m.update(name="llama-7b-%slayer" % o["--layers"], layers=int(o["--layers"]), global_batch=1)
json.dump(m, open(model, "w"))
stats = os.path.join(tmp, "step.json")
t0 = time.perf_counter()
subprocess.run([trnsim, "train", "--platform", o["--platform"], "--model", model, "--tp", o["--tp"], "--dp", "1",
                "--whole", "--quiet", "--stats", stats, "--set", "chips.model=full"], check=True, stdout=subprocess.DEVNULL)
wall = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
r = json.load(open(stats))
w = r["whole"]
print("machine: %d cores; %s, tp %s, %s llama-7b-shaped layer(s), seq 4096, one micro-batch, timing-only"
      % (os.cpu_count(), o["--platform"], o["--tp"], o["--layers"]))
print("train --whole: wall %.1f s for the whole command (target < 300 s); the whole step %.1f s of simulation + %.1f s "
      "building, peak RSS %.2f GiB" % (wall, w["wall_s"], w["setup_wall_s"], rss / 2**20))
print("  whole step %.3f ms simulated, %d operations, %d instructions; composed step %.3f ms (%+.1f %%)"
      % (w["step_ns"] / 1e6, w["operations"], w["instructions"], r["step_ns"] / 1e6,
         100 * (r["step_ns"] / w["step_ns"] - 1)))
print("yardstick in the same run: the composed step's %d simulations took %.1f s of host time (%.2f ms simulated per "
      "host second; the whole step %.2f)" % (r["simulations"], r["sim_wall_s"],
      r["step_ns"] / 1e6 / max(r["sim_wall_s"], 1e-9), w["step_ns"] / 1e6 / max(w["wall_s"], 1e-9)))

#!/usr/bin/env bash
# bench/train_plans.sh [BUILD_DIR] [MODEL] [PLATFORM] [PLAN ...]: one training step per plan ("DP TP PP"), a
# markdown table of step time, tokens/s, MFU, breakdown, HBM estimate, simulations and the host's wall time and peak
# memory (issue 6, docs/PERFORMANCE.md "Training steps"). Defaults: build, llama-7b, trn2-ultraserver-64 and the
# 64-chip plans 8x8x1, 16x4x1, 32x2x1, 4x8x2, 2x8x4.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
model=${2:-llama-7b}
platform=${3:-trn2-ultraserver-64}
shift $(( $# < 3 ? $# : 3 ))
plans=("$@")
[ ${#plans[@]} -gt 0 ] || plans=("8 8 1" "16 4 1" "32 2 1" "4 8 2" "2 8 4")
trnsim=$build/apps/trnsim
out=$build/bench_results/train
mkdir -p "$out"
[ -x "$trnsim" ] || { echo "train_plans: $trnsim not built"; exit 2; }
echo "| plan dp x tp x pp | step | tokens/s | MFU | compute | memory-bound | tp comm | dp exposed | bubble | Adam | HBM/chip (est.) | simulations | wall | peak RSS |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for plan in "${plans[@]}"; do
  set -- $plan
  tag=${model}_$1x$2x$3
  if ! /usr/bin/time -f "%e %M" -o "$out/$tag.time" "$trnsim" train --model "$model" --platform "$platform" \
       --dp "$1" --tp "$2" --pp "$3" --quiet --stats "$out/$tag.json" > "$out/$tag.log" 2>&1; then
    echo "| $1 x $2 x $3 | FAILED: $(tail -n 1 "$out/$tag.log") |"
    continue
  fi
  read -r wall rss < "$out/$tag.time"
  python3 - "$out/$tag.json" "$wall" "$rss" "$1 x $2 x $3" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); s = j["step_ns"]; b = j["breakdown_ns"]
pct = lambda k: "%.1f %%" % (100 * b[k] / s)
st = max(j["stages"], key=lambda x: x["state_bytes"] + x["activation_bytes"])
need = (st["state_bytes"] + st["activation_bytes"]) / 2**30
cap = j["hbm_capacity_bytes"] / 2**30
print("| %s | %.2f s | %.0f | %.1f %% | %s | %s | %s | %s | %s | %s | %.0f GiB%s | %d | %.1f s | %.0f MiB |" % (
    sys.argv[4], s * 1e-9, j["tokens_per_s"], 100 * j["mfu"], pct("compute"), pct("memory_bound"), pct("tp_comm"),
    pct("dp_comm_exposed"), pct("pipeline_bubble"), pct("optimizer"), need, "" if need <= cap else " (> %.0f)" % cap,
    j["simulations"], float(sys.argv[2]), float(sys.argv[3]) / 1024))
PY
done

#!/usr/bin/env bash
# bench/run_all.sh [BUILD_DIR] [--quick]: the one-command benchmark suite (issue 8). Per scenario it prints wall
# time, peak memory (RSS), simulated time per wall second and TLM transactions per wall second (where the run counts
# them), plus the host's optimised FP32 GEMM (OpenBLAS, bench/blas_gemm.cpp) on the same size in the same run and the
# ratio functional-simulation / BLAS. Scenarios whose command is not in this build are listed as unavailable, with
# the reason. --quick drops the 4096^3 functional GEMM and shortens the co-simulation. Results: BUILD_DIR/bench/*.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
quick=0; [ "${2:-}" = "--quick" ] && quick=1
trnsim=$build/apps/trnsim
out=$build/bench_results
mkdir -p "$out"
[ -x "$trnsim" ] || { echo "run_all: $trnsim not built (cmake --build $build)"; exit 2; }
[ -x /usr/bin/time ] || { echo "run_all: /usr/bin/time missing (apt-get install time)"; exit 2; }

printf "machine: %s, %s cores, %s\n" "$(uname -m)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf "%-34s %9s %9s %14s %14s  %s\n" scenario wall_s rss_MiB sim_us/wall_s tlm_txn/wall_s note

# run NAME STATS_JSON_OR_- COMMAND...: times the command, reads simulated ns and transactions from its --stats file.
run() {
  local name=$1 stats=$2; shift 2
  if ! /usr/bin/time -f "%e %M" -o "$out/$name.time" "$@" > "$out/$name.log" 2>&1; then
    printf "%-34s %9s %9s %14s %14s  %s\n" "$name" - - - - "FAILED: $(tail -n 1 "$out/$name.log")"
    return
  fi
  read -r wall rss < "$out/$name.time"
  local sim_ns=0 txn=0
  if [ "$stats" != - ] && [ -f "$stats" ]; then
    read -r sim_ns txn < <(python3 - "$stats" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = j.get("result", {})
sim = r.get("sim_ns", r.get("time_ns", 0)) or 0
st = j.get("stats", {})
def walk(d, pre=""):
    if isinstance(d, dict):
        for k, v in d.items(): yield from walk(v, pre + k + ".")
    elif isinstance(d, (int, float)): yield pre[:-1], d
# TLM transactions: every initiator's count of bursts / transactions issued.
txn = sum(v for k, v in walk(st) if k.endswith((".bursts", ".transactions", ".transfers")))
print(sim, int(txn))
PY
)
  fi
  sim_ns=${sim_ns:-0}; txn=${txn:-0}
  python3 - "$name" "$wall" "$rss" "$sim_ns" "$txn" "$(grep -m1 -E 'PASS|FAIL|mismatch' "$out/$name.log" | head -c 60)" <<'PY'
import sys
name, wall, rss, sim, txn, note = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
w = max(wall, 1e-3)
simr = "%.1f" % (sim / 1e3 / w) if sim else "-"
txr = "%.3g" % (txn / w) if txn else "-"
print("%-34s %9.2f %9.0f %14s %14s  %s" % (name, wall, rss / 1024, simr, txr, note.strip()))
PY
  eval "wall_$name=$wall"
}

unavailable() { printf "%-34s %9s %9s %14s %14s  %s\n" "$1" - - - - "unavailable: $2"; }

for n in 1024 4096; do
  run "gemm${n}_bf16_timing" "$out/gemm${n}_t.json" "$trnsim" run --preset trn2 --m $n --k $n --n $n --dtype bf16 \
      --set sim.functional=false --quiet --stats "$out/gemm${n}_t.json"
  if [ $n = 4096 ] && [ $quick = 1 ]; then unavailable gemm4096_bf16_functional "--quick"; continue; fi
  run "gemm${n}_bf16_functional" "$out/gemm${n}_f.json" "$trnsim" run --preset trn2 --m $n --k $n --n $n --dtype bf16 \
      --quiet --stats "$out/gemm${n}_f.json"
done

if [ -x "$build/blas_gemm" ]; then
  run blas_sgemm4096 - "$build/blas_gemm" 4096 3
  blas=$(grep -o 'best_s=[0-9.]*' "$out/blas_sgemm4096.log" | cut -d= -f2)
  # The ratio compares the simulation's own wall time (the report's "wall time ... s simulation" line); the whole
  # process also generates the operands and runs the bit-exact golden GEMM and is shown beside it.
  simwall=$(grep -o 'wall time *[0-9.]* s simulation' "$out/gemm4096_bf16_functional.log" 2>/dev/null | grep -o '[0-9.]*')
  if [ -n "${blas:-}" ] && [ -n "${simwall:-}" ]; then
    python3 -c "import sys; f,b,w=float(sys.argv[1]),float(sys.argv[2]),float(sys.argv[3]); print('ratio: functional 4096^3 BF16 simulation / OpenBLAS FP32 4096^3 = %.2f s / %.2f s = %.2fx (target <= 3x; %s; whole process incl. operand generation and golden check %.2f s)' % (f,b,f/b,'$(grep -o 'threads=[0-9]*' "$out/blas_sgemm4096.log")',w))" "$simwall" "$blas" "$wall_gemm4096_bf16_functional"
  fi
else
  unavailable blas_sgemm4096 "no BLAS found at configure time (libopenblas-dev)"
fi

if [ -x "$build/hbm_bench" ] || "$trnsim" hbm --help >/dev/null 2>&1; then
  run hbm3_random_1M - "$trnsim" hbm --memspec hbm3 --pattern random --requests 1000000 --seed 1
  grep -m2 -iE "requests/s|req/s" "$out/hbm3_random_1M.log" | sed 's/^/    /'
fi

if "$trnsim" collective --help >/dev/null 2>&1; then
  run allreduce_64chip_1GiB_timing "$out/ar64.json" "$trnsim" collective --platform trn2-ultraserver-64 --op allreduce \
      --bytes 1GiB --algo ring --timing-only --stats "$out/ar64.json"
else
  unavailable allreduce_64chip_1GiB_timing "this build has no 'trnsim collective'"
fi

if "$trnsim" cosim --help >/dev/null 2>&1 && "$trnsim" list 2>/dev/null | grep -q "rtl (.*16x16"; then
  tiles=10000; [ $quick = 1 ] && tiles=1000
  run cosim_16x16_bf16_${tiles}tiles - "$trnsim" cosim --rows 16 --cols 16 --dtype bf16 --tiles $tiles --seed 1
else
  unavailable cosim_16x16_bf16 "this build has no RTL co-simulation at 16x16 (-DTRNSIM_RTL=ON)"
fi
echo "logs and stats: $out"

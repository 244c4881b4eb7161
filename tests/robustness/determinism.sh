#!/bin/sh
# determinism.sh TRNSIM OUTDIR: the same config and seed give byte-identical --stats files (wall-clock times left
# out with --no-wall-time) and results, for a GEMM, a GEMM with faults and checksums, and a program; and the number
# of host compute threads (sim.compute_threads 0 vs 2) changes neither results nor statistics.
set -e
trnsim=$1; out=$2
mkdir -p "$out"
run() { name=$1; shift; "$trnsim" run --quiet --no-wall-time "$@" --stats "$out/$name.json" >/dev/null; }
same() {
  if ! cmp -s "$out/$1.json" "$out/$2.json"; then
    echo "determinism: $1 and $2 differ"; diff "$out/$1.json" "$out/$2.json" | head -20; exit 1
  fi
  echo "identical: $1 $2 ($(wc -c < "$out/$1.json") bytes)"
}
g="--m 300 --k 700 --n 500 --dtype bf16 --seed 11 --preset trn1"
run gemm_a $g; run gemm_b $g; same gemm_a gemm_b
f="--m 200 --k 256 --n 300 --dtype fp8_e4m3 --seed 5 --fault hbm.channel1:disable,policy=remap --fault hbm:slow,latency_ns=300,after=10,count=50 --set chip.core.dma.checksum=true"
run fault_a $f; run fault_b $f; same fault_a fault_b
p="--workload program --program programs/matmul_2x2.json"
run prog_a $p; run prog_b $p; same prog_a prog_b
# Host threads: config differs (sim.compute_threads), so compare everything but the echoed config.
run threads0 $g --set sim.compute_threads=0
run threads2 $g --set sim.compute_threads=2
python3 - "$out/threads0.json" "$out/threads2.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["result"]["pass"] is True
for k in ("result", "stats", "workload"):
    sa, sb = json.dumps(a[k], sort_keys=True), json.dumps(b[k], sort_keys=True)
    assert sa == sb, "compute_threads 0 vs 2: '%s' differs" % k
print("identical: compute_threads 0 vs 2 (result, %d statistics, C digest %s)" % (len(a["stats"]), a["result"]["c_digest"]))
PY

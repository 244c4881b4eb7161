#!/bin/sh
# report_honesty.sh TRNSIM OUTDIR: the reports say what is true (issue 31): the whole run's wall time and its parts;
# the preset's published BF16 figure only on BF16 runs of the unmodified preset; what a timing-only run does; no
# SystemC info line in a --vcd report; HBM latencies "none" for a direction without requests; multi-chip presets
# refused by run; collectives whose real data would not fit run timing only and say so.
set -u
trnsim=$1; out=$2
mkdir -p "$out"
fail=0
has()  { grep -Eq -- "$2" "$1" || { echo "FAIL: $1 lacks /$2/"; sed 's/^/  | /' "$1"; fail=1; }; }
hasnt() { ! grep -Eq -- "$2" "$1" || { echo "FAIL: $1 has /$2/"; sed 's/^/  | /' "$1"; fail=1; }; }
run() { f=$out/$1; shift; "$trnsim" "$@" > "$f" 2>&1; echo "$? $*" > "$f.rc"; }
code() { read -r c _ < "$out/$1.rc"; [ "$c" = "$2" ] || { echo "FAIL: $1 exit $c, expected $2"; fail=1; }; }
small="--m 64 --k 64 --n 64 --quiet"

run bf16 run $small
code bf16 0
has "$out/bf16" "published trn2 BF16 figure 667 TFLOP/s"
has "$out/bf16" "wall time +[0-9.]+ s in all: set-up [0-9.]+ s, operands [0-9.]+ s, simulation [0-9.]+ s .*check [0-9.]+ s"
run fp8 run $small --dtype fp8_e4m3
code fp8 0
hasnt "$out/fp8" "published"
run modified run $small --set chip.core.te.rows=64
code modified 0
hasnt "$out/modified" "published"
run timing run $small --set sim.functional=false
code timing 0
has "$out/timing" "published trn2 BF16"   # sim.* changes how it is simulated, not the design
has "$out/timing" "timing-only run .*keep their addresses and sizes.*no operand is generated and no value is stored"
run vcd run $small --vcd "$out/w.vcd"
code vcd 0
hasnt "$out/vcd" "I703|tracing timescale"
run hbm_reads hbm --pattern random --requests 2000 --mix 1:0
code hbm_reads 0
has "$out/hbm_reads" "^write latency none"
has "$out/hbm_reads" "^read latency  avg [0-9.]+ ns"
run hbm_writes hbm --pattern random --requests 2000 --mix 0:1
code hbm_writes 0
has "$out/hbm_writes" "^read latency  none"
run multichip run --preset trn2-server-16 $small
code multichip 2
has "$out/multichip" "--preset trn2-server-16: a platform of 16 chips; trnsim run simulates one chip: use trnsim collective"
run coll_big collective --op allreduce --algo torus --bytes 1GiB --quiet
code coll_big 0
has "$out/coll_big" "timing only: real data would need about 192.0 GiB, over --max-data-gib 4"
run coll_big_check collective --op allreduce --algo torus --bytes 1GiB --quiet --check
code coll_big_check 2
has "$out/coll_big_check" "--check on 1073741824 bytes on 64 chips needs about 256.0 GiB of real data"
run coll_small collective --platform ring-8 --op allreduce --bytes 64KiB --quiet --check
code coll_small 0
has "$out/coll_small" "real data"
has "$out/coll_small" "check +PASS"
[ $fail -eq 0 ] && echo "report honesty: ok"
exit $fail

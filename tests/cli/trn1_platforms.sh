#!/bin/sh
# trn1_platforms.sh TRNSIM: the trn1 platform presets (issue 23) behave as their parameters say.
#  - trn1.32xlarge and trn1n.32xlarge: 16 chips; an all-reduce checked element by element on each;
#  - a large ring all-reduce is link bound: trn1n (twice the NeuronLink bandwidth) is 1.5-2x faster than trn1;
#  - the 64-chip clusters are EFA bound: trn1n's twice the EFA bandwidth makes the hierarchical all-reduce 1.7-2x
#    faster, and trn2's cluster (200 Gbps per chip) is faster than both;
#  - a llama-7b training step is set up and fits on the trn1 cluster (32 GiB per chip).
set -e
trnsim=$1
time_us() { "$trnsim" collective --platform "$1" --op allreduce --bytes "$2" --timing-only --algo "$3" | sed -n 's/^  simulated time  *\([0-9.]*\) us$/\1/p'; }
for p in trn1-32xl trn1n-32xl; do
  "$trnsim" collective --platform $p --op allreduce --bytes 1MiB --check --algo torus | grep -q "PASS: every element of 16 chips" ||
    { echo "trn1_platforms.sh: $p all-reduce not checked on 16 chips"; exit 1; }
done
a=$(time_us trn1-32xl 64MiB ring); b=$(time_us trn1n-32xl 64MiB ring)
c=$(time_us trn1-cluster-4x16 64MiB hierarchical); d=$(time_us trn1n-cluster-4x16 64MiB hierarchical)
e=$(time_us cluster-4x16 64MiB hierarchical)
python3 - "$a" "$b" "$c" "$d" "$e" <<'PY'
import sys
a, b, c, d, e = map(float, sys.argv[1:])
print("ring 64 MiB: trn1 %.1f us, trn1n %.1f us (%.2fx); clusters: trn1 %.1f, trn1n %.1f (%.2fx), trn2 %.1f us" % (a, b, a / b, c, d, c / d, e))
assert 1.5 <= a / b <= 2.0, "trn1n's NeuronLink should make the ring 1.5-2x faster"
assert 1.7 <= c / d <= 2.0, "trn1n's EFA should make the cluster all-reduce 1.7-2x faster"
assert e < d < c, "trn2's 200 Gbps per chip should beat both trn1 clusters"
PY
"$trnsim" train --platform trn1-cluster-4x16 --model llama-7b --dp 8 --tp 8 --pp 1 | grep -qE "HBM stage 0 .* of 32 GiB per chip" ||
  { echo "trn1_platforms.sh: the llama-7b step on trn1-cluster-4x16 does not report 32 GiB chips"; exit 1; }
echo "trn1_platforms.sh: ok"

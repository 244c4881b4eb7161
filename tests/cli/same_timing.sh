#!/bin/sh
# same_timing.sh TRNSIM OUTDIR ARGS...: a functional run and a timing-only run (--timing-only, which is
# sim.functional=false: no bytes stored, copied or computed) of the same workload must give identical simulated time
# and identical statistics, every one of them: the timing-only run is the fast path of the same model.
set -e
trnsim=$1; out=$2; shift 2
"$trnsim" run --quiet "$@" --stats "$out/functional.json" >/dev/null
"$trnsim" run --quiet "$@" --timing-only --stats "$out/timing.json" >/dev/null
python3 - "$out/functional.json" "$out/timing.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["result"]["pass"] is True, "functional run did not pass"
assert a["result"]["sim_ns"] == b["result"]["sim_ns"], (a["result"]["sim_ns"], b["result"]["sim_ns"])
diff = [k for k in a["stats"] if a["stats"][k] != b["stats"].get(k)]
assert not diff and a["stats"].keys() == b["stats"].keys(), "stats differ: %s" % diff[:10]
print("identical: sim_ns %.3f, %d statistics" % (a["result"]["sim_ns"], len(a["stats"])))
PY

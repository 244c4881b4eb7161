#!/bin/sh
# observe.sh TRNSIM OUTDIR: trnsim run --timeline/--vcd/--stats write a valid trace-event JSON (bounded by
# --timeline-max-events), a VCD with $var definitions, and energy figures in the stats.
set -e
trnsim=$1; out=$2
"$trnsim" run --quiet --m 256 --k 256 --n 256 --timeline "$out/tl.json" --vcd "$out/w.vcd" --stats "$out/st.json" \
  | grep -E "timeline .* events|waveforms|energy .* J"
"$trnsim" run --quiet --m 256 --k 256 --n 256 --timeline "$out/tl_small.json" --timeline-max-events 500 \
  > "$out/small.txt"
grep -E "500 events, [0-9]+ dropped" "$out/small.txt"
# A truncated timeline is the report's first line, not only its last.
head -1 "$out/small.txt" | grep -E "^WARNING: timeline .*tl_small.json is truncated: [0-9]+ events over the --timeline-max-events budget of 500"
grep -q '^\$var wire *1 .* busy' "$out/w.vcd"
grep -q '^\$enddefinitions' "$out/w.vcd"
python3 - "$out/tl.json" "$out/tl_small.json" "$out/st.json" <<'PY'
import json, sys
full, small, st = (json.load(open(f)) for f in sys.argv[1:4])
xs = [e for e in full["traceEvents"] if e["ph"] == "X"]
end = max(e["ts"] + e["dur"] for e in xs)
sim_us = st["result"]["sim_ns"] / 1000
assert abs(end - sim_us) < 1e-3, (end, sim_us)
assert min(e["ts"] for e in xs) == 0
assert sum(1 for e in small["traceEvents"] if e["ph"] == "X") == 500
assert small["otherData"]["truncated"].startswith("yes: "), small["otherData"]
assert full["otherData"]["truncated"] == "no", full["otherData"]
r = st["result"]
assert abs(sum(st["energy_j"].values()) - r["energy_j"]) < 1e-9 * r["energy_j"] + 1e-15
print("timeline %d events to %.3f us, energy %.3g J" % (len(xs), end, r["energy_j"]))
PY

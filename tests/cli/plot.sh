#!/bin/sh
# plot.sh TRNSIM WORKDIR run|sweep: trnsim plot writes PNG and SVG for a roofline (run stats and sweep results), a
# Pareto front (sweep results) and per-engine utilisation (timeline).
set -e
trnsim=$1; work=$2; which=$3
rm -rf "$work"; mkdir -p "$work"; cd "$work"
check() {
  for f in "$@"; do
    case $f in
      *.png) test "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" || { echo "$f is not a PNG"; exit 1; } ;;
      *.svg) grep -q "<svg" "$f" || { echo "$f is not an SVG"; exit 1; } ;;
    esac
  done
}
if [ "$which" = run ]; then
  "$trnsim" run --quiet --m 256 --k 512 --n 384 --set sim.functional=false --stats st.json --timeline tl.json >/dev/null
  "$trnsim" plot roofline st.json -o roof.png -o roof.svg
  "$trnsim" plot utilisation tl.json -o util.png -o util.svg
  check roof.png roof.svg util.png util.svg
  # Without -o: KIND.png in the current directory, named on stdout.
  "$trnsim" plot utilisation tl.json | grep -qx "wrote utilisation.png"
  check utilisation.png
  echo "plots of a run: ok"
  exit 0
fi
cat > s.json <<'JSON'
{ "name": "plot", "set": { "sim.functional": false, "chip.cores": 2 }, "workload": { "m": 256, "k": 256, "n": 256 },
  "axes": [ { "name": "array", "values": [
              { "label": "64x64", "set": { "chip.core.te.rows": 64, "chip.core.te.cols": 64 } },
              { "label": "128x128", "set": { "chip.core.te.rows": 128, "chip.core.te.cols": 128 } } ] },
            { "key": "workload.dtype", "values": ["bf16", "fp8_e4m3"] } ] }
JSON
"$trnsim" sweep s.json --jobs 2 2>/dev/null >/dev/null
"$trnsim" plot roofline s.out/results.json --group array -o roof_sweep.png
"$trnsim" plot pareto s.out/results.json -o pareto.png -o pareto.svg
check roof_sweep.png pareto.png pareto.svg
"$trnsim" plot roofline s.out/results.json --group array | grep -qx "wrote roofline.png"
check roofline.png
echo "plots of a sweep: ok"

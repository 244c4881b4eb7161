#!/bin/sh
# sweep.sh TRNSIM WORKDIR: trnsim sweep end to end on a 2x2 grid: 4 rows with the right keys in CSV and JSON,
# resume skips finished points, failures are recorded with their error, --emit slurm / --collect.
set -e
trnsim=$1; work=$2
rm -rf "$work"; mkdir -p "$work"; cd "$work"
cat > grid.json <<'JSON'
{
  "name": "grid2x2",
  "preset": "trn2",
  "set": { "sim.functional": false, "chip.cores": 2 },
  "workload": { "m": 256, "k": 256, "n": 256 },
  "axes": [
    { "key": "chip.core.te.rows", "values": [64, 128] },
    { "key": "workload.dtype", "values": ["bf16", "fp8_e4m3"] }
  ]
}
JSON
"$trnsim" sweep grid.json --jobs 2 2>progress.txt
grep -q "4 points, 0 already done, 4 to run, 2 at a time" progress.txt
grep -q "4/4 points, 0 failed" progress.txt
python3 - <<'PY'
import csv, json
rows = list(csv.DictReader(open("grid.out/results.csv")))
assert len(rows) == 4, len(rows)
need = ["id", "status", "error", "preset", "chip.core.te.rows", "chip.cores", "sim.functional", "workload.dtype",
        "workload.m", "sim_ns", "achieved_tflops", "energy_j", "avg_power_w", "tflops_per_w", "energy.hbm", "pe_count"]
for k in need: assert k in rows[0], "missing column " + k
assert [(r["chip.core.te.rows"], r["workload.dtype"]) for r in rows] == \
    [("64", "bf16"), ("64", "fp8_e4m3"), ("128", "bf16"), ("128", "fp8_e4m3")]
assert all(r["status"] == "ok" and float(r["sim_ns"]) > 0 for r in rows)
doc = json.load(open("grid.out/results.json"))
assert doc["points"] == 4 and doc["ok"] == 4 and len(doc["rows"]) == 4
assert set(need) <= set(doc["rows"][0])
print("grid: 4 rows, %d columns" % len(rows[0]))
PY
# Resume: a finished point is not run again (its file stays byte for byte); a missing one is.
cp grid.out/points/p0000.json keep0.json
rm grid.out/points/p0002.json
"$trnsim" sweep grid.json --jobs 2 2>progress2.txt
grep -q "4 points, 3 already done, 1 to run" progress2.txt
cmp keep0.json grid.out/points/p0000.json
test -f grid.out/points/p0002.json
# Everything done: nothing runs.
"$trnsim" sweep grid.json 2>progress3.txt
grep -q "4 already done, 0 to run" progress3.txt
# Changing the sweep re-runs only the points whose inputs changed.
sed 's/"values": \[64, 128\]/"values": [64, 32]/' grid.json > grid2.json
cp -r grid.out changed.out
"$trnsim" sweep grid2.json --out changed.out 2>progress4.txt
grep -q "2 already done, 2 to run" progress4.txt
# Failures are recorded with their error, the other points still run, exit status 1.
cat > bad.json <<'JSON'
{ "name": "bad", "set": { "sim.functional": false, "chip.cores": 2 }, "workload": { "m": 128, "k": 128, "n": 128 },
  "axes": [ { "key": "chip.core.te.rows", "values": [64, 0] }, { "key": "chip.hbm.stacks", "values": [1, 2] } ] }
JSON
set +e; "$trnsim" sweep bad.json --jobs 2 >bad.txt 2>&1; rc=$?; set -e
test "$rc" -eq 1
grep -q "2 ok, 2 failed" bad.txt
python3 - <<'PY'
import json
rows = json.load(open("bad.out/results.json"))["rows"]
assert [r["status"] for r in rows] == ["ok", "ok", "failed", "failed"], [r["status"] for r in rows]
assert all("chip.core.te.rows: value 0 is out of range" in r["error"] for r in rows[2:])
print("failures recorded:", rows[2]["error"][:60])
PY
# Slurm / GNU parallel emission for the points not done, then collect.
rm grid.out/points/p0001.json grid.out/points/p0003.json
"$trnsim" sweep grid.json --emit slurm --max-parallel 2 --time 00:10:00 > emit.txt
grep -q "2 of 4 points to run" emit.txt
grep -q '^#SBATCH --array=1,3%2$' grid.out/slurm/sweep.sbatch
grep -q '^#SBATCH --time=00:10:00$' grid.out/slurm/sweep.sbatch
grep -q 'sweep --point "$SLURM_ARRAY_TASK_ID" --out' grid.out/slurm/sweep.sbatch
test "$(wc -l < grid.out/slurm/commands.txt)" -eq 2
# What goes into #SBATCH lines is checked (a newline in --partition used to add a command to the script).
for bad in "--partition=gpu$(printf '\n')echo pwned" "--time=abc" "--max-parallel=0"; do
  set +e; "$trnsim" sweep grid.json --emit slurm "$bad" > emit_bad.txt 2>&1; rc=$?; set -e
  test "$rc" -eq 2 || { cat emit_bad.txt; exit 1; }
done
grep -q "max-parallel: must be >= 1" emit_bad.txt
if grep -q "pwned" grid.out/slurm/sweep.sbatch; then echo "partition injected"; exit 1; fi
set +e; "$trnsim" sweep --collect --out grid.out > collect1.txt; rc=$?; set -e
test "$rc" -eq 1; grep -q "2 ok, 0 failed, 2 missing" collect1.txt
if command -v parallel >/dev/null; then parallel --will-cite -j 2 < grid.out/slurm/commands.txt; else sh grid.out/slurm/commands.txt; fi
"$trnsim" sweep --collect --out grid.out | grep -q "4 ok, 0 failed, 0 missing"
# Seeded random sampling: 3 points drawn from a list and a range, the same on a second listing.
cat > rnd.json <<'JSON'
{ "name": "rnd", "mode": "random", "samples": 3, "seed": 5, "set": { "sim.functional": false, "chip.cores": 2 },
  "workload": { "m": 128, "k": 128, "n": 128 },
  "axes": [ { "key": "chip.core.te.rows", "values": [32, 64, 128] },
            { "key": "chip.hbm.bandwidth_gbps", "range": [500, 4000], "log": true } ] }
JSON
"$trnsim" sweep rnd.json --list > l1.txt; "$trnsim" sweep rnd.json --list > l2.txt; cmp l1.txt l2.txt
test "$(wc -l < l1.txt)" -eq 3
"$trnsim" sweep rnd.json --jobs 2 2>/dev/null | grep -q "3 points, 3 ok"
echo "sweep CLI: ok"

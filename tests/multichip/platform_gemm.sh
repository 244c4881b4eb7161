#!/bin/sh
# platform_gemm.sh TRNSIM WORKDIR: trnsim run --platform (issue 40): a GEMM on every chosen full chip of a server,
# each chip's C checked bit for bit; chip 0 (seed S) gives the single-chip run's C exactly; every chip's time is the
# single-chip run's to the picosecond (the chips share no resource for a local GEMM); timing-only gives the same
# times as functional, chip by chip; --concurrent: the collective checked too, the interference measured, timing-only
# the same times; --timeline: a track group per chip; bad input is a usage error naming the option.
set -u
trnsim=$1; work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
fail() { echo "platform_gemm.sh: FAIL: $*"; exit 1; }
# expect CODE REGEX CMD...: the exit code and a message fragment (tests/robustness/expect.sh).
expect() { sh "$here/../robustness/expect.sh" "$@" >expect.log 2>&1 || fail "$(tail -n 5 expect.log) ('$*')"; }
S="--m 256 --k 192 --n 320 --dtype bf16"
G="$S --seed 5"
P="--platform ring-8 --set chips.model=full --chips 0,3,5"
expect 0 "result check +PASS: 0 elements differ over 3 chips" "$trnsim" run $P $G --quiet --stats plat.json --no-wall-time
expect 0 "result check +PASS" "$trnsim" run --preset trn2 $G --quiet --stats single.json --no-wall-time
"$trnsim" run $P $S --timing-only --quiet --stats timing.json --no-wall-time >/dev/null 2>&1 || fail "timing-only run"
python3 - <<'PY' || fail "per-chip figures"
import json
p = json.load(open("plat.json")); s = json.load(open("single.json")); t = json.load(open("timing.json"))
chips = p["chips"]
assert [c["chip"] for c in chips] == [0, 3, 5], [c["chip"] for c in chips]
assert all(c["checked"] and c["pass"] and c["mismatches"] == 0 for c in chips)
# Every chip's DMA queues, as the single-chip run reports them (the same GEMM shape: the same queue figures).
for c in chips:
    assert c["dma_queue_depth"] == s["result"]["dma_queue_depth"] > 0, (c["chip"], c["dma_queue_depth"])
    assert c["dma_wait_ns"] == s["result"]["dma_wait_ns"] >= 0, (c["chip"], c["dma_wait_ns"])
# Chip 0's operands come from the same seed as the single-chip run: the same C, bit for bit. Every chip's time is
# the single-chip run's to the picosecond: same-instant requests are served in the model's rank order, which other
# chips' activity does not change (docs/architecture.md, "Order within an instant").
assert chips[0]["c_digest"] == s["result"]["c_digest"], (chips[0]["c_digest"], s["result"]["c_digest"])
# Other chips have other operands (other seeds), so other results, and the same time.
assert len({c["c_digest"] for c in chips}) == 3
for c in chips:
    assert c["sim_ns"] == s["result"]["sim_ns"], (c["chip"], c["sim_ns"], s["result"]["sim_ns"])
# Timing-only: the same simulated time on every chip, no data.
for a, b in zip(chips, t["chips"]):
    assert a["sim_ns"] == b["sim_ns"], (a["chip"], a["sim_ns"], b["sim_ns"])
    assert not b["checked"]
assert p["result"]["sim_ns"] == max(c["sim_ns"] for c in chips)
PY
# Bad input: a usage error naming the option, exit 2, nothing run.
expect 2 "--chips: chip 8 does not exist \\(the platform has 8 chips, 0 .. 7\\)" "$trnsim" run --platform ring-8 --set chips.model=full --chips 8 $G
expect 2 "--chips: chip 3 given twice" "$trnsim" run --platform ring-8 --set chips.model=full --chips 3,3 $G
expect 2 "--chips: 'x' is not a chip id" "$trnsim" run --platform ring-8 --set chips.model=full --chips 1,x $G
expect 2 "--chips: chip 0 of ring-8 is a light chip, which runs no programs: add --set chips.model=full" "$trnsim" run --platform ring-8 $G
expect 2 "--chips: chip 2 of ring-8 is a light chip" "$trnsim" run --platform ring-8 --set "chips.full=[0,1]" --chips 1,2 $G
expect 2 "--platform: 'trn2' is a single chip; run --platform needs a server or cluster" "$trnsim" run --platform trn2 $G
expect 2 "--platform names the platform: give it instead of --preset / --config" "$trnsim" run --platform ring-8 --preset trn2 $G
expect 2 "--vcd applies to a run on one chip \\(--preset\\), not yet to --platform" "$trnsim" run $P $G --vcd w.vcd
# --timeline: one Perfetto trace, a track group (process) per chip, every chip's engines.
expect 0 "timeline +t.json: [0-9]+ events" "$trnsim" run $P $G --quiet --timeline t.json --concurrent allreduce:1MiB
python3 - <<'PY' || fail "the platform timeline"
import json
t = json.load(open("t.json"))
ev = t["traceEvents"] if isinstance(t, dict) else t
pids = {e.get("pid") for e in ev if e.get("ph") == "X"}
assert {0, 3, 5} <= pids, pids
names = {e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
assert len(names) >= 8, names
PY
expect 2 "--platform runs --workload gemm" "$trnsim" run $P --workload mlp
expect 2 "--chips applies to --platform" "$trnsim" run --chips 0 $G
# The run-loop options are read as for one chip (a stall limit under 1 ps would never advance time).
expect 2 "option --stall-limit-us: must be 0 \\(no limit\\) or at least 0.000001 \\(1 ps\\)" "$trnsim" run $P $G --stall-limit-us 0.0000001
expect 2 "the functional gemm 4096x4096x4096 on 3 chips would take about 1.7 GiB of host memory, more than --max-host-gib 1" \
  "$trnsim" run $P --m 4096 --k 4096 --n 4096 --max-host-gib 1
# A concurrent all-reduce on the same chips: both checked, the interference measured in the same command.
C="--platform ring-8 --set chips.model=full --m 512 --k 256 --n 512 --concurrent allreduce:4MiB:ring"
expect 0 "concurrent +allreduce \\(ring\\) of 4194304 bytes fp32 on every chip: .*check PASS.*result check +PASS: 0 elements differ over 8 chips.*interference.*GEMM +[0-9.]+ us -> [0-9.]+ us.*collective +[0-9.]+ us -> [0-9.]+ us" \
  "$trnsim" run $C --seed 3 --quiet --stats conc.json --no-wall-time
"$trnsim" run $C --timing-only --quiet --stats conc_timing.json --no-wall-time >/dev/null 2>&1 || fail "concurrent timing-only"
python3 - <<'PY' || fail "concurrent figures"
import json
f = json.load(open("conc.json")); t = json.load(open("conc_timing.json"))
c = f["concurrent"]
assert c["checked"] and c["pass"] and c["mismatches"] == 0 and c["steps"] == 176
assert all(x["pass"] for x in f["chips"])
i = f["interference"]
# Alone, each runs with the same layout and queues: sharing the chips can only slow either down.
assert i["gemm_alone"]["gemm_ns"] > 0 and i["collective_alone"]["collective_ns"] > 0
assert i["together"]["gemm_ns"] >= i["gemm_alone"]["gemm_ns"] * 0.999, i
assert i["together"]["collective_ns"] >= i["collective_alone"]["collective_ns"] * 0.999, i
assert abs(i["gemm_slowdown"] - i["together"]["gemm_ns"] / i["gemm_alone"]["gemm_ns"]) < 1e-9
assert f["result"]["sim_ns"] == max(f["result"]["gemm_sim_ns"], c["sim_ns"])
# The DMA queues: every run has descriptors in its engines and waits; together, the collective's descriptors queue
# behind the GEMM's in the engines they share, so they wait longer than the collective's alone.
for k in ("gemm_alone", "collective_alone", "together"):
    assert i[k]["dma_queue_depth"] > 0 and i[k]["dma_wait_ns"] > 0, (k, i[k])
assert i["together"]["dma_wait_ns"] > i["collective_alone"]["dma_wait_ns"], i
# Together, the same figures over the overlap: from 0 until the GEMM, the first done, finished. Its HBM and DMA rates
# are higher than over the whole run (the all-reduce then runs on alone), and hold no more bytes than the run.
o, b = i["together"]["overlap"], i["together"]
assert abs(o["window_ns"] - min(b["gemm_ns"], b["collective_ns"])) < 1e-3, (o, b)
assert b["gemm_ns"] < b["collective_ns"] / 4, b
assert o["hbm_gbps"] > 1.5 * b["hbm_gbps"] and o["dma_gbps"] > 1.5 * b["dma_gbps"], (o, b)
assert o["hbm_gbps"] * o["window_ns"] <= b["hbm_gbps"] * b["collective_ns"] * 1.0001, (o, b)
assert o["dma_queue_depth"] > 0 and o["dma_wait_ns"] > 0 and 0 < o["links"]["link_x"]["max"] <= 1, o
# Timing-only gives the concurrent run the same times, GEMM and collective, and the same figures over the overlap.
assert t["interference"]["together"]["overlap"] == o, (t["interference"]["together"]["overlap"], o)
assert t["result"]["gemm_sim_ns"] == f["result"]["gemm_sim_ns"], (t["result"], f["result"])
assert t["concurrent"]["sim_ns"] == c["sim_ns"]
assert not t["concurrent"]["checked"]
PY
expect 2 "--concurrent: 'allreduce' is not OP:SIZE\\[:ALGO\\[:DTYPE\\]\\]" "$trnsim" run $P $G --concurrent allreduce
expect 2 "--concurrent: unknown" "$trnsim" run $P $G --concurrent allsum:1MiB
expect 2 "--concurrent: '1XB' is not a size|--concurrent: unknown suffix 'XB'" "$trnsim" run $P $G --concurrent allreduce:1XB
expect 2 "--concurrent: unknown type 'int3'" "$trnsim" run $P $G --concurrent allreduce:1MiB:ring:int3
expect 2 "--concurrent: the collective runs on every chip of ring-8, and chip 1 is a light chip" \
  "$trnsim" run --platform ring-8 --set "chips.full=[0]" --chips 0 $G --concurrent allreduce:1MiB
expect 2 "torus" "$trnsim" run $P $G --concurrent allreduce:1MiB:torus
expect 2 "the collective needs [0-9]+ bytes of HBM per chip \\(input, output, scratch\\) beside the [0-9]+ bytes of the GEMM's operands, a full chip has" \
  "$trnsim" run $P $S --concurrent allreduce:64GiB --timing-only
expect 2 "--concurrent applies to --platform" "$trnsim" run $G --concurrent allreduce:1MiB
# trnsim collective --timeline on full chips: a track group per chip, with the links leaving it (the ring sends one
# way: chip c's transfers to chip c+1, one 4 KiB burst a span); on light chips refused.
expect 0 "timeline +ct.json: [0-9]+ events" "$trnsim" collective --platform ring-8 --set chips.model=full --op allreduce --bytes 1MiB --check --quiet --timeline ct.json
python3 - <<'PY' || fail "the collective timeline"
import json
t = json.load(open("ct.json"))
ev = t["traceEvents"] if isinstance(t, dict) else t
assert {e.get("pid") for e in ev if e.get("ph") == "X"} == set(range(8))
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
link = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "link"]
for c in range(8):
    mine = [e for e in link if e["pid"] == c]
    assert mine and all(names[(c, e["tid"])] == "link_x.to_chip%d" % ((c + 1) % 8) for e in mine), (c, len(mine))
    # Each chip sends 7 of its 8 pieces of 1 MiB / 8 twice (reduce-scatter, all-gather) over its link, and beside
    # them 8-byte semaphore-register writes (the next chip's signals).
    data = [e for e in mine if e["args"]["bytes"] > 8]
    assert sum(e["args"]["bytes"] for e in data) == 2 * 7 * (1 << 20) // 8, (c, sum(e["args"]["bytes"] for e in data))
    assert all(e["name"] == "write" and e["args"]["bytes"] == 8 for e in mine if e not in data)
    assert all(e["dur"] > 0 for e in mine)
PY
expect 2 "--timeline records the full chips' engines: add --set chips.model=full" "$trnsim" collective --platform ring-8 --op allreduce --bytes 1MiB --timeline ct2.json
# 256 full chips need more memory mappings for their thread stacks (the queue threads their programs spawn
# included) than the default vm.max_map_count allows: refused before elaboration with the figures and the way out,
# not SystemC's "E518 stack setup failed".
if [ "$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 0)" -le 146944 ]; then
  expect 2 "platform 'cluster-16x16' \\(256 full chips\\) has 73472 SystemC threads: their stacks need about 146944 memory mappings.*over the host's vm.max_map_count of [0-9]+ \\(fewer full chips: chips.full, or the light model; or raise the limit: sysctl -w vm.max_map_count=" \
    "$trnsim" collective --platform cluster-16x16 --set chips.model=full --op allreduce --bytes 1MiB --timing-only
fi
echo "platform_gemm.sh: all passed"

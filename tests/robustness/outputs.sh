#!/bin/sh
# outputs.sh TRNSIM WORKDIR: the output rules (tlm/output_file.h) end to end, with file contents before
# and after: a planted FILE.tmp link and a user's FILE.tmp are untouched and no temporary is left; two runs writing
# one output at once both succeed and the file is whole (one of the two); an output over an input or over another
# output is refused before running and the file is unchanged; --vcd writes exactly the file named (a device in
# place, any case of .vcd); a full device is an error with the system's reason; sweeps refuse their own file as an
# output and name a damaged row's file and key while the other rows go on.
set -u
trnsim=$1; work=$2
ROB=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
S="--m 64 --k 64 --n 64 --quiet"
fail() { echo "outputs.sh: FAIL: $*"; exit 1; }
# expect CODE REGEX CMD...: exit code and a message fragment (stdout + stderr).
expect() {
  code=$1; regex=$2; shift 2
  out=$("$@" 2>&1); got=$?
  [ "$got" -eq "$code" ] || fail "'$*' exited $got, expected $code: $out"
  printf '%s' "$out" | grep -Ezq -- "$regex" || fail "'$*' printed no /$regex/: $out"
}
no_temporaries() { # no .NAME.*.tmp left in the directory
  left=$(ls -A . | grep -E '^\..*\.tmp$' || true)
  [ -z "$left" ] || fail "temporaries left behind: $left"
}

# 1. A planted link at FILE.tmp is not followed, a user's own FILE.tmp is not touched.
echo victim > victim.txt
ln -s victim.txt out.json.tmp
echo "my notes" > notes.json.tmp
expect 0 "result check +PASS" "$trnsim" run $S --stats out.json
expect 0 "result check +PASS" "$trnsim" run $S --stats notes.json
[ "$(cat victim.txt)" = victim ] || fail "the planted link's target was written"
[ -L out.json.tmp ] || fail "the planted link was replaced"
[ "$(cat notes.json.tmp)" = "my notes" ] || fail "the user's notes.json.tmp was overwritten"
[ -f out.json ] && [ ! -L out.json ] || fail "out.json is not a regular file"
grep -q '"sim_ns"' out.json || fail "out.json has no statistics"
no_temporaries
# An output the user named that is a link is never replaced: the file it leads to is (beside itself, by rename).
echo old > target.json; mkdir -p sub; ln -s ../target.json sub/linked.json; ln -s sub/linked.json chain.json
expect 0 "result check +PASS" "$trnsim" run $S --stats chain.json
[ -L chain.json ] && [ -L sub/linked.json ] || fail "--stats replaced a link the user named"
grep -q '"sim_ns"' target.json || fail "--stats did not write where the link leads"
ls -A sub | grep -q tmp && fail "a temporary was left in the link's directory"
no_temporaries
ln -s nowhere.json dangling.json
expect 0 "result check +PASS" "$trnsim" run $S --stats dangling.json
[ -L dangling.json ] && grep -q '"sim_ns"' nowhere.json || fail "a dangling link was replaced, not followed"
ln -s loop1.json loop2.json; ln -s loop2.json loop1.json
expect 2 "trnsim run: --stats 'loop1.json': is a link in a loop of links" "$trnsim" run $S --stats loop1.json
mkdir -p ro; ln -s ro/x.json into_ro.json; chmod 555 ro
if [ "$(id -u)" != 0 ]; then
  expect 2 "--stats 'into_ro.json': directory ro is not writable \\(where the link into_ro.json leads\\)" \
    "$trnsim" run $S --stats into_ro.json
fi
chmod 755 ro
# /dev/stdout and /proc/self/fd/1 with stdout redirected to a file: the stats go into that file after the
# report, and the system's links stay links.
for name in /dev/stdout /proc/self/fd/1 /dev/fd/1; do
  "$trnsim" run $S --stats "$name" > redirected.txt 2>redirected.err || fail "--stats $name > file: $(cat redirected.err)"
  [ -L /dev/stdout ] || fail "--stats $name replaced the system's /dev/stdout link"
  grep -q '"sim_ns"' redirected.txt || fail "--stats $name > file: no statistics in the file"
done
"$trnsim" run --m 64 --k 64 --n 64 --stats /dev/stdout > redirected.txt 2>&1 || fail "--stats /dev/stdout with a report"
grep -q "result check" redirected.txt && grep -q '"sim_ns"' redirected.txt || fail "report or stats lost in one file"
[ "$(grep -n 'result check' redirected.txt | cut -d: -f1)" -lt "$(grep -n '"sim_ns"' redirected.txt | cut -d: -f1)" ] ||
  fail "the stats were not written after what was printed before"
"$trnsim" run $S --stats /dev/stderr 2> redirected.err > /dev/null || fail "--stats /dev/stderr 2> file"
grep -q '"sim_ns"' redirected.err || fail "--stats /dev/stderr 2> file: no statistics in the file"

# 2. Two runs writing one output at once: both succeed, the file is one run's whole output.
"$trnsim" run $S --no-wall-time --seed 1 --stats ref1.json >/dev/null || fail "ref1"
"$trnsim" run $S --no-wall-time --seed 2 --stats ref2.json >/dev/null || fail "ref2"
for i in 1 2 3; do
  "$trnsim" run $S --no-wall-time --seed 1 --stats both.json >/dev/null 2>a.err & a=$!
  "$trnsim" run $S --no-wall-time --seed 2 --stats both.json >/dev/null 2>b.err & b=$!
  wait $a || fail "concurrent run A failed: $(cat a.err)"
  wait $b || fail "concurrent run B failed: $(cat b.err)"
  cmp -s both.json ref1.json || cmp -s both.json ref2.json || fail "concurrent runs left a mixed both.json"
done
no_temporaries

# 3. An output over an input or over another output: exit 2 before running, the file unchanged.
echo '{ "description": "mine" }' > cfg.json; cp cfg.json cfg.orig
expect 2 "^trnsim run: --stats cfg.json is the same file as --config ./cfg.json: the run would overwrite its input$" \
  "$trnsim" run --config cfg.json $S --stats cfg.json
cmp -s cfg.json cfg.orig || fail "--config x --stats x changed x"
echo '{ "extends": "trn2" }' > base.json; echo '{ "extends": "base.json" }' > child.json; cp base.json base.orig
expect 2 "--timeline ./base.json is the same file as the extends chain of --config ./base.json: the run would overwrite its input" \
  "$trnsim" run --config child.json $S --timeline ./base.json
cmp -s base.json base.orig || fail "--timeline over the extends chain changed it"
cp "$ROB/programs/copy_roundtrip.json" prog.json
cp prog.json prog.orig
expect 2 "--stats prog.json is the same file as --program ./prog.json" \
  "$trnsim" run --workload program --program ./prog.json --quiet --stats prog.json
cmp -s prog.json prog.orig || fail "--program p --stats p changed p"
expect 2 "--stats a.json is the same file as --timeline a.json: one output would overwrite the other" \
  "$trnsim" run $S --timeline a.json --stats a.json
[ ! -e a.json ] || fail "a.json was written"
expect 2 "--stats ./w is the same file as --vcd w" "$trnsim" run $S --vcd w --stats ./w
ln -s cfg.json alias.json
expect 2 "--stats alias.json is the same file as --config ./cfg.json" "$trnsim" run --config cfg.json $S --stats alias.json
cmp -s cfg.json cfg.orig || fail "an alias of the config was written"
# Devices may be named more than once.
expect 0 "result check +PASS" "$trnsim" run $S --stats /dev/null --timeline /dev/null

# 4. --vcd: exactly the file named; a device in place; a full device is an error.
existed=no; [ -e /dev/null.vcd ] && existed=yes  # (from an old trnsim: then it must stay as it was)
expect 0 "waveforms +/dev/null" "$trnsim" run $S --vcd /dev/null
[ $existed = yes ] || [ ! -e /dev/null.vcd ] || fail "--vcd /dev/null created /dev/null.vcd"
expect 0 "waveforms +W.VCD" "$trnsim" run $S --vcd W.VCD
[ -f W.VCD ] && [ ! -e W.VCD.vcd ] && [ ! -e W.VCD.VCD ] || fail "--vcd W.VCD did not write exactly W.VCD"
grep -q '^\$enddefinitions' W.VCD || fail "W.VCD is not a whole VCD"
expect 0 "waveforms +plain" "$trnsim" run $S --vcd plain
[ -f plain ] && [ ! -e plain.vcd ] || fail "--vcd plain did not write exactly plain"
tail -n 1 plain | grep -q '^#[0-9]' || fail "plain does not end with the final time stamp"
if [ -c /dev/full ]; then  # (a minimal chroot may have no /dev/full)
  for o in --vcd --stats --timeline; do
    expect 1 "trnsim run: error: cannot write /dev/full: No space left on device" "$trnsim" run $S $o /dev/full
  done
fi
# A run that fails leaves the old waveform as it was.
echo "old waveform" > kept.vcd
expect 3 "injected fault" "$trnsim" run --m 64 --k 64 --n 64 --quiet --fault core0.dma0:error --vcd kept.vcd
[ "$(cat kept.vcd)" = "old waveform" ] || fail "a failed run replaced kept.vcd"
no_temporaries

# 5. Sweeps: the sweep file as its own output is refused; a damaged row names its file and key, the others go on.
cat > sw.json <<'JSON'
{ "name": "sw", "preset": "trn2", "set": { "sim.functional": false, "chip.cores": 1 },
  "workload": { "m": 64, "k": 64, "n": 64 },
  "axes": [ { "key": "chip.core.te.rows", "values": [64, 128] } ] }
JSON
cp sw.json results.json
expect 2 "the sweep's output .*/results.json is the same file as the sweep file results.json" \
  "$trnsim" sweep results.json --out . --jobs 1
cmp -s sw.json results.json || fail "the sweep file was overwritten"
expect 0 "2 points, 2 ok" "$trnsim" sweep sw.json --jobs 1
sed 's/"status": *"ok"/"status": 5/' sw.out/points/p0000.json > p.tmp && mv p.tmp sw.out/points/p0000.json
expect 1 "sw.out/points/p0000.json: status: expected \"ok\" or \"failed\", got 5 .*1 ok, 0 failed, 1 missing" \
  "$trnsim" sweep --collect --out sw.out
expect 0 "1 already done, 1 to run.*2 points, 2 ok" "$trnsim" sweep sw.json --retry-failed --jobs 1
grep -q '"status": *"ok"' sw.out/points/p0000.json || fail "the damaged row was not run again"
echo '{ "trnsim_sweep_manifest": 1 }' > sw.out/manifest.json
expect 1 "sw.out/manifest.json: spec: required" "$trnsim" sweep --collect --out sw.out

# 6. Plots follow the same rules (when matplotlib is there).
if "$trnsim" plot roofline ref1.json -o probe.png >/dev/null 2>&1; then
  ln -s victim.txt plot.png.tmp
  expect 0 "wrote plot.png" "$trnsim" plot roofline ref1.json -o plot.png
  [ "$(cat victim.txt)" = victim ] && [ -L plot.png.tmp ] || fail "the plot followed a planted link"
  no_temporaries
  # A plot never overwrites its own input or another plot of the same run, by any name; a named link stays.
  cp ref1.json in.json; cp in.json in.orig
  ln -s in.json in_alias.png
  expect 2 "error: -o in_alias.png is the same file as the input in.json: the plot would overwrite its input" \
    "$trnsim" plot roofline in.json -o in_alias.png
  cmp -s in.json in.orig || fail "the plot overwrote its input"
  expect 2 "error: -o ./twice.png is the same file as -o twice.png" "$trnsim" plot roofline in.json -o twice.png -o ./twice.png
  ln -s real_plot.png plot_link.png
  expect 0 "wrote plot_link.png" "$trnsim" plot roofline in.json -o plot_link.png
  [ -L plot_link.png ] && [ -s real_plot.png ] || fail "the plot replaced a link the user named"
  no_temporaries
fi
echo "outputs.sh: all passed"

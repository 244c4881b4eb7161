#!/bin/sh
# command_line.sh TRNSIM WORKDIR: the subcommand table's help, and options that must not be mistaken for values.
#  - trnsim help / --help / -h list every command; trnsim (no command) lists them on stderr and exits 2;
#  - for every command, `trnsim help CMD` and `trnsim CMD --help` print the same text, exit 0, start with CMD's own
#    synopsis and hold no other command's synopsis (run's once, not every command's);
#  - `run --stats --quiet` is a usage error and writes no file named --quiet;
#  - a sweep of a server preset fails its points with a message naming it.
set -eu
trnsim=$1; work=$2
rm -rf "$work"; mkdir -p "$work"; cd "$work"
fail() { echo "command_line.sh: $*"; exit 1; }
commands="run collective train sweep list hbm cosim"

"$trnsim" help > list.txt || fail "trnsim help exited $?"
for h in --help -h; do "$trnsim" $h | cmp -s - list.txt || fail "trnsim $h differs from trnsim help"; done
for c in $commands plot help; do grep -Eq "^  $c +[a-z]" list.txt || fail "trnsim help does not list $c"; done
set +e; "$trnsim" > none.out 2> none.err; rc=$?; set -e
[ "$rc" -eq 2 ] || fail "trnsim without a command exited $rc, expected 2"
cmp -s none.err list.txt || fail "trnsim without a command does not list the commands on stderr"

for c in $commands; do
  "$trnsim" help "$c" > "help_$c.txt" || fail "trnsim help $c exited $?"
  "$trnsim" "$c" --help > "opt_$c.txt" || fail "trnsim $c --help exited $?"
  "$trnsim" "$c" -h | cmp -s - "opt_$c.txt" || fail "trnsim $c -h differs from trnsim $c --help"
  cmp -s "help_$c.txt" "opt_$c.txt" || fail "trnsim help $c differs from trnsim $c --help"
  head -n 1 "help_$c.txt" | grep -q "^trnsim $c " || fail "trnsim help $c does not start with its synopsis"
  n=$(grep -c "^trnsim $c " "help_$c.txt")
  # run has one synopsis (it used to print two overlapping ones); sweep has one per mode.
  [ "$c" != run ] || [ "$n" -eq 1 ] || fail "trnsim help run prints its synopsis $n times"
  for o in $commands; do
    [ "$o" = "$c" ] && continue
    if grep -q "^trnsim $o " "help_$c.txt"; then fail "trnsim help $c prints the synopsis of $o"; fi
  done
done
# --help wins over other options, even bad ones, and runs nothing.
"$trnsim" run --m 99999999 --help | cmp -s - help_run.txt || fail "run --m ... --help is not run's usage"

set +e; "$trnsim" run --stats --quiet > quiet.out 2>&1; rc=$?; set -e
[ "$rc" -eq 2 ] || fail "run --stats --quiet exited $rc, expected 2"
grep -q "^trnsim run: option --stats needs a value, got the option '--quiet'" quiet.out || fail "run --stats --quiet: $(cat quiet.out)"
[ ! -e ./--quiet ] || fail "run --stats --quiet wrote a file named --quiet"
# A sweep of a server preset: every point fails naming it (it used to run the first chip quietly).
cat > ring.json <<'JSON'
{ "name": "ring", "preset": "ring-8", "workload": { "m": 64, "k": 64, "n": 64 },
  "axes": [ { "key": "workload.seed", "values": [1, 2] } ] }
JSON
set +e; "$trnsim" sweep ring.json --jobs 1 > ring.txt 2>&1; rc=$?; set -e
[ "$rc" -eq 1 ] || fail "a sweep of ring-8 exited $rc, expected 1"
grep -q "0 ok, 2 failed" ring.txt || fail "a sweep of ring-8: $(cat ring.txt)"
grep -q "preset ring-8: a platform of 8 chips; a sweep point (a GEMM) simulates one chip: use trnsim collective --platform ring-8" \
  ring.out/results.json || fail "a sweep of ring-8 does not say why its points failed"
echo "command line: ok"

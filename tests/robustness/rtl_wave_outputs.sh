#!/bin/sh
# rtl_wave_outputs.sh TRNSIM WORKDIR ROWSxCOLS FORMAT: the output rules (tlm/output_file.h) for the RTL waveforms
# (--wave FILE.FORMAT and its transactor VCD FILE.wrapper.vcd), which Verilator and SystemC write through a private
# directory: an output that is a link stays a link, the waveform going where it leads; a run that fails leaves both old files as
# they were; a full device is an error with the system's reason (for the FST file and for the wrapper VCD); cosim
# follows the same rules; a run stopped by SIGTERM leaves no temporary (in the target's directory or $TMPDIR) and no
# waveform; no private directory is left after any run.
set -u
trnsim=$1; work=$2; size=$3; fmt=$4
rows=${size%x*}; cols=${size#*x}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"; mkdir -p "$work/tmp"; cd "$work" || exit 1
TMPDIR=$work/tmp; export TMPDIR
fail() { echo "rtl_wave_outputs.sh: FAIL: $*"; exit 1; }
expect() {  # expect CODE REGEX CMD...
  code=$1; regex=$2; shift 2
  out=$("$@" 2>&1); got=$?
  [ "$got" -eq "$code" ] || fail "'$*' exited $got, expected $code: $out"
  printf '%s' "$out" | grep -Ezq -- "$regex" || fail "'$*' printed no /$regex/: $out"
}
clean() {  # no temporary beside the outputs, no private directory under $TMPDIR
  left=$(ls -A . | grep -E '^\..*\.tmp$' || true)
  [ -z "$left" ] || fail "temporaries left behind: $left"
  [ -z "$(ls -A tmp)" ] || fail "private directories left in \$TMPDIR: $(ls -A tmp)"
}
R="--quiet --m 32 --k 40 --n 70 --dtype bf16 --set chip.cores=1 --set chip.core.te.impl=rtl \
  --set chip.core.te.rows=$rows --set chip.core.te.cols=$cols"

# 1. Outputs that are links the user named stay links: the whole waveforms go where they lead (replaced there).
echo victim > "target.$fmt"; echo victim > target.wrapper.vcd
ln -s "target.$fmt" "w.$fmt"; ln -s target.wrapper.vcd w.wrapper.vcd
# shellcheck disable=SC2086
expect 0 "result check +PASS" "$trnsim" run $R --wave "w.$fmt"
[ -L "w.$fmt" ] && [ -L w.wrapper.vcd ] || fail "a link the user named was replaced"
grep -q '^\$enddefinitions' target.wrapper.vcd || fail "the wrapper VCD's link target is not a whole VCD"
python3 "$here/../cli/wave_check.py" "target.$fmt" --var clk >/dev/null || fail "target.$fmt is not a whole waveform"
rm -f "target.$fmt" target.wrapper.vcd
clean

# 2. A run that fails leaves the old waveforms as they were.
echo "old rtl" > "k.$fmt"; echo "old wrapper" > k.wrapper.vcd
# shellcheck disable=SC2086
expect 3 "injected fault" "$trnsim" run $R --fault core0.dma0:error --wave "k.$fmt"
[ "$(cat "k.$fmt")" = "old rtl" ] && [ "$(cat k.wrapper.vcd)" = "old wrapper" ] || fail "a failed run replaced a waveform"
clean

# 3. A full device: an error naming the file and the reason, exit 1, nothing else replaced.
if [ -c /dev/full ]; then
  ln -s /dev/full "f.$fmt"
  # shellcheck disable=SC2086
  expect 1 "cannot write f.$fmt: No space left on device" "$trnsim" run $R --wave "f.$fmt"
  [ ! -e f.wrapper.vcd ] || [ -s f.wrapper.vcd ] || fail "an empty f.wrapper.vcd was left"
  rm -f "f.$fmt" f.wrapper.vcd; ln -s /dev/full g.wrapper.vcd
  # shellcheck disable=SC2086
  expect 1 "cannot write g.wrapper.vcd: No space left on device" "$trnsim" run $R --wave "g.$fmt"
  clean
fi

# 4. cosim writes its waveforms by the same rules.
ln -s "ctarget.$fmt" "c.$fmt"
expect 0 "PASS" "$trnsim" cosim --rows "$rows" --cols "$cols" --tiles 2 --wave "c.$fmt"
[ -L "c.$fmt" ] && python3 "$here/../cli/wave_check.py" "ctarget.$fmt" --var clk >/dev/null ||
  fail "cosim replaced a link or wrote no whole waveform where it leads"
rm -f "ctarget.$fmt" ctarget.wrapper.vcd
clean

# 5. SIGTERM while the waveform is being written: no temporaries, no waveform, the default exit status of SIGTERM.
L="--quiet --m 512 --k 512 --n 2048 --dtype bf16 --set chip.cores=1 --set chip.core.te.impl=rtl \
  --set chip.core.te.rows=$rows --set chip.core.te.cols=$cols"
# shellcheck disable=SC2086
"$trnsim" run $L --wave "t.$fmt" >/dev/null 2>&1 &
pid=$!
i=0
while [ -z "$(ls -A tmp)" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ -n "$(ls -A tmp)" ] || fail "no private directory appeared in \$TMPDIR during the run"
sleep 0.3
kill -TERM $pid; wait $pid; st=$?
[ $st -eq 143 ] || fail "a run stopped by SIGTERM exited $st, expected 143 (the signal's default action)"
[ ! -e "t.$fmt" ] && [ ! -e t.wrapper.vcd ] || fail "a stopped run left a waveform"
clean
echo "rtl_wave_outputs.sh: all passed"

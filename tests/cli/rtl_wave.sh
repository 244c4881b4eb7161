#!/bin/sh
# rtl_wave.sh TRNSIM OUTDIR ROWSxCOLS FORMAT: `trnsim run --wave OUTDIR/w.FORMAT` on the RTL Tensor Engine (a tiny
# GEMM on one core) writes the RTL's waveform (FORMAT: fst or vcd, the TRNSIM_RTL_TRACE of the build) and the
# transactor's SystemC VCD (w.wrapper.vcd); wave_check.py checks both from their headers and definitions, and that
# they declare the RTL's ports and internals and the transactor's signals and state. A run without --wave writes
# no waveform.
set -e
trnsim=$1; out=$2; size=$3; fmt=$4
rows=${size%x*}; cols=${size#*x}
check="python3 $(dirname "$0")/wave_check.py"
mkdir -p "$out"
rm -f "$out"/w.* "$out"/none.*
gemm="run --quiet --m 32 --k 40 --n 70 --dtype bf16 --set chip.cores=1 --set chip.core.te.impl=rtl \
  --set chip.core.te.rows=$rows --set chip.core.te.cols=$cols"
# shellcheck disable=SC2086
"$trnsim" $gemm --wave "$out/w.$fmt" | grep -E "result check +PASS|RTL waveforms"
$check "$out/w.$fmt" --var clk --var cmd_valid --var w_data --var m_data --var out_data --var out_last \
  --var ps_o --var "u_array.w_act[0][0]" \
  --var "x[$((rows - 1))][$((cols - 1))]" --var "ps[$((rows - 1))][0]"
$check "$out/w.wrapper.vcd" --var clk --var cmd_ready --var w_data --var out_data --var cycle --var jobs_done
# Several cores: core 0 alone by default (one waveform), --wave-cores picks them (one each, names inserted).
rm -f "$out"/w.*
two="run --quiet --m 32 --k 40 --n 70 --dtype bf16 --set chip.cores=2 --set chip.core.te.impl=rtl \
  --set chip.core.te.rows=$rows --set chip.core.te.cols=$cols"
# shellcheck disable=SC2086
"$trnsim" $two --wave "$out/w.$fmt" | grep -E "RTL waveforms .* of core 0's engine"
test "$(ls "$out"/w*."$fmt" | grep -vc wrapper)" -eq 1
rm -f "$out"/w.*
# shellcheck disable=SC2086
"$trnsim" $two --wave "$out/w.$fmt" --wave-cores all | grep -E "RTL waveforms .* of every core's engine"
test -f "$out/w.$fmt" && test -f "$out/w.chip0.core1_te_backend.$fmt"
rm -f "$out"/w.*
# shellcheck disable=SC2086
"$trnsim" $two --wave "$out/w.$fmt" --wave-cores 1 >/dev/null
test "$(ls "$out"/w*."$fmt" | grep -vc wrapper)" -eq 1
# no --wave, no files (tracing is compiled in but off)
cd "$out"
# shellcheck disable=SC2086
"$trnsim" $gemm | grep -qE "result check +PASS"
if ls ./*.fst ./*.vcd 2>/dev/null | grep -v '/w\.'; then echo "rtl_wave.sh: waveforms written without --wave"; exit 1; fi
echo "rtl_wave.sh: ok"

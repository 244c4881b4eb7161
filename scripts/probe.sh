#!/usr/bin/env bash
# probe.sh TRNSIM [WORKDIR]: a hostile user's inputs across every subcommand, each run with a time limit, judged by
# rule: a verdict line per input and a summary. An input fails the probe if it
#   - ends by a signal or a time-out (crash or hang), or exits with a status other than 0, 1, 2, 3;
#   - prints what only a bug prints: a raw exception ("what():", "terminate called", "filesystem error", "stoull",
#     "basic_string", "std::"), a Python traceback, a sanitizer report, a SystemC internal error;
#   - exits 0 where the input is wrong ("err" cases), or not 0 where it is fine ("ok" cases);
#   - leaves a temporary (.NAME.*.tmp) in the work directory, or changes a file it must not (checked per case).
# Not part of the suite (it takes minutes): docs/RELIABILITY.md records a run of it.
set -u
trnsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=${2:-$(mktemp -d)}
here=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
S="--m 64 --k 64 --n 64 --quiet"
n=0; bad=0
bug_text='what\(\)|terminate called|filesystem error|stoull|stoul|basic_string|std::|Traceback|AddressSanitizer|runtime error:|Segmentation|core dumped|Internal error|SystemC: E5'
# probe WANT CMD...: WANT is ok (exit 0), err (exit 1, 2 or 3) or any (0-3).
probe() {
  want=$1; shift
  n=$((n + 1))
  out=$(timeout 60 "$@" 2>&1 </dev/null); rc=$?
  verdict=fine
  if [ $rc -eq 124 ]; then verdict="HANG"
  elif [ $rc -gt 3 ]; then verdict="CRASH($rc)"
  elif printf '%s' "$out" | grep -Eq "$bug_text"; then verdict="RAW"
  elif [ "$want" = ok ] && [ $rc -ne 0 ]; then verdict="REFUSED"
  elif [ "$want" = err ] && [ $rc -eq 0 ]; then verdict="ACCEPTED"
  fi
  left=$(ls -A . | grep -E '^\..*\.tmp$' || true)
  [ -n "$left" ] && verdict="TEMP-LEFT" && rm -f ./.*.tmp
  first=$(printf '%s' "$out" | grep -v '^\s*$' | tail -1 | cut -c1-150)
  printf '%3d %-9s rc=%d  %s\n      -> %s\n' "$n" "$verdict" "$rc" "$*" "$first"
  [ "$verdict" = fine ] || bad=$((bad + 1))
}
T="$trnsim"

# --- numbers as written (30) ---
for v in 010 0 00064 1_024 " 64" "64 " +64 -0 0x40 0X40 1e3 64.0 "" 18446744073709551615 18446744073709551616 99999999999999999999; do
  case "$v" in 010|00064|1_024) w=ok;; *) w=err;; esac
  probe $w "$T" run --m "$v" --k 64 --n 64 --quiet --timing-only
done
for v in 0777 0 18446744073709551615 0x1 -1 1.5; do
  case "$v" in 0777|0|18446744073709551615) w=ok;; *) w=err;; esac
  probe $w "$T" run $S --seed "$v"
done
probe err "$T" collective --platform ring-8 --op allreduce --bytes 010KiB --chunks 0x2 --timing-only
probe ok "$T" collective --platform ring-8 --op allreduce --bytes 0064KiB --chunks 08 --timing-only --quiet
probe err "$T" collective --platform ring-8 --op broadcast --bytes 1MiB --root 010 --timing-only
probe ok "$T" collective --platform ring-8 --op broadcast --bytes 1MiB --root 07 --timing-only --quiet
probe err "$T" train --model tiny --dp 0x2 --tp 2 --pp 2 --platform ring-8
probe ok "$T" hbm --requests 0100 --size 064
probe err "$T" hbm --requests 100 --size 0x40
probe err "$T" cosim --tiles 0x10
probe err "$T" sweep --jobs 0x2 --list

# --- JSON depth, size and odd values (25) ---
for d in 255 257 1000 100000; do
  python3 -c "import sys; d=int(sys.argv[1]); open('deep%d.json'%d,'w').write('{\"chip\":{\"faults\":'+'['*d+']'*d+'}}')" $d
  probe err "$T" run --config "deep$d.json" $S
done
python3 -c "open('deepobj.json','w').write('{\"a\":'*50000+'1'+'}'*50000)"
probe err "$T" run --config deepobj.json $S
probe err "$T" run $S --set "chip.cores=$(python3 -c 'print("["*5000+"]"*5000)')"
probe err "$T" run $S --fault "hbm.channel0:slow,latency_ns=$(python3 -c 'print("["*5000+"]"*5000)')"
python3 -c "open('deepsweep.json','w').write('{\"workload\":'+'{\"a\":'*3000+'1'+'}'*3000+'}')"
probe err "$T" sweep deepsweep.json --list
python3 -c "open('deepprog.json','w').write('{\"cores\":'+'['*3000+']'*3000+'}')"
probe err "$T" run --workload program --program deepprog.json --quiet
python3 -c "open('deepmodel.json','w').write('{\"name\":\"m\",\"layers\":'+'['*3000+']'*3000+'}')"
probe err "$T" train --model ./deepmodel.json --dp 2 --tp 2 --pp 2 --platform ring-8
probe err "$T" run $S --set 'chip.cores=1e400'
probe err "$T" run $S --set 'chip.cores=-0'
probe ok "$T" run $S --set 'chip.cores=1.0e0'
probe err "$T" run $S --set 'chip.hbm.bandwidth_gbps=NaN'
probe err "$T" run $S --set 'chip.hbm.bandwidth_gbps=Infinity'
probe err "$T" run $S --set 'chip.hbm.bandwidth_gbps=1e-320'
probe err "$T" run $S --set 'chip.core.te.rows=128.5'
probe err "$T" run $S --set 'chip.name=["a"]'
probe ok "$T" run $S --set 'chip.name="x\u0000y"'
probe ok "$T" run $S --set 'description="\u001b[2J\u001b[H"'
probe err "$T" run $S --set $'chip.core.te.impl=\e[31mred'
probe err "$T" run $S --set 'chip.cores'
probe err "$T" run $S --set '=3'
probe err "$T" run $S --set 'chip.faults[99999999999].kind=slow'
probe err "$T" run $S --set 'chip.faults[-1].kind=slow'

# --- extends, overrides and their blame (16) ---
echo '{ "extends": "trn2" }' > child.json
probe err "$T" run $S --set extends=trn1
probe ok "$T" run --config child.json $S --set extends=trn1 --set chip.name=null
probe err "$T" run $S --set extends=nosuch
probe err "$T" run $S --set extends=3
probe ok "$T" run $S --set extends=null --no-check
probe err "$T" run --config child.json $S --set extends=child.json
probe err "$T" run --config child.json $S --set extends=./child.json
probe err "$T" run $S --set chip.core.te.rows=256
probe err "$T" run $S --set chip.core.te.rows=256 --set chip.core.te.cols=256
probe err "$T" run $S --set chip.core.sbuf.partitions=64
probe err "$T" run $S --set chip.address_map.core_base=0
probe err "$T" run $S --set chip.hbm.capacity_gib=0
probe ok "$T" collective --platform ring-8 --op allreduce --bytes 1MiB --set server.dims=[3] --timing-only
probe err "$T" collective --platform ring-8 --op allreduce --bytes 1MiB --set extends=trn2 --timing-only
probe err "$T" collective --platform ring-8 --op allreduce --bytes 1MiB --timing-only --set sim.functional=true
probe err "$T" collective --platform ring-8 --op allreduce --bytes 1MiB --timing-only --set 'sim={"functional":true}'

# --- outputs and links (30) ---
echo old > t1.json; ln -s t1.json l1.json
probe ok "$T" run $S --stats l1.json
ln -s nope.json dang.json
probe ok "$T" run $S --stats dang.json
ln -s la.json lb.json; ln -s lb.json la.json
probe err "$T" run $S --stats la.json
probe err "$T" run $S --timeline la.json
ln -s /nonexistent/dir/x.json ldir.json
probe err "$T" run $S --stats ldir.json
mkdir -p d1; ln -s d1 ld.json
probe err "$T" run $S --stats ld.json
probe ok "$T" run $S --stats /dev/stdout
probe ok "$T" run $S --stats /dev/stderr
probe ok "$T" run $S --stats /proc/self/fd/1
probe ok "$T" run $S --stats /dev/fd/2
probe ok "$T" run $S --stats /dev/null --timeline /dev/null
probe ok "$T" run $S --stats /dev/stdout --timeline /dev/stdout
probe err "$T" run $S --stats /proc/self/fd/9
probe err "$T" run $S --stats /dev/full
probe err "$T" run $S --stats /proc/version
probe err "$T" run $S --stats /
probe err "$T" run $S --stats ""
probe ok "$T" run $S --stats "$(printf 'new\nline.json')"
cp "$here/configs/trn2.json" mine.json; ln -s mine.json mine_alias.json
probe err "$T" run --config mine.json $S --stats mine_alias.json
probe err "$T" run --config mine_alias.json $S --stats mine.json
"$T" run $S --stats s.json >/dev/null 2>&1
probe ok "$T" plot roofline s.json -o p.png
ln -s s.json s_alias.png
probe err "$T" plot roofline s.json -o s_alias.png
probe err "$T" plot roofline s.json -o x.png -o ./x.png
ln -s real.png plink.png
probe ok "$T" plot roofline s.json -o plink.png
probe err "$T" plot roofline s.json -o /nonexistent/p.png
ln -s pl_b.png pl_a.png; ln -s pl_a.png pl_b.png
probe err "$T" plot roofline s.json -o pl_a.png
probe err "$T" plot roofline la.json -o q.png
"$T" run $S --timeline tl.json >/dev/null 2>&1
probe ok "$T" plot utilisation tl.json -o tl.png
probe err "$T" sweep "$here/tests/robustness/sweeps/small.json" --out /proc/x
mkdir -p sw; echo x > sw/points
probe err "$T" sweep "$here/tests/robustness/sweeps/small.json" --out sw
touch swf
probe err "$T" sweep "$here/tests/robustness/sweeps/small.json" --out swf

# --- resources (20) ---
probe err "$T" run --m 65536 --k 65536 --n 65536
probe err "$T" run --m 65536 --k 65536 --n 65536 --max-host-gib 1e7
probe err "$T" run --m 65536 --k 65536 --n 65536 --max-host-gib 0
probe err "$T" run --m 65536 --k 65536 --n 65536 --max-host-gib -1
probe err "$T" run --m 65536 --k 65536 --n 65536 --max-host-gib abc
probe err "$T" run --m 4294967296 --k 4294967296 --n 2
probe err "$T" run --m 1099511627776 --k 1099511627776 --n 1099511627776
probe err "$T" run --m 1099511627777 --k 1 --n 1
probe err "$T" run --m 16384 --k 16384 --n 16384 --max-host-gib 0.5
probe ok "$T" run --m 16384 --k 8 --n 16384 --timing-only --max-host-gib 0.5 --quiet
probe err "$T" collective --platform ring-8 --op allreduce --bytes 1GiB --chunks 1048576 --timing-only
probe err "$T" collective --platform trn2-ultraserver-64 --op alltoall --algo direct --bytes 1GiB --chunks 100000 --timing-only
probe err "$T" collective --platform ring-8 --op allreduce --bytes 1MiB --timing-only --set server.dims=[100000]
probe err "$T" collective --platform ring-8 --op allreduce --bytes 1MiB --timing-only --max-host-gib 0.000001
probe err "$T" hbm --stacks 4 --pattern sequential --requests 1 --size 34359738368
probe err "$T" hbm --stacks 4 --pattern sequential --requests 100000000 --size 17179869184
probe err "$T" hbm --requests 1000000000
printf '0 R 0 17179869184\n' > huge.trace
probe err "$T" hbm --trace huge.trace --max-host-gib 1
probe err "$T" cosim --tiles 10000000000
probe err "$T" sweep --jobs 100000 "$here/tests/robustness/sweeps/small.json" --out swj

# --- runs that always end (15) ---
C="collective --platform ring-8 --op allreduce --bytes 1MiB --timing-only --quiet"
probe any "$T" $C --set server.link.gbps=0.000001
probe err "$T" $C --set server.link.gbps=0.000001 --set server.link.payload_bytes=1 --set server.link.overhead_bytes=1073741824
probe any "$T" $C --set server.link.latency_ns=1000000000
probe any "$T" $C --set server.link.credit_return_ns=1000000000 --set server.link.credits=1
probe any "$T" $C --set server.link.payload_bytes=1
probe any "$T" run $S --fault hbm:slow,latency_ns=1e12
probe any "$T" run $S --set chip.hbm.latency_ns=1000000
probe any "$T" run $S --set chip.core.dma.descriptor_latency_ns=1000000
printf '0 R 0 64\n999999999 R 64 64\n' > far.trace
probe any "$T" hbm --trace far.trace
probe err "$T" hbm --trace far.trace --stacks 8
printf '0 R 0 64\n1e9 R 64 64\n' > far2.trace
probe err "$T" hbm --trace far2.trace --stacks 2
probe any "$T" run $S --wall-limit 0.5 --set chip.hbm.bandwidth_gbps=0.001
probe any "$T" run $S --stall-limit-us 0.000001 --fault hbm:slow,latency_ns=1e9
probe err "$T" run $S --wall-limit 1e10
probe any "$T" collective --platform ring-8 --op allreduce --bytes 1GiB --timing-only --wall-limit 0.2 --quiet

# --- contradictions and caps (15) ---
probe ok "$T" run --workload program --program "$here/tests/robustness/programs/copy_roundtrip.json" --no-check --timing-only --quiet
probe ok "$T" run --workload program --program "$here/tests/robustness/programs/copy_roundtrip.json" --no-check --quiet
probe err "$T" run $S --timing-only --set sim.functional=false
probe err "$T" run $S --timing-only --seed 3
probe err "$T" collective --platform ring-8 --op allreduce --bytes 1MiB --timing-only --check
probe err "$T" collective --platform ring-8 --op allreduce --bytes 1MiB --timing-only --seed 2
probe err "$T" sweep --jobs 0 "$here/tests/robustness/sweeps/small.json" --out swj0
probe err "$T" sweep --jobs 257 "$here/tests/robustness/sweeps/small.json" --out swj1
probe ok "$T" sweep --jobs 256 "$here/tests/robustness/sweeps/small.json" --out swj2
probe err "$T" sweep "$here/tests/robustness/sweeps/range_overflow.json" --list
probe err "$T" sweep "$here/tests/robustness/sweeps/two_axes_one_key.json" --list
printf '{ "axes": [ { "key": "extends", "values": ["trn1", "trn3"] } ], "set": { "sim.functional": false } }\n' > ext.json
probe ok "$T" sweep ext.json --list
printf '{ "axes": [ { "key": "chip.cores", "range": [1, 1e308], "steps": 3, "integer": true } ] }\n' > big_int.json
probe err "$T" sweep big_int.json --list
printf '{ "axes": [ { "key": "chip.hbm.bandwidth_gbps", "range": [1, 1e308], "steps": 3, "log": true } ] }\n' > log.json
probe ok "$T" sweep log.json --list
probe err "$T" cosim --tiles 0

echo "probe: $n inputs, $bad not fine"
[ $bad -eq 0 ]

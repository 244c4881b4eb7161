#!/bin/sh
# fuzz/run.sh BUILD_DIR SECONDS [TARGET...]: builds the libFuzzer targets with clang++ (once, in BUILD_DIR) and
# fuzzes each for SECONDS, starting from the seed corpora (the presets, tests/robustness inputs, fuzz/seeds) and the
# saved regressions. New corpus entries go to BUILD_DIR/corpus/TARGET (kept between runs); a crash stops with
# status 1 and leaves crash-* in BUILD_DIR: copy it to fuzz/regressions/TARGET/ (and fix the bug) so the normal
# test suite replays it. Exits 77 (skipped) when clang++ is not installed.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$1; secs=$2; shift 2
targets=${*:-config_text config_overrides dma_descriptor program_text hbm_trace}
command -v clang++ >/dev/null 2>&1 || { echo "fuzz/run.sh: clang++ not found, skipping"; exit 77; }
# Configure every time (cheap once cached): a changed fuzz/CMakeLists.txt brings new targets.
cmake -S "$here/fuzz" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
tg=""; for t in $targets; do tg="$tg --target fuzz_$t"; done
cmake --build "$build" -j "${TRNSIM_JOBS:-2}" $tg >/dev/null
export TRNSIM_CONFIG_DIR="$here/configs"
for t in $targets; do
  case $t in
    config_text) seeds="$here/configs $here/tests/robustness/configs" ;;
    config_overrides) seeds="$here/fuzz/seeds/config_overrides" ;;
    dma_descriptor) seeds="$here/fuzz/seeds/dma_descriptor" ;;
    program_text) seeds="$here/tests/robustness/programs" ;;
    hbm_trace) seeds="$here/fuzz/seeds/hbm_trace" ;;
    *) echo "fuzz/run.sh: unknown target $t"; exit 2 ;;
  esac
  mkdir -p "$build/corpus/$t"
  [ -d "$here/fuzz/regressions/$t" ] && seeds="$seeds $here/fuzz/regressions/$t"
  echo "fuzz/run.sh: $t for $secs s"
  status=0
  (cd "$build" && "./fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
     -print_final_stats=1 "corpus/$t" $seeds) > "$build/$t.log" 2>&1 || status=$?
  grep -E "^(fuzz |stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY|==[0-9]+==ERROR|artifact_prefix)" "$build/$t.log" || true
  if [ $status -ne 0 ]; then
    echo "fuzz/run.sh: $t failed (status $status), log $build/$t.log:"; tail -n 40 "$build/$t.log"; exit 1
  fi
done

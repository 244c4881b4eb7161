#!/bin/sh
# fuzz/sanitize.sh BUILD_DIR: the sanitizer build of the unit tests. Builds fuzz/'s clang project (ASan + UBSan,
# -fno-sanitize-recover) in BUILD_DIR and runs the sanitized_* executables, every plain-C++ Catch2 test file of the suite
# (numerics, trace events, collectives, HBM timing checker / memspecs / mapping, robustness library cases). Any
# sanitizer report fails the run. Exits 77 (skipped) when clang++ is not installed.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$1
command -v clang++ >/dev/null 2>&1 || { echo "fuzz/sanitize.sh: clang++ not found, skipping"; exit 77; }
# Configure every time (cheap once cached): a changed fuzz/CMakeLists.txt brings new targets.
cmake -S "$here/fuzz" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "${TRNSIM_JOBS:-2}" --target sanitized_tests >/dev/null
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for t in sanitized_unit_tests sanitized_hbm_timing_checker_test sanitized_hbm_memspec_test sanitized_hbm_address_mapper_test; do
  echo "fuzz/sanitize.sh: $t"
  "$build/$t" --reporter compact --order rand --rng-seed 1 | tail -n 3 || status=1
done
exit $status

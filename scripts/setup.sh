#!/usr/bin/env bash
# Set-up on Debian 12 as root: installs what is missing, builds, then runs the main job or the test suite.
#   bash scripts/setup.sh run    # default GEMM on the default preset (trn2)
#   bash scripts/setup.sh test   # the whole test suite through ctest
#   bash scripts/setup.sh build  # install + build only
set -euo pipefail
mode=${1:-run}
here=$(cd "$(dirname "$0")/.." && pwd)
build=${TRNSIM_BUILD_DIR:-$here/build}
jobs=${TRNSIM_JOBS:-$(nproc)}

pkgs=(build-essential cmake pkg-config libsystemc-dev verilator catch2 libboost-dev nlohmann-json3-dev
      python3 python3-matplotlib)
# The test suite also builds the fuzzers and the sanitizer build with clang, and reports clang-tidy on changes.
[ "$mode" = test ] && pkgs+=(clang libclang-rt-14-dev clang-tidy git)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$jobs"

case "$mode" in
  run)   "$build/apps/trnsim" run --preset trn2 --workload gemm --m 1024 --k 1024 --n 1024 --dtype bf16 ;;
  test)  status=0
         ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 600 || status=$?
         # clang-tidy on the sources the last commit changed: a report, not a gate.
         bash "$here/scripts/clang-tidy-report.sh" "$build" || true
         exit $status ;;
  build) ;;
  *) echo "setup: unknown mode '$mode' (run, test, build)" >&2; exit 2 ;;
esac

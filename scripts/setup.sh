#!/usr/bin/env bash
# Set-up on Debian 12 as root: installs what is missing, builds, then runs the main job or the test suite.
#   bash scripts/setup.sh run    # builds the trnsim binary only, then the default GEMM on the default preset (trn2)
#   bash scripts/setup.sh test   # builds everything (tests, harnesses, RTL), then the whole test suite through ctest
#   bash scripts/setup.sh build  # install + build everything, run nothing
set -euo pipefail
mode=${1:-run}
here=$(cd "$(dirname "$0")/.." && pwd)
build=${TRNSIM_BUILD_DIR:-$here/build}
jobs=${TRNSIM_JOBS:-$(nproc)}

pkgs=(build-essential cmake pkg-config libsystemc-dev verilator catch2 libboost-dev nlohmann-json3-dev
      python3 python3-matplotlib)
# The test suite also builds the fuzzers and the sanitizer build with clang, reports clang-tidy on changes, and
# submits a sweep to a private Slurm on localhost (the test installs nothing itself: it skips without Slurm).
[ "$mode" = test ] && pkgs+=(clang libclang-rt-14-dev clang-tidy git slurmctld slurmd slurm-client)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} (apt-get's own progress follows)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  # Slurm's packages would start their daemons with the distribution's config (the test runs its own, on private
  # ports): while installing, a policy-rc.d (unless there is one already) tells the packages not to start services.
  policy=/usr/sbin/policy-rc.d
  if [ "$mode" = test ] && [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy"
    trap 'rm -f "$policy"' EXIT
  fi
  apt-get install -y --no-install-recommends "${missing[@]}"
fi

echo "setup: configuring $build"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
case "$mode" in
  run) echo "setup: building trnsim (only what the run needs)"
       cmake --build "$build" -j "$jobs" --target trnsim ;;
  *)   echo "setup: building everything (tests, harnesses, RTL models)"
       cmake --build "$build" -j "$jobs" ;;
esac

case "$mode" in
  run)   "$build/apps/trnsim" run --preset trn2 --workload gemm --m 1024 --k 1024 --n 1024 --dtype bf16 ;;
  test)  status=0
         ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 600 || status=$?
         # ctest shows no output of skipped tests: their reasons (each prints "SKIP: why").
         grep -h '^SKIP: ' "$build"/Testing/Temporary/LastTest*.log 2>/dev/null | sort -u | sed 's/^/setup: skipped: /' || true
         # clang-tidy on the sources the last commit changed: a report, not a gate.
         bash "$here/scripts/clang-tidy-report.sh" "$build" || true
         exit $status ;;
  build) ;;
  *) echo "setup: unknown mode '$mode' (run, test, build)" >&2; exit 2 ;;
esac

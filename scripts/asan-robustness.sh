#!/bin/sh
# scripts/asan-robustness.sh BUILD_DIR: the whole simulator built with AddressSanitizer + UndefinedBehaviorSanitizer
# (gcc, the compiler Debian's SystemC is built with; -DTRNSIM_SANITIZE=address,undefined, RTL off) in BUILD_DIR, and
# the robustness suite (tests/robustness: every bad-input CLI case, the output rules, watchdogs, faults, the library
# cases) run under it, so that the simulator's error paths, which unwind out of SystemC processes, are checked too.
# Any sanitizer report fails the run: it stops the process with exit code 99, which no test expects.
#
# SystemC's processes run on QuickThreads coroutine stacks that ASan does not know (Debian's libsystemc has no
# fiber annotations and no pthread back end). Two consequences, handled here:
# - once a process has run on a coroutine stack, ASan cannot identify the current stack ("ignoring requested
#   __asan_handle_no_return"), so exceptions leave the redzones of the frames they unwind poisoned, and later
#   destructors on that stack get false stack-buffer-overflow / stack-use-after-scope reports (22 of the suite's
#   error paths with full instrumentation). Stack instrumentation is therefore off (gcc --param=asan-stack=0;
#   heap, use-after-free, globals and UBSan stay on); TRNSIM_ASAN_FLAGS replaces that flag;
# - LeakSanitizer walks the coroutine stacks, whose guard pages SystemC mprotects, and dies of SIGSEGV ("Tracer
#   caught signal 11"): leak detection is off (detect_leaks=0). Use-after-return detection is off (coroutine
#   stacks again).
# The sanitizer link keeps every library named (no --as-needed), so the plain test executables that link the
# testbench would need SystemC's sc_main: --as-needed drops libsystemc where nothing uses it.
# Usage: scripts/asan-robustness.sh /tmp/asan-build   (TRNSIM_JOBS=N for the build's parallelism)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$1
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRNSIM_SANITIZE=address,undefined -DTRNSIM_RTL=OFF \
      -DTRNSIM_NATIVE=OFF "-DCMAKE_CXX_FLAGS=${TRNSIM_ASAN_FLAGS---param=asan-stack=0}" -DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed >/dev/null
cmake --build "$build" -j "${TRNSIM_JOBS:-2}" --target trnsim robustness_unit_test robustness_sim_test hang_probe \
      fuzz_regressions_test >/dev/null
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=0:exitcode=99:detect_stack_use_after_return=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=99
log=$build/asan-robustness.log
# The clang fuzz and sanitizer jobs have their own builds: left out.
ctest --test-dir "$build" -R '^robustness/' -E 'fuzz_bounded|sanitized_unit_tests' -j "${TRNSIM_JOBS:-2}" \
      --output-on-failure >"$log" 2>&1 || status=$?
tail -n 5 "$log"
# A sanitizer report inside an expected failure (exit 1-3) must fail too: look for them in the whole log.
if grep -E 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer' "$log" >/dev/null; then
  echo "scripts/asan-robustness.sh: sanitizer reports in $log:"
  grep -E 'ERROR: AddressSanitizer|runtime error:' "$log" | sort | uniq -c | head -20
  exit 1
fi
exit "${status:-0}"

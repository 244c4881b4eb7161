#!/usr/bin/env bash
# scripts/clang-tidy-report.sh BUILD_DIR [BASE_REF]: clang-tidy (checks in .clang-tidy) on the C++ sources changed
# since BASE_REF (default: the commit before HEAD; with a clean tree and no history, every source), using the
# build's compile_commands.json. Writes BUILD_DIR/clang-tidy-report.txt and prints a summary: warnings are a
# report, never a failure (exit 0), unless clang-tidy itself is missing (exit 77, skipped).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: clang-tidy-report.sh BUILD_DIR [BASE_REF]}
base=${2:-HEAD~1}
tidy=$(command -v clang-tidy || command -v clang-tidy-14 || true)
[ -n "$tidy" ] || { echo "clang-tidy-report: clang-tidy not installed, skipping"; exit 77; }
[ -f "$build/compile_commands.json" ] || { echo "clang-tidy-report: no $build/compile_commands.json (configure first)"; exit 2; }
cd "$here"
if git rev-parse -q --verify "$base" >/dev/null 2>&1; then
  mapfile -t files < <(git diff --name-only --diff-filter=d "$base" -- '*.cpp' | grep -v '^fuzz/fuzz_')
else
  mapfile -t files < <(git ls-files '*.cpp' | grep -v '^fuzz/fuzz_')
fi
# Only files the build compiles (compile_commands.json knows them).
todo=()
for f in "${files[@]}"; do grep -q "\"file\": \"$here/$f\"" "$build/compile_commands.json" && todo+=("$f"); done
max=${TRNSIM_TIDY_MAX:-20}
if [ ${#todo[@]} -gt "$max" ]; then
  echo "clang-tidy-report: ${#todo[@]} files changed, checking the first $max (TRNSIM_TIDY_MAX)"
  todo=("${todo[@]:0:$max}")
fi
report=$build/clang-tidy-report.txt
: > "$report"
echo "clang-tidy-report: ${#todo[@]} changed source file(s) since $base" | tee -a "$report"
for f in "${todo[@]}"; do
  "$tidy" -p "$build" --quiet "$f" >> "$report" 2>/dev/null
done
warnings=$(grep -c ': warning:' "$report" || true)
echo "clang-tidy-report: $warnings warning(s); report in $report"
grep ': warning:' "$report" | sed 's/.*\[\(.*\)\]$/\1/' | sort | uniq -c | sort -rn | head -20
exit 0

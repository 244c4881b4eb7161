#!/bin/sh
# readme_commands.sh TRNSIM README WORKDIR: runs every command of README.md's command blocks (indented or fenced
# lines starting with `build/apps/trnsim`, with their `\` continuations), in order, in a fresh scratch directory
# WORKDIR that links the repository's docs/ and configs/ (the commands run as if from the repository's root), with
# `build/apps/trnsim` replaced by TRNSIM. Fails if any command fails, and lists them.
#
# Left out: `bash scripts/setup.sh ...` (they install packages and build). Where the build has no RTL (or not the
# waveform format or array size asked for), the RTL commands are skipped with that reason. A few commands run
# smaller, by the table below (README.md's "Tests" section says which): each substitution must apply to some
# command, so the table cannot silently go stale when the README changes.
set -u
trnsim=$1; readme=$2; work=$3
repo=$(cd "$(dirname "$readme")" && pwd)
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
ln -s "$repo/docs" docs; ln -s "$repo/configs" configs

python3 - "$readme" "$trnsim" > commands.txt <<'PY' || exit 1
import sys
readme, trnsim = sys.argv[1], sys.argv[2]
SUBST = [  # (what the README says, what the test runs): the same command, smaller
    ("--m 4096 --k 4096 --n 4096", "--m 1024 --k 1024 --n 1024"),  # 20 s of golden check -> 1 s
    ("--model llama-7b", "--model tiny"),                           # 15 s -> 0.4 s
]
lines = open(readme, encoding="utf-8").read().split("\n")
cmds, fenced, i = [], False, 0
while i < len(lines):
    raw = lines[i]
    if raw.strip().startswith("```"):
        fenced = not fenced
        i += 1
        continue
    text = raw.strip()
    in_block = fenced or raw.startswith("    ")  # an indented code block (also inside a list item)
    if in_block and text.startswith("build/apps/trnsim "):
        cmd = text
        while cmd.endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
        cmds.append(cmd)
    i += 1
used = [0] * len(SUBST)
out = []
for c in cmds:
    for k, (a, b) in enumerate(SUBST):
        if a in c:
            c = c.replace(a, b)
            used[k] += 1
    out.append(trnsim + c[len("build/apps/trnsim"):])
stale = [a for (a, _), n in zip(SUBST, used) if n == 0]
if stale:
    sys.exit("readme_commands.sh: no README command contains " + ", ".join(repr(a) for a in stale) +
             " any more: update the substitution table")
if len(out) < 5:
    sys.exit(f"readme_commands.sh: only {len(out)} commands found in {readme}")
print("\n".join(out))
PY

n=0; failed=0; skipped=0; list=""
while IFS= read -r cmd; do
  n=$((n + 1))
  start=$(date +%s)
  sh -c "$cmd" > "out$n.txt" 2>&1; rc=$?
  secs=$(( $(date +%s) - start ))
  if [ $rc -ne 0 ] && echo "$cmd" | grep -q "te.impl=rtl" &&
     grep -Eq "this build has no RTL|the RTL was built with" "out$n.txt"; then
    echo "SKIP  [$n] $cmd: $(grep -E 'RTL' "out$n.txt" | head -1)"
    skipped=$((skipped + 1))
  elif [ $rc -ne 0 ]; then
    echo "FAIL  [$n] (exit $rc, ${secs} s) $cmd"; sed 's/^/      | /' "out$n.txt" | tail -n 15
    failed=$((failed + 1)); list="$list [$n]"
  else
    echo "ok    [$n] (${secs} s) $cmd"
  fi
done < commands.txt
echo "readme_commands.sh: $n commands, $failed failed, $skipped skipped${list:+ (failed:$list)}"
[ $failed -eq 0 ]

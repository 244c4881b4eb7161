#!/usr/bin/env bash
# The repository stands alone: no file points outside it (at a sibling checkout's ../shared or an absolute
# /work path), and every docs/, configs/ or scripts/ path the README and docs/ name exists in the tree.
set -u
root=${1:?usage: self_contained.sh REPO_ROOT}
cd "$root" || exit 2
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files --cached --others --exclude-standard | grep -v '^tests/repo/self_contained.sh$')
else
  files=$(find . -path ./build -prune -o -path ./.git -prune -o -type f -print | sed 's|^\./||' |
          grep -v '^tests/repo/self_contained.sh$')
fi
status=0
# Outside references: ../shared/..., /work/...
hits=$(printf '%s\n' $files | while read -r f; do [ -f "$f" ] && grep -HnE '\.\./shared/|/work/(shared|main)' "$f"; done)
if [ -n "$hits" ]; then
  echo "self_contained: these lines point outside the repository:"; echo "$hits"; status=1
fi
# Paths named in the README and docs/ that must exist.
for doc in README.md docs/*.md; do
  for p in $(grep -oE '(docs|configs|scripts|bench|tests|apps)/[A-Za-z0-9_./-]+\.(md|json|sh|py|png|svg|csv)' "$doc" | sort -u); do
    case $p in *NAME*|configs/memspec/*) continue ;; esac  # placeholders; DRAMSys's own configs/memspec/
    [ -e "$p" ] || { echo "self_contained: $doc names $p, which is not in the tree"; status=1; }
  done
done
[ $status = 0 ] && echo "self_contained: no outside references; every named path exists"
exit $status

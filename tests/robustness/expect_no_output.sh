#!/bin/sh
# expect_no_output.sh FILE CODE REGEX COMMAND...: as expect.sh, and FILE (a --stats output of COMMAND) must not
# exist afterwards, nor a temporary of it (the writer's .FILE.*.tmp, or FILE.tmp): a failed run leaves no partial
# output.
file=$1; shift
rm -f "$file" "$file.tmp"
"$(dirname "$0")/expect.sh" "$@" || exit 1
for f in "$file" "$file.tmp" "$(dirname "$file")/.$(basename "$file")".*.tmp; do
  if [ -e "$f" ]; then echo "expect_no_output.sh: $f exists after a failed run"; exit 1; fi
done
exit 0

#!/bin/sh
# expect.sh CODE REGEX COMMAND...: runs COMMAND, passes if it exits with CODE and its whole output (stdout and
# stderr, newlines included, so a REGEX may span lines with .*) matches the extended REGEX.
code=$1; regex=$2; shift 2
out=$("$@" 2>&1); got=$?
printf '%s\n' "$out" | tail -n 30
if [ "$got" -ne "$code" ]; then echo "expect.sh: exit code $got, expected $code"; exit 1; fi
if ! printf '%s' "$out" | grep -Ezq -- "$regex"; then echo "expect.sh: output does not match /$regex/"; exit 1; fi
exit 0

#!/usr/bin/env bash
# A failure's one-line reproduction command reproduces it: run naive (quick), take the first
# "reproduce:" line, run it, and expect the same failure message.
# Usage: reproduction_test.sh SAMPCERT WORK_DIR
set -uo pipefail
sampcert="$1" work="$2"
rm -rf "$work" && mkdir -p "$work"
"$sampcert" run --sampler naive --profile quick --out "$work/full" > "$work/full.txt"
line="$(grep -m1 '  reproduce: sampcert run ' "$work/full.txt")" ||
  { echo "FAIL: no reproduction line in the summary"; exit 1; }
failure="$(grep -m1 -B3 '  reproduce: sampcert run ' "$work/full.txt" | grep -m1 -E '^(Fail|Crash|Timeout) ')"
read -r -a args <<<"${line#*reproduce: sampcert }"
"$sampcert" "${args[@]}" --out "$work/one" > "$work/one.txt"
rc=$?
if [ $rc -ne 1 ] || ! grep -qF -- "$failure" "$work/one.txt"; then
  echo "FAIL: '${line#*reproduce: }' (exit $rc) did not reproduce: $failure"; cat "$work/one.txt"; exit 1
fi
echo "reproduced with '${line#*reproduce: }': $failure"

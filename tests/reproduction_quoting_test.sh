#!/usr/bin/env bash
# Issue 11, point 4: a reproduction command pasted into a shell runs sampcert on the same
# plug-in and nothing else, even when the plug-in's path holds $(...), backquotes and spaces.
# Usage: reproduction_quoting_test.sh SAMPCERT WORK_DIR PLUGIN
set -uo pipefail
sampcert="$1" work="$2" plugin="$3"
rm -rf "$work" && mkdir -p "$work"
pdir="$work/a \$(touch $work/pwned) \`touch $work/pwned2\`"
mkdir -p "$pdir" && cp "$plugin" "$pdir/libp.so"
"$sampcert" run --sampler "$pdir/libp.so" --profile quick --out "$work/full" >"$work/full.txt" 2>&1
# The tool is not on PATH: the line names it by its path, and runs as pasted.
line="$(grep -m1 '  reproduce: /[^ ]*sampcert run ' "$work/full.txt")" ||
  { echo "FAIL: no reproduction line naming the tool by its path"; exit 1; }
cmd="${line#*reproduce: }"
(cd "$work" && bash -c "$cmd --out '$work/one'") >"$work/one.txt" 2>&1
rc=$?
if [ -e "$work/pwned" ] || [ -e "$work/pwned2" ]; then
  echo "FAIL: pasting '$cmd' ran a command from the path"; exit 1
fi
if [ $rc -ne 1 ]; then
  echo "FAIL: '$cmd' exited $rc, not 1 (the failure did not reproduce)"; cat "$work/one.txt"; exit 1
fi
echo "pasted '$cmd': exit $rc, nothing else ran"

#!/usr/bin/env bash
# The main job: certify every built-in sampler with the standard profile and write one report
# folder per sampler. stable_cpu must be conformant; naive and floor_fix are checked against
# their expectations (impls/<name>/expectations.json: the failures the suite must catch).
# Usage: cli/certify_builtins.sh [path/to/sampcert] [report folder]
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
sampcert="${1:-$here/build/release/cli/sampcert}"
out="${2:-sampcert-reports}"
status=0
for sampler in stable_cpu naive floor_fix; do
  echo "=== $sampler"
  "$sampcert" run --sampler "$sampler" --profile standard --jobs "$(nproc)" \
    --expect "$here/impls/$sampler/expectations.json" --out "$out/$sampler" | tail -n 3
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { echo "$sampler: unexpected result (exit $rc)"; status=1; }
done
echo "reports: $out/<sampler>/report.json"
exit $status

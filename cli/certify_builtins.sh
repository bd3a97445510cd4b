#!/usr/bin/env bash
# The main job: certify every built-in sampler with the standard profile and write one report
# folder per sampler. stable_cpu (and stable_cuda, where built and a device exists) must be
# CONFORMANT; naive and floor_fix must match their expectations exactly
# (impls/<name>/expectations.json: the failures the suite must catch), which is the outcome
# "NOT CONFORMANT: matches its N known failures, no new ones" (exit 0). Each run's summary is
# printed whole: the property table, the new failures, the known ones by property and the
# verdict's line.
# Usage: cli/certify_builtins.sh [path/to/sampcert] [report folder]
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
sampcert="${1:-$here/build/release/cli/sampcert}"
out="${2:-sampcert-reports}"
status=0

# check_outcome SAMPLER WANT: the report's verdict.outcome (reports/verdict.h) must be WANT.
check_outcome() {
  local got
  got="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"]["outcome"])' \
    "$out/$1/report.json" 2>/dev/null)"
  [ "$got" = "$2" ] || { echo "$1: outcome '$got', expected $2"; status=1; }
}

for sampler in stable_cpu naive floor_fix; do
  echo "=== $sampler"
  "$sampcert" run --sampler "$sampler" --profile standard --jobs "$(nproc)" \
    --expect "$here/impls/$sampler/expectations.json" --out "$out/$sampler"
  rc=$?
  [ "$rc" -eq 0 ] || { echo "$sampler: unexpected result (exit $rc)"; status=1; }
  case $sampler in
    stable_cpu) check_outcome "$sampler" Conformant ;;
    *) check_outcome "$sampler" MatchesExpectations ;;
  esac
done
# stable_cuda: certified like the others where it is built and a device exists; otherwise
# the script says it was skipped and why (no failure: the CPU samplers are still certified).
echo "=== stable_cuda"
cuda_err="$(mktemp)"
"$sampcert" run --sampler stable_cuda --profile standard --jobs "$(nproc)" \
  --expect "$here/impls/stable_cuda/expectations.json" --out "$out/stable_cuda" \
  2>"$cuda_err"
rc=$?
if grep -q "stable_cuda: no CUDA device" "$cuda_err"; then
  echo "stable_cuda: skipped ($(grep -o 'no CUDA device.*' "$cuda_err" | head -n 1))"
elif grep -q "no built-in sampler named 'stable_cuda'" "$cuda_err"; then
  echo "stable_cuda: skipped: this sampcert was built without CUDA (no nvcc at build time)"
elif [ "$rc" -ne 0 ]; then
  cat "$cuda_err" >&2
  echo "stable_cuda: unexpected result (exit $rc)"
  status=1
else
  check_outcome stable_cuda Conformant
fi
rm -f "$cuda_err"
echo "reports: $out/<sampler>/report.json"
exit $status

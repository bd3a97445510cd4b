#!/usr/bin/env bash
# Validates every kind of report the runner writes against reports/report.schema.json with a
# maintained validator (python3-jsonschema): conformant, failing, known-failure, crashed and timed-out
# results, an incomplete run, a merged report, and the golden file. Exit 77 (skipped) without python3-jsonschema.
# Usage: validate_reports_test.sh SAMPCERT SOURCE_DIR WORK_DIR MISBEHAVING_PLUGIN
set -uo pipefail
sampcert="$1" src="$2" work="$3" misbehaving="$4"
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null || {
  echo "SKIP: python3-jsonschema is not installed (apt-get install python3-jsonschema)"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
"$sampcert" run --sampler stable_cpu --profile quick --out "$work/stable" >/dev/null
# Known failures: floor_fix's quick run, pinned by an expectations file written from it (its
# standard run against impls/floor_fix/expectations.json costs minutes under the sanitizers); the
# waived run certifies one dtype against it (the schema is the same for every dtype; a whole
# quick run costs about two minutes of the sanitizer stage's 2 cores, and this test took 724 s
# there when it made six). naive's failing report is its two shards' (below).
"$sampcert" run --sampler floor_fix --profile quick --out "$work/floor_fix" >/dev/null
"$sampcert" report expectations "$work/floor_fix/report.json" -o "$work/floor_fix.json" \
  >/dev/null
"$sampcert" run --sampler floor_fix --profile quick --dtype bf16 \
  --expect "$work/floor_fix.json" --out "$work/waived" >/dev/null
"$sampcert" run --sampler "$misbehaving" --profile quick --jobs 2 --item-timeout 3 \
  --out "$work/misbehaving" >/dev/null
# Stopped by the time budget: an incomplete report.
"$sampcert" run --sampler "$misbehaving" --profile quick --item-timeout 30 --time-budget 1 \
  --out "$work/incomplete" >/dev/null
# Interrupted by SIGINT: an incomplete report with its signal.
"$sampcert" run --sampler stable_cpu --profile standard --out "$work/interrupted" >/dev/null &
sleep 5 && kill -INT $! && wait $!
for i in 0 1; do
  "$sampcert" run --sampler naive --profile quick --shard $i/2 --out "$work/shard$i" >/dev/null
done
"$sampcert" report merge "$work/shard0/report.json" "$work/shard1/report.json" \
  --out "$work/merged" >/dev/null
grep -q '"Crash"' "$work/misbehaving/report.json" || { echo "FAIL: no Crash status written"; exit 1; }
grep -q '"Timeout"' "$work/misbehaving/report.json" || { echo "FAIL: no Timeout status written"; exit 1; }
grep -q '"complete": false' "$work/incomplete/report.json" ||
  { echo "FAIL: no incomplete report written"; exit 1; }
grep -q '"KnownFailure"' "$work/waived/report.json" ||
  { echo "FAIL: no KnownFailure status written"; exit 1; }
exec /usr/bin/python3 "$src/reports/validate_reports.py" "$src/reports/report.schema.json" \
  "$src/reports/testdata/report.json" "$src/reports/testdata/report.known.json" \
  "$work"/*/report.json

#!/usr/bin/env bash
# An interrupted run, and a partial one, never read as a verdict (SPEC section 11, "Outcomes and
# exit codes"): SIGINT in the middle of a standard run of stable_cpu (a sampler with no failure,
# so that only the interruption can keep it from CONFORMANT) must give exit 130 and INCOMPLETE in
# report.json, the HTML, JUnit and on stdout, without the word CONFORMANT anywhere; one shard of
# a run, and a filtered run, must read PARTIAL the same way.
# Usage: interrupted_run_test.sh SAMPCERT WORK_DIR
set -uo pipefail
sampcert="$1" work="$2"
rm -rf "$work" && mkdir -p "$work"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
py=/usr/bin/python3

# no_verdict DIR STDOUT OUTCOME WORD: every format of DIR's report set says OUTCOME, starts its
# verdict with WORD and never says CONFORMANT.
no_verdict() {
  local dir="$1" stdout="$2" outcome="$3" word="$4"
  "$py" - "$dir/report.json" "$outcome" <<'EOF' || fail "$dir/report.json: see above"
import json, sys
v = json.load(open(sys.argv[1]))["verdict"]
ok = (v["outcome"] == sys.argv[2] and v["conformant"] is False and not v["certified"] and
      "CONFORMANT" not in v["text"])
print(("ok  " if ok else "BAD ") + "report.json verdict: " + json.dumps(v)[:400])
sys.exit(0 if ok else 1)
EOF
  grep -q "class=\"verdict ${outcome,,}\">$word" "$dir/report.html" ||
    fail "$dir/report.html: no '$word' verdict of class ${outcome,,}"
  grep -q 'class="verdict ok"' "$dir/report.html" && fail "$dir/report.html: a green verdict"
  for f in "$dir/report.html" "$dir/report.junit.xml" "$stdout"; do
    grep -q "CONFORMANT" "$f" && fail "$f says CONFORMANT: $(grep -m1 -o '.\{0,60\}CONFORMANT.\{0,40\}' "$f")"
  done
  # stdout: the verdict comes first (right after the header line) and last.
  [ "$(sed -n 2p "$stdout" | cut -c1-${#word})" = "$word" ] ||
    fail "$stdout: line 2 is not the $word verdict: $(sed -n 2p "$stdout")"
  grep -q "^verdict: $word" "$stdout" || fail "$stdout: no 'verdict: $word' line"
}

# --- SIGINT mid-run, as soon as the first item has finished: the run's progress line (written
# to a terminal only, so the run gets one from `script`) says "[1/N]". The standard profile (9 s
# idle with --jobs 2, N = 91 items) is far from done then, on any machine and load; no wall-clock
# delay decides what is tested (the earlier tries at 15, 30 and 60 s, of the full profile, took
# 105 s under CI's load).
rm -rf "$work/interrupted"
mkdir -p "$work/interrupted"
SAMPCERT_BIN="$sampcert" OUT_DIR="$work/interrupted" PID_FILE="$work/interrupted.pid" \
  script -qfec 'echo $$ > "$PID_FILE"; exec "$SAMPCERT_BIN" run --sampler stable_cpu --profile standard --jobs 2 --out "$OUT_DIR"' \
  /dev/null >"$work/interrupted.out" 2>"$work/interrupted.err" </dev/null &
script_pid=$!
first_item=0
for _ in $(seq 1 6000); do  # at most 10 minutes (ctest's limit is 15)
  if grep -aqE '\[[1-9][0-9]*/[0-9]+\]' "$work/interrupted.out"; then
    first_item=1
    break
  fi
  kill -0 $script_pid 2>/dev/null || break
  sleep 0.1
done
[ "$first_item" -eq 1 ] || fail "no progress line for a finished item within 10 minutes"
kill -INT "$(cat "$work/interrupted.pid")"
wait $script_pid
rc=$?
finished=$("$py" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["results"]))' \
  "$work/interrupted/report.json" 2>/dev/null || echo 0)
echo "SIGINT after the first finished item: exit $rc, $finished results finished"
[ "$finished" -gt 0 ] || fail "interrupted run: no result finished before SIGINT"
[ "$rc" -eq 130 ] || fail "interrupted run: exit $rc, expected 130"
[ -f "$work/interrupted/report.json" ] || { fail "no report written"; exit 1; }
no_verdict "$work/interrupted" "$work/interrupted.out" Incomplete INCOMPLETE
grep -q '<error type="Incomplete" message="INCOMPLETE, no verdict: interrupted by SIGINT' \
  "$work/interrupted/report.junit.xml" || fail "JUnit has no Incomplete error"
"$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); c=r["completeness"]
print(len(r["results"]), "results finished before SIGINT")
sys.exit(0 if (c["complete"], c.get("signal"), r["verdict"]["exit_code"]) == (False, 2, 130) else 1)' \
  "$work/interrupted/report.json" || fail "completeness or exit_code of the interrupted report"

# --- One shard of a run and a filtered run: PARTIAL, exit 0 (no failure in the part).
"$sampcert" run --sampler stable_cpu --profile quick --shard 1/3 --out "$work/shard" \
  >"$work/shard.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "shard: exit $rc, expected 0"
no_verdict "$work/shard" "$work/shard.out" Partial PARTIAL
grep -q 'verdict: PARTIAL, no verdict for the sampler: shard 1/3; no new failure in this part' \
  "$work/shard.out" || fail "shard: the verdict does not say it is no certificate"
grep -q '<skipped type="Partial"' "$work/shard/report.junit.xml" || fail "JUnit: no Partial"
"$sampcert" run --sampler stable_cpu --profile quick --dtype f16 --out "$work/filtered" \
  >"$work/filtered.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "filtered: exit $rc, expected 0"
no_verdict "$work/filtered" "$work/filtered.out" Partial PARTIAL
grep -q 'PARTIAL, no verdict for the sampler: filtered: --dtype f16' "$work/filtered.out" ||
  fail "filtered: scope not named"

[ $failures -eq 0 ] && echo "PASS: interrupted and partial runs read INCOMPLETE / PARTIAL everywhere"
exit $((failures > 0))

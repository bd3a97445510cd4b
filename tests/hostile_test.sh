#!/usr/bin/env bash
# One isolation case: runs `sampcert run` (and for some cases `info` and `sample`) on the hostile
# plug-in with the misbehavior CASE (SAMPCERT_HOSTILE, see plugins/hostile_plugin.c; plugins/batch_plugin.c for
# the batch_* cases) and checks the exit code, the message and the report.
# Usage: hostile_test.sh CASE SAMPCERT PLUGIN WORKDIR
set -u
case_name=$1 sampcert=$2 plugin=$3 work=$4/$1
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
out="$work/report"
fail() { echo "FAIL [$case_name]: $*"; echo "--- stdout"; cat stdout 2>/dev/null; echo "--- stderr"; cat stderr 2>/dev/null; exit 1; }

# Runs the quick profile with the case's misbehavior; sets $rc.
run() {
  SAMPCERT_HOSTILE=${mode:-$case_name} SAMPCERT_HOSTILE_MARKER="$work/marker" \
    "$sampcert" run --sampler "$plugin" --profile quick --item-timeout 20 --out "$out" "$@" \
    >stdout 2>stderr
  rc=$?
}
expect_rc() { [ "$rc" -eq "$1" ] || fail "exit code $rc, expected $1"; }
expect_err() { grep -Eq -- "$1" stderr || fail "stderr does not match /$1/"; }
expect_report() { grep -Eq -- "$1" "$out/report.json" || fail "report.json does not match /$1/"; }
# No process of this case's run is left (the workers and anything they forked); any that is
# gets killed by its pid once reported, so that a failing case leaves nothing behind either.
expect_no_leftovers() {
  local pattern=${1:---out $out}
  sleep 1
  local left
  left=$(pgrep -f -- "$pattern")
  if [ -n "$left" ]; then
    pgrep -af -- "$pattern"
    for p in $left; do kill -KILL "$p" 2>/dev/null; done
    fail "processes of the run outlived it"
  fi
}

# A run that did not cover the whole plan is no verdict anywhere: not in report.json, the HTML or
# the terminal, which says WORD (INCOMPLETE: interrupted or budget-stopped, whose JUnit file
# also carries an Incomplete error; PARTIAL: a shard or a filtered run).
expect_no_verdict() {
  local word=${1:-INCOMPLETE}
  python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["verdict"]
sys.exit(0 if v["conformant"] is False and v["certified"] == [] else 1)' "$out/report.json" ||
    fail "a $word run's report.json says conformant or certifies something"
  ! grep -q "CONFORMANT" stdout || fail "a $word run's summary says CONFORMANT"
  grep -q "verdict: $word" stdout || fail "no $word verdict line"
  ! grep -q ">CONFORMANT<\|>NOT CONFORMANT<" "$out/report.html" ||
    fail "a $word run's HTML shows a verdict"
  if [ "$word" = INCOMPLETE ]; then
    grep -q 'type="Incomplete"' "$out/report.junit.xml" ||
      fail "an incomplete run's JUnit has no error for it"
  fi
}
# Waits up to $2 s for process $1 to end (a zombie counts as ended); false if it did not.
wait_end() {
  local i state
  for ((i = 0; i < $2 * 10; ++i)); do
    state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)
    [ -z "$state" ] || [ "$state" = Z ] && return 0
    sleep 0.1
  done
  return 1
}
# Runs `sampcert run` on a spinning case in its own session (so that an attack on the tool's
# process group reaches nothing else), SIGTERMs it after 3 s and sets $rc. A tool that does not
# end within 60 s of the SIGTERM is resumed, killed and reported as stalled.
run_and_interrupt() {
  SAMPCERT_HOSTILE=$1 setsid "$sampcert" run --sampler "$plugin" --profile quick --jobs 2 \
    --item-timeout 20 --out "$out" >stdout 2>stderr &
  local parent=$!
  sleep 3
  kill -TERM "$parent" 2>/dev/null
  if ! wait_end "$parent" 60; then
    kill -CONT "$parent"; sleep 1; kill -KILL "$parent"; wait "$parent"
    expect_no_leftovers
    fail "the tool stalled: it did not end within 60 s of a SIGTERM"
  fi
  wait "$parent"
  rc=$?
}
# The exit code and first stderr line of one command on the hostile plug-in (for same_status).
status_of() {  # MODE COMMAND ARGS...
  local m=$1
  shift
  SAMPCERT_HOSTILE=$m timeout -k 5 120 "$sampcert" "$@" >stdout 2>stderr
  echo "$?"
}

case $case_name in
  ctor_segv | get_info_segv | create_segv)
    run; expect_rc 3
    # SIGSEGV, or under AddressSanitizer (which catches the fault itself) its exit status.
    expect_err "cannot load the sampler: .*(signal 11|exited with status [1-9])"
    call=${case_name%_segv}
    [ "$call" = ctor ] && call=dlopen
    expect_err "during $call"
    ;;
  ctor_exit0 | get_info_exit0 | create_exit0)
    run; expect_rc 3
    call=${case_name%_exit0}
    [ "$call" = ctor ] && call=dlopen
    expect_err "cannot load the sampler: the sampler's worker exited with status 0 during $call"
    ;;
  thread_crash)
    run; expect_rc 1
    expect_report '"status": "Crash"'
    expect_report "signal 11|exited with status"
    ;;
  chdir)
    # The reports land where they were asked for (relative to the caller's directory).
    SAMPCERT_HOSTILE=chdir "$sampcert" run --sampler "$plugin" --profile quick --out rel \
      >stdout 2>stderr
    rc=$?; expect_rc 0
    [ -f "$work/rel/report.json" ] || fail "no report at ./rel/report.json"
    ;;
  fork_child)
    start=$(date +%s)
    run; expect_rc 0
    [ $(($(date +%s) - start)) -lt 120 ] || fail "took $(($(date +%s) - start)) s"
    expect_no_leftovers
    ;;
  forge)
    run; expect_rc 1
    expect_report '"status": "Crash"'
    # Caught by the call trace (it ended during sample()), else by the missing nonce.
    expect_report "exited with status 0 during sample\\(\\)|nonce"
    ! grep -q '"status": "Pass"' "$out/report.json" || fail "a forged item passed"
    ;;
  exit_in_sample)
    run; expect_rc 1
    expect_report "exited with status 3 during sample\\(\\)"
    ;;
  kill_own_group)
    # The body's kill of its own group is allowed; the message names the sampler as a possible
    # sender (it said "a SIGKILL from outside the run").
    run; expect_rc 1
    expect_report "a SIGKILL the tool did not send: from the sampler itself"
    ;;
  traceme)
    # It said "exited with status -1".
    run; expect_rc 1
    expect_report '"status": "Crash"'
    ! grep -q "exited with status -1" "$out/report.json" || fail "a stop read as exit status -1"
    ;;
  write_past_out)
    run; expect_rc 1
    expect_report '"property": "ABI-1"'
    expect_report "sample\\(\\) wrote past the end of its output buffer"
    ;;
  write_logits)
    run; expect_rc 1
    expect_report "sample\\(\\) wrote into row 0's logits \\(a const input\\)"
    ;;
  unterminated_error)
    # INV-ERR-1 checks the error report too (SPEC section 5): NUL-terminated, naming its row.
    run; expect_rc 1
    expect_report '"property": "INV-ERR-1"'
    expect_report "the error report is malformed"
    ;;
  info_flip)
    run; expect_rc 1
    expect_report "get_info in this item's worker differs from what the describe step saw"
    ;;
  name_bad_utf8)
    run; expect_rc 0
    python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["sampler"]["name"]
sys.exit(0 if n.startswith("hostile\ufffd") else 1)' "$out/report.json" ||
      fail "the name is not the plug-in's with U+FFFD for the invalid bytes"
    ;;
  sigterm | sigint | sigkill)
    sig=${case_name#sig}
    SAMPCERT_HOSTILE=spin "$sampcert" run --sampler "$plugin" --profile quick --jobs 2 \
      --out "$out" >stdout 2>stderr &
    parent=$!
    sleep 3
    kill -"${sig^^}" $parent
    wait $parent
    rc=$?
    case $sig in
      term) expect_rc 143 ;;
      int) expect_rc 130 ;;
      kill) expect_rc 137 ;;
    esac
    if [ "$sig" != kill ]; then
      expect_report '"complete": false'
      expect_report "interrupted by SIG${sig^^}"
      expect_no_verdict
    fi
    expect_no_leftovers
    ;;
  ulimit_files)
    (ulimit -n 9 && SAMPCERT_HOSTILE=none "$sampcert" run --sampler "$plugin" --profile quick \
      --out "$out" >stdout 2>stderr)
    rc=$?; expect_rc 4
    expect_err "host error: .*open-file limit"
    ;;
  partial_run)
    # A shard or a filtered run is part of the plan: it exits by what it covered (0 here, a
    # correct sampler) but says PARTIAL, never CONFORMANT, and certifies nothing.
    for part in "--shard 1/2" "--dtype f32"; do
      # shellcheck disable=SC2086
      mode=none run $part; expect_rc 0
      expect_no_verdict PARTIAL
    done
    ;;
  speed_crash | speed_spin)
    # SPEC REPORT-3: a sampler that crashes or spins in the speed phase (only there: correct in
    # the run) has its speed recorded as crash / timeout, and the run, its verdict and its exit
    # code are those of a correct sampler. --item-timeout bounds the speed worker's CPU time too.
    SAMPCERT_HOSTILE=$case_name "$sampcert" run --sampler "$plugin" --profile quick \
      --item-timeout 2 --out "$out" >stdout 2>stderr
    rc=$?; expect_rc 0
    if [ "$case_name" = speed_crash ]; then
      want=crash why="signal 11|exited with status"
    else
      want=timeout why="2 s of CPU time"
    fi
    python3 - "$out/report.json" "$want" <<'PY' || fail "report.json's speed is not '$want' beside a CONFORMANT verdict"
import json, sys
r = json.load(open(sys.argv[1]))
s = r["speed"]
assert s["status"] == sys.argv[2] and s["shapes"] == [] and s["informational"], s
assert r["verdict"]["outcome"] == "Conformant" and r["verdict"]["exit_code"] == 0, r["verdict"]
PY
    expect_report "$why"
    grep -Eq "^speed \(informational, not part of the verdict\): not measured, $want in the speed phase: .*during sample\(\)" stdout ||
      fail "no speed line naming the $want"
    grep -q "^verdict: CONFORMANT" stdout || fail "the verdict changed"
    grep -q "id=\"speed\">speed (informational" "$out/report.html" || fail "no speed line in the HTML"
    expect_no_leftovers
    if [ "$case_name" = speed_spin ]; then
      # SIGINT in the speed phase ends it at once (not at its 10 s of CPU): the whole run's
      # report and verdict, without a speed section.
      rm -rf "$out" "$work/marker"
      SAMPCERT_HOSTILE=speed_spin SAMPCERT_HOSTILE_MARKER="$work/marker" "$sampcert" run \
        --sampler "$plugin" --profile quick --out "$out" >stdout 2>stderr &
      pid=$!
      for ((i = 0; i < 600; ++i)); do [ -e "$work/marker" ] && break; sleep 0.1; done
      [ -e "$work/marker" ] || { kill -KILL "$pid"; fail "the speed phase did not begin in 60 s"; }
      kill -INT "$pid"
      wait_end "$pid" 5 || { kill -KILL "$pid"; fail "the tool did not end within 5 s of SIGINT"; }
      wait "$pid"
      rc=$?; expect_rc 0
      ! grep -q '"speed"' "$out/report.json" || fail "an interrupted speed phase left a section"
      grep -q "^verdict: CONFORMANT" stdout || fail "no verdict after SIGINT in the speed phase"
      expect_no_leftovers
    fi
    ;;
  speed_report)
    # SPEC REPORT-3 on a built-in sampler: a speed section with sane numbers beside the verdict,
    # the quick profile's shapes (V 32000; 1 row x 15 calls, 32 rows x 5 calls: stable_cpu
    # declares batch); none with --no-speed, for a shard, or in a merge of shards (these on the
    # plug-in, a correct sampler without a misbehavior, for time).
    "$sampcert" run --sampler stable_cpu --profile quick --out "$out" >stdout 2>stderr
    rc=$?; expect_rc 0
    python3 - "$out/report.json" <<'PY' || fail "report.json's speed section is not sane"
import json, os, sys
s = json.load(open(sys.argv[1]))["speed"]
assert s["status"] == "measured" and "message" not in s, s
assert s["informational"] is True and s["draws_per_row"] == 1 and s["dtype"] == "f32", s
assert s["vocab"] == 32000, s
assert [(x["rows"], x["calls"]) for x in s["shapes"]] == [(1, 15), (32, 5)], s
for x in s["shapes"]:
    # Positive, and below a second per row (a V=32000 row is microseconds here).
    assert 0 < x["ns_per_row"] < 1e9, x
    assert abs(x["rows_per_s"] * x["ns_per_row"] - 1e9) < 1e3, x
assert s["machine"]["cores"] == os.cpu_count() and s["machine"]["cpu"], s
assert 0 < s["seconds"] < 30, s
PY
    grep -Eq "^speed \(informational, not part of the verdict\): f32 V=32000: 1 row [0-9.]+ [num]?s/row \([0-9.]+ k? ?rows/s\); 32 rows" stdout ||
      fail "no speed line in the terminal"
    [ "$(grep -A1 '^speed ' stdout | tail -1 | cut -c1-8)" = "verdict:" ] ||
      fail "the speed line is not beside the verdict's"
    grep -q "id=\"speed\">speed (informational, not part of the verdict): f32 V=32000" \
      "$out/report.html" || fail "no speed line in the HTML"
    for part in no_speed:--no-speed shard0:--shard=0/2 shard1:--shard=1/2; do
      SAMPCERT_HOSTILE=none "$sampcert" run --sampler "$plugin" --profile quick \
        --out "$work/${part%%:*}" "${part#*:}" >stdout 2>stderr
      rc=$?; expect_rc 0
      ! grep -q '"speed"' "$work/${part%%:*}/report.json" || fail "${part#*:}: a speed section"
      ! grep -q "^speed " stdout || fail "${part#*:}: a speed line"
    done
    "$sampcert" report merge "$work/shard0/report.json" "$work/shard1/report.json" \
      --out "$work/merged" >stdout 2>stderr || fail "merge failed"
    ! grep -q '"speed"' "$work/merged/report.json" || fail "the merge has a speed section"
    ;;
  time_budget)
    mode=spin run --time-budget 2; expect_rc 5
    expect_report '"complete": false'
    expect_report "stopped by --time-budget"
    expect_no_verdict
    ! grep -q '"status": "Timeout"' "$out/report.json" || fail "the budget turned items into Timeout"
    ;;
  same_status)
    # info, sample and run give the same status for the same hostile plug-in: loading failures
    # are exit 3 from all three; a crash, exit() or endless loop in sample() is exit 1 from
    # sample and run (info does not draw).
    one=(--item f32/near_ties_V16 --item-timeout 2 --out "$out")
    for m in ctor_segv ctor_exit0 get_info_segv get_info_exit0 create_segv create_exit0; do
      for cmd in "info --sampler $plugin" "sample --sampler $plugin --logits 1,2,3" \
                 "run --sampler $plugin --profile quick ${one[*]}"; do
        # shellcheck disable=SC2086
        got=$(status_of "$m" $cmd)
        [ "$got" = 3 ] || fail "$m: '$cmd' exited $got, want 3 like the other commands"
        grep -q "cannot load the sampler" stderr || fail "$m: '$cmd' does not name the cause"
      done
    done
    for m in exit_in_sample thread_crash spin; do
      got=$(status_of "$m" sample --sampler "$plugin" --logits 1,2,3 --item-timeout 2)
      [ "$got" = 1 ] || fail "$m: sample exited $got, want 1 (as run does)"
      grep -Eq "sampler (crash|timeout): " stderr || fail "$m: sample does not name the cause"
      got=$(status_of "$m" run --sampler "$plugin" --profile quick "${one[@]}")
      [ "$got" = 1 ] || fail "$m: run exited $got, want 1"
      got=$(status_of "$m" info --sampler "$plugin")
      [ "$got" = 0 ] || fail "$m: info exited $got, want 0 (it does not call sample)"
    done
    rc=0
    ;;
  setpgid_child | setsid_child | orphan_child)
    # A child that leaves the worker's process group or session, or is orphaned, dies with it.
    run; expect_rc 0
    expect_no_leftovers
    ;;
  exec_holder_info | exec_holder_sample)
    # An exec: child that forks a holder of its pipes and exits: the holder dies with the worker.
    holder="sleep 611.$$"
    cmd=(info)
    [ "$case_name" = exec_holder_sample ] && cmd=(sample --logits 1,2,3)
    # The holder keeps the protocol's sockets open, so the call waits for SAMPCERT_EXEC_TIMEOUT.
    SAMPCERT_EXEC_TIMEOUT=3 timeout -k 5 120 "$sampcert" "${cmd[@]}" \
      --sampler "exec:sh -c '$holder & exit 0'" >stdout 2>stderr
    rc=$?
    expect_no_leftovers "$holder"
    expect_rc 3
    expect_err "cannot load the sampler"
    ;;
  fake_verdict)
    # The worker's stdout and stderr are not the tool's: no screen clear, no fake verdict.
    run; expect_rc 0
    for cmd in "info --sampler $plugin" "sample --sampler $plugin --logits 1,2,3"; do
      # shellcheck disable=SC2086
      SAMPCERT_HOSTILE=fake_verdict "$sampcert" $cmd >>stdout 2>>stderr || fail "'$cmd' failed"
    done
    ! grep -q FAKE-VERDICT stdout stderr || fail "the plug-in's output reached the terminal"
    ! grep -q $'\x1b' stdout stderr || fail "an escape sequence reached the terminal"
    ;;
  flood_output)
    # Endless output of the worker neither reaches the terminal nor starves the run: the item
    # is a Timeout on its CPU time, and the tool's own output stays a few lines.
    SAMPCERT_HOSTILE=flood_output "$sampcert" run --sampler "$plugin" --profile quick \
      --item f32/near_ties_V16 --item-timeout 2 --out "$out" >stdout 2>stderr
    rc=$?; expect_rc 1
    expect_report '"status": "Timeout"'
    [ "$(wc -c <stdout)" -lt 65536 ] || fail "the worker's output reached the tool's stdout"
    ;;
  sigstop_tool | sigkill_tool | ptrace_tool)
    # A plug-in that stops, kills or traces the tool (and its process group): refused by the
    # workers' system-call filter, so SIGTERM still ends the run with a report.
    run_and_interrupt "$case_name"
    expect_rc 143
    expect_report '"complete": false'
    expect_report "interrupted by SIGTERM"
    expect_no_leftovers
    ;;
  sabotage_out)
    # The report folder replaced by a file during the run: publishing fails, the results are
    # saved in a fresh folder named in the error.
    SAMPCERT_HOSTILE_OUT="$out" run; expect_rc 4
    expect_err "the results are saved in "
    saved=$(sed -n 's/.*the results are saved in //p' stderr)
    [ -f "$saved/report.json" ] || fail "no report.json in '$saved'"
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
sys.exit(0 if r["results"] and r["completeness"]["complete"] else 1)' "$saved/report.json" ||
      fail "the saved report has no results or is not complete"
    ;;
  write_batch)
    run; expect_rc 1
    expect_report "sample\\(\\) wrote into the batch struct \\(a const input\\)"
    ;;
  no_caps)
    # No capability, no plan: said as such, not blamed on filters nobody gave.
    run; expect_rc 3
    expect_err "declares no dtype \\(capabilities: none\\)"
    ! grep -q "together select no plan item" stderr || fail "the filters are blamed"
    ;;
  batch_reversed | batch_bad_token | batch_control)
    # BATCH-1 / RANGE-1 check every token of every row of every call (tests/plugins/
    # batch_plugin.c, which declares batch): rows returned in reverse order, or token -5 in the
    # first and last rows, fail; the correct control passes them on every case.
    mode=$case_name run
    property_status() {  # PROPERTY: the set of its statuses in the report
      python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
print(" ".join(sorted({x["status"] for x in r["results"] if x["property"] == sys.argv[2]})))' \
        "$out/report.json" "$1"
    }
    case $case_name in
      batch_reversed) expect_rc 1; [ "$(property_status BATCH-1)" = Fail ] || fail "BATCH-1 did not fail" ;;
      batch_bad_token)
        expect_rc 1
        [ "$(property_status RANGE-1)" = Fail ] || fail "RANGE-1 did not fail"
        [ "$(property_status BATCH-1)" = Fail ] || fail "BATCH-1 did not fail"
        expect_report "token id -5 outside"
        ;;
      batch_control)
        expect_rc 0
        [ "$(property_status BATCH-1)" = Pass ] || fail "BATCH-1 did not pass on every case"
        ;;
    esac
    ;;
  *) fail "unknown case" ;;
esac
echo "PASS [$case_name] (exit $rc)"

#!/usr/bin/env bash
# One isolation case (issue 11): runs `sampcert run` on the hostile plug-in with the
# misbehavior CASE (SAMPCERT_HOSTILE, see plugins/hostile_plugin.c) and checks the exit code, the
# message and the report. Usage: hostile_test.sh CASE SAMPCERT PLUGIN WORKDIR
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
# No process of this case's run is left (the workers and anything they forked).
expect_no_leftovers() {
  sleep 1
  if pgrep -f -- "--out $out" >/dev/null; then
    pgrep -af -- "--out $out"
    fail "processes of the run outlived it"
  fi
}

case $case_name in
  ctor_segv | get_info_segv | create_segv)
    run; expect_rc 2
    # SIGSEGV, or under AddressSanitizer (which catches the fault itself) its exit status.
    expect_err "cannot load the sampler: .*(signal 11|exited with status [1-9])"
    call=${case_name%_segv}
    [ "$call" = ctor ] && call=dlopen
    expect_err "during $call"
    ;;
  ctor_exit0 | get_info_exit0 | create_exit0)
    run; expect_rc 2
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
    fi
    expect_no_leftovers
    ;;
  ulimit_files)
    (ulimit -n 9 && SAMPCERT_HOSTILE=none "$sampcert" run --sampler "$plugin" --profile quick \
      --out "$out" >stdout 2>stderr)
    rc=$?; expect_rc 2
    expect_err "host error: .*open-file limit"
    ;;
  time_budget)
    mode=spin run --time-budget 2; expect_rc 1
    expect_report '"complete": false'
    expect_report "stopped by --time-budget"
    ! grep -q '"status": "Timeout"' "$out/report.json" || fail "the budget turned items into Timeout"
    ;;
  *) fail "unknown case" ;;
esac
echo "PASS [$case_name] (exit $rc)"

#!/usr/bin/env bash
# Issue 11, points 4-7, through the `sampcert` binary: hostile text (non-UTF-8 and ANSI escapes
# in a sampler's name, version, messages and path), options validated before any work (exit 2),
# strict report tools (merge, diff, html/junit) and the report set.
# Usage: cli_hardening_test.sh SAMPCERT WORK_DIR HOSTILE_PLUGIN
# With SURVEY=1 it checks nothing and prints "case | exit code | first line of output" per case
# (how the before/after table of the issue's closing note was measured).
set -uo pipefail
sampcert="$1" work="$2" hostile="$3"
survey="${SURVEY:-0}"
rm -rf "$work" && mkdir -p "$work"
failures=0
py=/usr/bin/python3

# run_case NAME WANT_RC CMD...: runs CMD (60 s at most), keeps its output in $work/NAME.out.
run_case() {
  local name="$1" want="$2"
  shift 2
  timeout 120 "$@" >"$work/$name.out" 2>&1
  rc=$?
  if [ "$survey" = 1 ]; then
    printf '%s | %s | %s\n' "$name" "$rc" "$(grep -m1 -v '^$' "$work/$name.out" | cut -c1-100 | cat -v)"
  elif [ "$rc" != "$want" ]; then
    echo "FAIL $name: exit $rc, want $want"; sed 's/^/    /' "$work/$name.out" | head -5 | cat -v
    failures=$((failures + 1))
  fi
}
# check NAME CONDITION...: a further check on a case (skipped in survey mode).
check() {
  local name="$1"
  shift
  [ "$survey" = 1 ] && return 0
  if ! "$@"; then echo "FAIL $name: $*"; failures=$((failures + 1)); fi
}
no_esc() { ! grep -q $'\x1b' "$1"; }
has() { grep -qF -- "$2" "$1"; }

# ---- Point 4: text. The plug-in sits in a folder whose name holds $(...) and a non-UTF-8 byte.
pdir="$work/dir \$(touch $work/pwned) "$'\xff'
mkdir -p "$pdir" && cp "$hostile" "$pdir/libhostile.so"
run_case text.hostile_run 1 "$sampcert" run --sampler "$pdir/libhostile.so" --profile quick \
  --out "$work/hostile"
check text.report_is_utf8_json "$py" -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))' "$work/hostile/report.json"
check text.junit_is_well_formed "$py" -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$work/hostile/report.junit.xml"
check text.no_escape_reaches_the_terminal no_esc "$work/text.hostile_run.out"
check text.verdict_not_spoofed has "$work/text.hostile_run.out" "verdict: NOT CONFORMANT"
check text.name_shown_escaped has "$work/text.hostile_run.out" '\x1b[32mCONFORMANT'
run_case text.info_escaped 0 "$sampcert" info --sampler "$pdir/libhostile.so"
check text.info_no_escape no_esc "$work/text.info_escaped.out"
check text.nothing_ran test ! -e "$work/pwned"

# ---- Point 5: options, each refused with exit 2 before any work.
S=(run --sampler stable_cpu --profile quick)
run_case opt.dtype_f64 2 "$sampcert" "${S[@]}" --dtype f64 --out "$work/o1"
check opt.dtype_message has "$work/opt.dtype_f64.out" "--dtype must be f32, f16 or bf16"
run_case opt.item_nope 2 "$sampcert" "${S[@]}" --item nope --out "$work/o2"
check opt.item_message has "$work/opt.item_nope.out" "matches no plan item"
run_case opt.case_past_the_end 2 "$sampcert" "${S[@]}" --case 99999 --out "$work/o2"
run_case opt.case_with_statistical_item 2 "$sampcert" "${S[@]}" --item f32/flat_V64 --case 3 --out "$work/o2"
run_case opt.item_timeout_0 2 "$sampcert" "${S[@]}" --item-timeout 0 --out "$work/o3"
run_case opt.item_timeout_negative 2 "$sampcert" "${S[@]}" --item-timeout -5 --out "$work/o3"
run_case opt.item_timeout_nan 2 "$sampcert" "${S[@]}" --item-timeout nan --out "$work/o3"
run_case opt.max_draws_0 2 "$sampcert" "${S[@]}" --max-draws 0 --out "$work/o3"
run_case opt.max_draws_negative 2 "$sampcert" "${S[@]}" --max-draws -5 --out "$work/o3"
run_case opt.max_draws_text 2 "$sampcert" "${S[@]}" --max-draws lots --out "$work/o3"
run_case opt.plan_max_draws_0 2 "$sampcert" plan --sampler stable_cpu --max-draws 0
run_case opt.draw_time_0 2 "$sampcert" "${S[@]}" --draw-time 0 --out "$work/o3"
run_case opt.draw_time_inf 2 "$sampcert" "${S[@]}" --draw-time inf --out "$work/o3"
run_case opt.plan_draw_time_huge 2 "$sampcert" plan --sampler stable_cpu --draw-time 2e6
check opt.draw_time_message has "$work/opt.draw_time_0.out" "--draw-time: must be a number of seconds in (0, 1000000]"
run_case opt.shard_trailing 2 "$sampcert" "${S[@]}" --shard 1/2x --out "$work/o4"
run_case opt.shard_leading_zero 2 "$sampcert" "${S[@]}" --shard 01/2 --out "$work/o4"
run_case opt.shard_out_of_range 2 "$sampcert" "${S[@]}" --shard 2/2 --out "$work/o4"
run_case opt.jobs_0 2 "$sampcert" "${S[@]}" --jobs 0 --out "$work/o5"
run_case opt.jobs_huge 2 "$sampcert" "${S[@]}" --jobs 100000 --out "$work/o5"
run_case opt.time_budget_inf 2 "$sampcert" "${S[@]}" --time-budget inf --out "$work/o6"
run_case opt.time_budget_nan 2 "$sampcert" "${S[@]}" --time-budget nan --out "$work/o6"
run_case opt.time_budget_negative 2 "$sampcert" "${S[@]}" --time-budget -1 --out "$work/o6"
run_case opt.out_unwritable 2 "$sampcert" "${S[@]}" --out /proc/sampcert-cannot-write
check opt.out_before_the_run bash -c "! grep -q 'results:' '$work/opt.out_unwritable.out'"
# SPEC OPT-1 (issue 38): ranges on the text, an empty value a usage error, the right cause.
run_case opt.item_timeout_1e20 2 "$sampcert" "${S[@]}" --item-timeout 1e20 --out "$work/o7"
check opt.item_timeout_range has "$work/opt.item_timeout_1e20.out" "seconds in (0, 10000000]"
run_case opt.info_item_timeout_1e20 2 "$sampcert" info --sampler stable_cpu --item-timeout 1e20
run_case opt.case_2_64 2 "$sampcert" "${S[@]}" --case 18446744073709551616 --out "$work/o7"
check opt.case_range has "$work/opt.case_2_64.out" "[0, 9223372036854775807]"
run_case opt.shard_huge_n 2 "$sampcert" "${S[@]}" --shard 0/2000000000 --out "$work/o7"
check opt.shard_rule_stated has "$work/opt.shard_huge_n.out" "N <= 999999"
for opt in dtype item expect out; do
  run_case "opt.${opt}_empty" 2 "$sampcert" "${S[@]}" "--$opt" ''
  check "opt.${opt}_empty_message" has "$work/opt.${opt}_empty.out" "must not be empty"
done
ln -s "$work/missing-target" "$work/dangling"
run_case opt.out_dangling 2 "$sampcert" "${S[@]}" --out "$work/dangling"
check opt.out_dangling_cause has "$work/opt.out_dangling.out" "which does not exist"
R=(--logits 1,2,3)
run_case opt.draws_huge_reference 2 "$sampcert" reference "${R[@]}" --draws 4611686018427387904
run_case opt.draws_huge_sample 2 "$sampcert" sample --sampler stable_cpu "${R[@]}" --draws 4611686018427387904
run_case opt.draws_negative 2 "$sampcert" reference "${R[@]}" --draws -3
run_case opt.logits_empty_field 2 "$sampcert" reference --logits 1,,3
run_case opt.logits_trailing_comma 2 "$sampcert" reference --logits 1,2,
run_case opt.logits_overflow_f32 2 "$sampcert" reference --logits 1,1e39
run_case opt.logits_overflow_f16 2 "$sampcert" reference --dtype f16 --logits 1,70000
run_case opt.logits_inf_accepted 0 "$sampcert" reference --dtype f16 --logits 1,inf
run_case opt.mask_2 2 "$sampcert" reference --logits 1,2 --mask 1,2
run_case cli11.unknown_option 2 "$sampcert" run --sampler stable_cpu --bogus
run_case cli11.missing_required 2 "$sampcert" run
run_case cli11.bad_conversion 2 "$sampcert" run --sampler stable_cpu --jobs many
run_case cli11.no_subcommand 2 "$sampcert"
run_case cli11.extra_positional 2 "$sampcert" report diff a b c
run_case cli11.help_is_0 0 "$sampcert" run --help

# ---- Point 6: report tools.
for i in 0 1; do
  "$sampcert" run --sampler naive --profile quick --shard $i/2 --out "$work/shard$i" >/dev/null 2>&1
done
"$sampcert" run --sampler naive --profile quick --shard 0/3 --out "$work/shard0of3" >/dev/null 2>&1
"$sampcert" run --sampler naive --profile quick --shard 1/2 --dtype f32 --out "$work/filtered" >/dev/null 2>&1
run_case merge.ok 1 "$sampcert" report merge "$work/shard0/report.json" "$work/shard1/report.json" --out "$work/merged"
run_case merge.missing_shard 2 "$sampcert" report merge "$work/shard0/report.json" --out "$work/m1"
run_case merge.different_n 2 "$sampcert" report merge "$work/shard0/report.json" "$work/shard0of3/report.json" --out "$work/m2"
run_case merge.filtered 2 "$sampcert" report merge "$work/shard0/report.json" "$work/filtered/report.json" --out "$work/m3"
# Edited copies of a shard's whole set (shard 1 unless named): python rewrites one field of
# report.json and the manifest is rewritten to match, so the readers get to the check under test.
reseal="$(dirname "$0")/support/reseal_report.py"
edit() {  # edit OUT PYTHON-STATEMENT (on the dict r) [SHARD]
  local dir
  dir="$(dirname "$1")"
  rm -rf "$dir" && cp -r "$work/${3:-shard1}" "$dir"
  "$py" -c "import json,sys; r=json.load(open(sys.argv[1])); $2; json.dump(r, open(sys.argv[2],'w'))" \
    "$work/${3:-shard1}/report.json" "$1" && "$py" "$reseal" "$dir"
}
edit "$work/bogus/report.json" 'r["results"][0]["status"]="Bogus"'
edit "$work/wrongtype/report.json" 'r["results"][0]["cases"]="many"'
edit "$work/wrongtype2/report.json" 'r["context"]="oops"'
edit "$work/incomplete/report.json" 'r.setdefault("completeness",{})["complete"]=False; r["completeness"]["reason"]="SIGTERM"'
edit "$work/otherplan/report.json" 'r["context"]["plan_version"]="ffffffffffffffff"'
edit "$work/allcrash/report.json" 'r["results"]=[dict(res, property="ALL", family=res["dtype"], status="Crash") for res in r["results"][:1]]'
# A name with ANSI escapes (valid UTF-8) and one with U+FFFE, in reports re-read by the tools.
edit "$work/ansi0/report.json" 'r["sampler"]["name"]="\x1b[2J\x1b[32mCONFORMANT\x1b[0m"' shard0
edit "$work/ansi1/report.json" 'r["sampler"]["name"]="\x1b[2J\x1b[32mCONFORMANT\x1b[0m"'
edit "$work/fffe/report.json" 'r["sampler"]["name"]="x\ufffe\uffff"; r["results"][0]["family"]="\ufffe"'
run_case text.ansi_name_in_merge_summary 1 "$sampcert" report merge "$work/ansi0/report.json" "$work/ansi1/report.json" --out "$work/m9"
check text.merge_summary_no_escape no_esc "$work/text.ansi_name_in_merge_summary.out"
run_case text.junit_u_fffe 0 "$sampcert" report junit "$work/fffe/report.json" -o "$work/fffe.xml"
check text.junit_u_fffe_well_formed "$py" -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$work/fffe.xml"
run_case merge.bogus_status 2 "$sampcert" report merge "$work/shard0/report.json" "$work/bogus/report.json" --out "$work/m4"
check merge.bogus_status_path has "$work/merge.bogus_status.out" "/results/0/status"
run_case merge.wrong_type 2 "$sampcert" report merge "$work/shard0/report.json" "$work/wrongtype/report.json" --out "$work/m5"
check merge.wrong_type_path has "$work/merge.wrong_type.out" "/results/0/cases"
run_case merge.incomplete 2 "$sampcert" report merge "$work/shard0/report.json" "$work/incomplete/report.json" --out "$work/m6"
run_case merge.other_plan 2 "$sampcert" report merge "$work/shard0/report.json" "$work/otherplan/report.json" --out "$work/m7"
run_case diff.wrong_type 2 "$sampcert" report diff "$work/shard1/report.json" "$work/wrongtype2/report.json"
check diff.wrong_type_path has "$work/diff.wrong_type.out" "/context"
run_case html.wrong_type 2 "$sampcert" report html "$work/wrongtype/report.json" -o "$work/x.html"
run_case junit.bogus_status 2 "$sampcert" report junit "$work/bogus/report.json" -o "$work/x.xml"
run_case diff.to_all_crash 1 "$sampcert" report diff "$work/shard1/report.json" "$work/allcrash/report.json"
check diff.all_crash_is_regression has "$work/diff.to_all_crash.out" "REGRESSION ALL/"
run_case diff.plan_changed 1 "$sampcert" report diff "$work/shard1/report.json" "$work/otherplan/report.json"
check diff.plan_changed_said has "$work/diff.plan_changed.out" "PLAN CHANGED"
run_case diff.same 0 "$sampcert" report diff "$work/shard1/report.json" "$work/shard1/report.json"
# The same plug-in name from two different files: shards of different samplers.
cp "$hostile" "$work/libhostile_a.so" && cp "$hostile" "$work/libhostile_b.so" && printf 'x' >>"$work/libhostile_b.so"
"$sampcert" run --sampler "$work/libhostile_a.so" --profile quick --shard 0/2 --out "$work/ha" >/dev/null 2>&1
"$sampcert" run --sampler "$work/libhostile_b.so" --profile quick --shard 1/2 --out "$work/hb" >/dev/null 2>&1
run_case merge.different_plugin_files 2 "$sampcert" report merge "$work/ha/report.json" "$work/hb/report.json" --out "$work/m8"
check merge.file_hash_named has "$work/merge.different_plugin_files.out" "file_sha256"

# ---- Point 7: the report set.
check set.manifest_written test -f "$work/hostile/report.manifest.json"
check set.no_temporaries bash -c "[ -z \"\$(find '$work/hostile' '$work/merged' -name '*tmp*')\" ]"

if [ "$survey" != 1 ]; then
  [ "$failures" = 0 ] && echo "all CLI hardening checks passed" || echo "$failures checks failed"
  [ "$failures" = 0 ]
fi

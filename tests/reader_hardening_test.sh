#!/usr/bin/env bash
# Hostile files and arguments for the readers, one case per ctest (cli_hardening.CASE): report
# sets that are mixed, interrupted or tampered with, reports that nest deep, hold huge strings or
# repeat keys, shards that repeat results, row files of the wrong types or pointing at devices,
# seeds that wrap, reproduction lines and sampler names that are not what they show.
# Usage: reader_hardening_test.sh SAMPCERT WORK_DIR HOSTILE_PLUGIN SOURCE_DIR CASE
# The case "fixtures" (a ctest fixture) writes the naive sampler's two quick shards that the
# other cases copy and edit.
set -uo pipefail
sampcert="$1" work="$2" hostile="$3" src="$4" case="$5"
fx="$work/fixtures"
w="$work/$case"
py=/usr/bin/python3
reseal="$src/tests/support/reseal_report.py"
failures=0
[ "$case" = fixtures ] || { rm -rf "$w" && mkdir -p "$w"; }

fail() { echo "FAIL $case: $*"; failures=$((failures + 1)); }
# want RC NAME CMD...: runs CMD (30 s at most), output in $w/NAME.out; its exit code must be RC.
want() {
  local rc_wanted="$1" name="$2"
  shift 2
  timeout 30 "$@" >"$w/$name.out" 2>&1
  local rc=$?
  echo "$name: exit $rc"
  if [ "$rc" != "$rc_wanted" ]; then
    fail "$name: exit $rc, want $rc_wanted"
    head -c 600 "$w/$name.out" | cat -v | sed 's/^/    /'
  fi
}
says() { grep -qF -- "$2" "$w/$1.out" || fail "$1 does not say '$2': $(head -c 300 "$w/$1.out" | cat -v)"; }
# A copy of a fixture shard, its report.json edited by a python statement on `r`, resealed.
edited() {  # edited SHARD DEST PYTHON
  cp -r "$fx/$1" "$w/$2"
  "$py" -c "import json,sys; p=sys.argv[1]+'/report.json'; r=json.load(open(p)); $3; json.dump(r, open(p,'w'), indent=2)" "$w/$2" &&
    "$py" "$reseal" "$w/$2"
}
# The same with a textual edit of report.json (for what python's json cannot write).
text_edited() {  # text_edited SHARD DEST PYTHON-ON-t
  cp -r "$fx/$1" "$w/$2"
  "$py" -c "import sys; p=sys.argv[1]+'/report.json'; t=open(p).read(); $3; open(p,'w').write(t)" "$w/$2" &&
    "$py" "$reseal" "$w/$2"
}
first_row_file() { ls "$fx/$1" | grep -m1 '^row\.'; }
bidi_free() {  # no raw U+202E, U+2066, U+200F in the file
  for b in $'\xe2\x80\xae' $'\xe2\x81\xa6' $'\xe2\x80\x8f'; do
    if LC_ALL=C grep -qF -- "$b" "$1"; then fail "$1 holds a raw bidirectional control"; return; fi
  done
}

case "$case" in
fixtures)
  rm -rf "$fx" && mkdir -p "$fx"
  for i in 0 1; do
    "$sampcert" run --sampler naive --profile quick --shard $i/2 --out "$fx/shard$i" >"$fx/run$i.out" 2>&1
    [ $? = 1 ] || fail "the naive shard $i/2 did not run to NOT CONFORMANT"
  done
  ;;

# ---- Point 3: a set without its manifest, or whose files are not the ones it lists.
report_set_missing_manifest)
  cp -r "$fx/shard1" "$w/b" && rm "$w/b/report.manifest.json"
  want 2 html "$sampcert" report html "$w/b/report.json" -o "$w/x.html"
  says html "report.manifest.json"
  want 2 junit "$sampcert" report junit "$w/b/report.json" -o "$w/x.xml"
  want 2 diff "$sampcert" report diff "$fx/shard0/report.json" "$w/b/report.json"
  want 2 merge "$sampcert" report merge "$fx/shard0/report.json" "$w/b/report.json" --out "$w/m"
  ;;
report_set_mixed)
  # A new report.html beside the old report.json.
  cp -r "$fx/shard1" "$w/h" && echo "<html>another run</html>" >"$w/h/report.html"
  want 2 html_replaced "$sampcert" report diff "$w/h/report.json" "$w/h/report.json"
  says html_replaced "report.html"
  # A directory where report.junit.xml goes, then a run into the folder: the readers see
  # either the old set whole or a refusal, never a new report.html beside the old report.json.
  cp -r "$fx/shard1" "$w/d" && rm "$w/d/report.junit.xml" && mkdir -p "$w/d/report.junit.xml/x"
  cp "$w/d/report.html" "$w/old.html"
  # One item (the publishing is what is tested): a whole shard of the quick run took past the
  # 30 s hang guard under the sanitizers on a loaded machine.
  want 4 run_into_blocked "$sampcert" run --sampler naive --profile quick --item f32/flat_V64 \
    --out "$w/d"
  timeout 30 "$sampcert" report diff "$w/d/report.json" "$w/d/report.json" >"$w/after.out" 2>&1
  rc=$?
  echo "diff after the blocked run: exit $rc"
  if [ $rc = 0 ] && ! cmp -s "$w/old.html" "$w/d/report.html"; then
    fail "report diff accepted a new report.html beside the old report.json"
  fi
  [ $rc = 0 ] || [ $rc = 2 ] || fail "report diff after the blocked run: exit $rc"
  ;;
report_set_tampered_row)
  cp -r "$fx/shard1" "$w/t" && echo " " >>"$w/t/$(first_row_file shard1)"
  want 2 merge "$sampcert" report merge "$fx/shard0/report.json" "$w/t/report.json" --out "$w/m"
  says merge "$(first_row_file shard1)"
  want 2 html "$sampcert" report html "$w/t/report.json" -o "$w/x.html"
  ;;

# ---- Point 6: strings long enough to overflow a recursive regex.
report_long_string)
  edited shard1 rowfile 'f=[x for x in r["results"] if "failure" in x and "row_file" in x["failure"]][0]; f["failure"]["row_file"]="row."+"a"*200000+".json"'
  edited shard1 version 'r["schema_version"]="2."+"1"*200000'
  edited shard1 plan 'r["context"]["plan_version"]="0"*200000'
  edited shard1 differences 'r["verdict"]["expectation_differences"]=["FIX "+"x"*200000]'
  for v in rowfile version plan differences; do
    want 2 html_$v "$sampcert" report html "$w/$v/report.json" -o "$w/$v.html"
    want 2 diff_$v "$sampcert" report diff "$fx/shard1/report.json" "$w/$v/report.json"
  done
  ;;

# ---- Point 7: deep nesting (200,000 levels: 50,000 already overflowed some stacks).
merge_deep_nesting)
  text_edited shard1 deep 't=t.replace("\"context\": {", "\"context\": {\"deep\": " + "["*200000 + "]"*200000 + ",", 1)'
  want 2 merge "$sampcert" report merge "$fx/shard0/report.json" "$w/deep/report.json" --out "$w/m"
  says merge "nest"
  want 2 diff "$sampcert" report diff "$fx/shard1/report.json" "$w/deep/report.json"
  want 2 html "$sampcert" report html "$w/deep/report.json" -o "$w/x.html"
  ;;

# ---- Point 8: a row file that is a symlink to a file outside the shard's folder.
merge_symlinked_row)
  cp -r "$fx/shard1" "$w/s"
  echo "TOP SECRET, not a row" >"$w/secret.txt"
  row="$(first_row_file shard1)"
  rm "$w/s/$row" && ln -s ../secret.txt "$w/s/$row"
  "$py" "$reseal" "$w/s"
  want 2 merge "$sampcert" report merge "$fx/shard0/report.json" "$w/s/report.json" --out "$w/m"
  says merge "$row"
  if grep -rqF "TOP SECRET" "$w/m" 2>/dev/null; then fail "the symlink's target was published"; fi
  ;;

# ---- Point 9: duplicate keys, empty shards, repeated results.
merge_duplicate_keys)
  # A second "results": [] at the end of a failing report: last-wins would make it CONFORMANT.
  text_edited shard1 dup 'i=t.rstrip().rindex("}"); t=t[:i]+", \"results\": []}\n"'
  want 2 html "$sampcert" report html "$w/dup/report.json" -o "$w/x.html"
  says html "duplicate"
  want 2 merge "$sampcert" report merge "$fx/shard0/report.json" "$w/dup/report.json" --out "$w/m"
  want 2 diff "$sampcert" report diff "$fx/shard1/report.json" "$w/dup/report.json"
  ;;
merge_empty_shards)
  edited shard0 e0 'r["results"]=[]'
  edited shard1 e1 'r["results"]=[]'
  want 2 merge "$sampcert" report merge "$w/e0/report.json" "$w/e1/report.json" --out "$w/m"
  if grep -q "CONFORMANT" "$w/merge.out" && ! grep -q "NOT CONFORMANT" "$w/merge.out"; then
    fail "two empty shards merged to CONFORMANT"
  fi
  ;;
merge_duplicated_results)
  # Shard 1 carrying one of shard 0's results; a result given twice inside one report.
  cp -r "$fx/shard1" "$w/other"
  "$py" -c "import json,sys; a=json.load(open(sys.argv[1])); p=sys.argv[2]; r=json.load(open(p)); r['results'].append(a['results'][0]); json.dump(r, open(p,'w'))" \
    "$fx/shard0/report.json" "$w/other/report.json" && "$py" "$reseal" "$w/other"
  want 2 merge_carried "$sampcert" report merge "$fx/shard0/report.json" "$w/other/report.json" --out "$w/m"
  says merge_carried "twice"
  edited shard1 twice 'r["results"].append(r["results"][-1])'
  want 2 html_twice "$sampcert" report html "$w/twice/report.json" -o "$w/x.html"
  want 2 merge_twice "$sampcert" report merge "$fx/shard0/report.json" "$w/twice/report.json" --out "$w/m2"
  ;;

# ---- Point 10: row files that crash the tool or read without limit.
row_format_number)
  row="$fx/shard0/$(first_row_file shard0)"
  "$py" -c "import json,sys; r=json.load(open(sys.argv[1])); r['format']=1; json.dump(r, open(sys.argv[2],'w'))" "$row" "$w/r.json"
  want 2 reference "$sampcert" reference --row "$w/r.json"
  says reference "format"
  want 2 sample "$sampcert" sample --sampler stable_cpu --row "$w/r.json"
  ;;
row_devices)
  ln -s /dev/zero "$w/zero.json" && ln -s /dev/urandom "$w/urandom.json" && mkfifo "$w/fifo.json"
  # Bounded (before the fix these read until memory ran out); not under AddressSanitizer,
  # which reserves terabytes of address space. ldd's output is read whole: `ldd | grep -q`
  # under pipefail fails at random when grep's early exit kills ldd with SIGPIPE.
  libs="$(ldd "$sampcert" 2>/dev/null)"
  case "$libs" in *libasan*) ;; *) ulimit -v 4194304 ;; esac
  for f in zero urandom fifo; do
    want 2 reference_$f "$sampcert" reference --row "$w/$f.json"
    says reference_$f "regular file"
  done
  want 2 sample_zero "$sampcert" sample --sampler stable_cpu --row "$w/zero.json"
  # A plug-in path is hashed for the report: a device there is refused too, not read forever.
  want 3 run_plugin_zero "$sampcert" run --sampler "$w/zero.json" --profile quick --out "$w/o"
  says run_plugin_zero "not a regular file"
  ;;

# ---- Point 11: row files of the wrong types are refused, never coerced.
row_wrong_types)
  # Controls: valid rows (an INV-ERR-1 row file holds an invalid row by design).
  f32="$fx/shard0/$(ls "$fx/shard0" | grep -v '\.INV-ERR-1\.' | grep -m1 '^row\.f32\.')"
  f16="$fx/shard1/$(ls "$fx/shard1" | grep -v '\.INV-ERR-1\.' | grep -m1 '^row\.f16\.')"
  want 0 control_f32 "$sampcert" reference --row "$f32"
  want 0 control_f16 "$sampcert" reference --row "$f16"
  i=0
  while IFS='|' read -r file edit; do
    i=$((i + 1))
    "$py" -c "import json,sys; r=json.load(open(sys.argv[1])); V=len(r['logit_bits']); $edit; json.dump(r, open(sys.argv[2],'w'))" \
      "$file" "$w/wrong$i.json" || fail "edit $edit"
    want 2 "wrong$i" "$sampcert" reference --row "$w/wrong$i.json"
    echo "    ($edit)"
  done <<EOF
$f32|r['logit_bits'][0]=1065353216.5
$f32|r['logit_bits'][0]=-1
$f32|r['logit_bits'][0]=2**32
$f32|r['logit_bits'][0]=True
$f16|r['logit_bits'][0]=65536
$f16|r['logit_bits'][0]=15360.0
$f32|r['mask']=[256]+[1]*(V-1)
$f32|r['mask']=[True]*V
$f32|r['row_id']=-1
$f32|r['row_id']=2**64
$f32|r['row_id']=1.0
$f32|r['temperature_bits']=float(r['temperature_bits'])
$f32|r['top_k']=2.5
$f32|r['top_k']=False
$f32|r['vocab']=float(V)
$f32|r['family']=7
$f32|r['extra']=1
EOF
  # A key given twice (textual: python's json cannot write it).
  "$py" -c "import sys; t=open(sys.argv[1]).read().rstrip(); open(sys.argv[2],'w').write(t[:-1]+', \"row_id\": 5}')" "$f32" "$w/dupkey.json"
  want 2 duplicate_key "$sampcert" reference --row "$w/dupkey.json"
  says duplicate_key '"row_id" is given twice'
  says wrong1 "logit_bits[0] must be an integer"
  ;;

# ---- Point 14: --seed and --row-id never wrap.
seed_wraps)
  R=(reference --logits 1,2 --draws 1)
  for v in -1 18446744073709551616 18446744073709551617 1e3 0x10 1.5 ""; do
    want 2 "seed[$v]" "$sampcert" "${R[@]}" --seed "$v"
    want 2 "row_id[$v]" "$sampcert" "${R[@]}" --row-id "$v"
  done
  says "seed[-1]" "--seed"
  want 0 seed_max "$sampcert" "${R[@]}" --seed 18446744073709551615 --row-id 18446744073709551615
  says seed_max "seed 18446744073709551615, row id 18446744073709551615"
  want 2 run_seed "$sampcert" run --sampler stable_cpu --profile quick --seed -1 --out "$w/o"
  want 2 plan_seed "$sampcert" plan --sampler stable_cpu --seed 18446744073709551616
  want 2 sample_seed "$sampcert" sample --sampler stable_cpu --logits 1,2 --draws 1 --seed -1
  ;;

# ---- Point 15: the printed reproduction line is the command; a non-UTF-8 config is refused.
reproduce_line_exact)
  config=$'a\nb\tc\x1bd\re \'q\' \\ $(x)'
  "$sampcert" run --sampler "$hostile" --sampler-config "$config" --profile quick --out "$w/full" >"$w/full.out" 2>&1
  grep -q $'\x1b' "$w/full.out" && fail "an escape character reached the terminal"
  # The tool is not on PATH here: the line names it by its path.
  line="$(grep -m1 '  reproduce: /[^ ]*sampcert run ' "$w/full.out")" || fail "no reproduction line"
  cmd="${line#*reproduce: }"
  echo "reproduce: $cmd"
  (cd "$w" && bash -c "$cmd --out '$w/pasted'") >"$w/pasted.out" 2>&1
  "$py" -c "
import json, sys
a = json.load(open(sys.argv[1]))['sampler'].get('config')
b = json.load(open(sys.argv[2]))['sampler'].get('config')
sys.exit(0 if a == b == sys.argv[3] else f'the pasted line passed {b!r}, the run had {a!r}')" \
    "$w/full/report.json" "$w/pasted/report.json" "$config" || fail "the pasted line is not the command"
  ;;
config_not_utf8)
  want 2 run "$sampcert" run --sampler stable_cpu --profile quick --sampler-config $'x\xffy' --out "$w/o"
  says run "UTF-8"
  want 2 plan "$sampcert" plan --sampler stable_cpu --sampler-config $'\xc3('
  want 2 info "$sampcert" info --sampler stable_cpu --sampler-config $'\xff'
  want 2 sample "$sampcert" sample --sampler stable_cpu --logits 1,2 --sampler-config $'\xff'
  ;;

# ---- Point 12: bidirectional controls in a sampler's name reach no output raw.
bidi_name)
  "$sampcert" run --sampler "$hostile" --profile quick --out "$w/r" >"$w/run.out" 2>&1
  grep -q "verdict: NOT CONFORMANT" "$w/run.out" || fail "the hostile run did not finish"
  bidi_free "$w/run.out"
  bidi_free "$w/r/report.html"
  bidi_free "$w/r/report.junit.xml"
  "$sampcert" info --sampler "$hostile" >"$w/info.out" 2>&1
  bidi_free "$w/info.out"
  "$sampcert" report html "$w/r/report.json" -o "$w/again.html" >/dev/null 2>&1
  bidi_free "$w/again.html"
  # The name is still there, shown: the controls become visible text.
  grep -qiF 'u202e' "$w/run.out" || fail "the terminal does not show U+202E as text"
  ;;
*)
  echo "unknown case $case"
  exit 2
  ;;
esac

if [ "$failures" = 0 ]; then echo "PASS $case"; else echo "$failures checks failed in $case"; fi
[ "$failures" = 0 ]

#!/usr/bin/env bash
# Renders HTML reports in headless Chromium and fails on a script error or an empty page; checks
# that a sampler named <script>alert(1)</script> is shown as text. Skipped (exit 77, with the
# reason) where chromium is not installed.
# Usage: browser_render_test.sh SAMPCERT GOLDEN_HTML WORK_DIR
set -uo pipefail
sampcert="$1" golden="$2" work="$3"
if ! command -v chromium >/dev/null 2>&1; then
  echo "SKIP: chromium is not installed (apt-get install chromium): HTML reports not rendered"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
"$sampcert" run --sampler naive --profile quick --out "$work/naive" >/dev/null
[ -s "$work/naive/report.html" ] || { echo "FAIL: no report.html written"; exit 1; }
status=0
render() {  # file -> DOM on stdout, console on $work/console.log
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --enable-logging=stderr --v=0 \
    --virtual-time-budget=5000 --dump-dom "file://$1" 2>"$work/console.log"
}
known="$(dirname "$golden")/report.known.html"  # the golden run with its known failures
for f in "$golden" "$known" "$work/naive/report.html"; do
  dom="$(render "$f")"
  if [ -z "$dom" ]; then echo "FAIL $f: empty DOM"; status=1; continue; fi
  if grep -qiE "Uncaught|SyntaxError|ReferenceError|TypeError" "$work/console.log"; then
    echo "FAIL $f: script error:"; grep -E "Uncaught|CONSOLE" "$work/console.log" | head -5
    status=1
  fi
  for want in 'data-rendered="yes"' 'sampcert conformance report' 'id="matrix"' 'id="verdict"'; do
    grep -qF "$want" <<<"$dom" || { echo "FAIL $f: '$want' not in the rendered page"; status=1; }
  done
  if grep -qF '<script>alert(1)' <<<"$dom"; then
    echo "FAIL $f: a sampler-controlled string became markup"; status=1
  fi
done
# The verdict in words, never green for a sampler with failures, known ones included.
dom="$(render "$known")"
grep -qF 'class="verdict known">NOT CONFORMANT: matches its 2 known failures' <<<"$dom" ||
  { echo "FAIL: the known-failure report's verdict is not 'matches its known failures'"; status=1; }
grep -qF '<td class="known"><a href="#r-DIST-1-f32">KnownFailure</a>' <<<"$dom" ||
  { echo "FAIL: a known failure's matrix cell is not KnownFailure"; status=1; }
dom="$(render "$work/naive/report.html")"
grep -qF 'class="verdict bad">NOT CONFORMANT' <<<"$dom" ||
  { echo "FAIL: naive's report is not NOT CONFORMANT"; status=1; }
# The top of the page (SPEC REPORT-1): the verdict, then the root causes, each with its
# reproduction, before the matrix; run details collapsed.
[[ "$dom" == *'id="verdict"'*'id="root-causes"'*'Reproduce: <code>'*'sampcert run --sampler naive'*'id="matrix"'* ]] ||
  { echo "FAIL: naive's report does not open with its root causes and their reproductions"; status=1; }
grep -qE '<details id="run"><summary>' <<<"$dom" ||
  { echo "FAIL: the run details are not collapsed below the root causes"; status=1; }
grep -qF '<svg class="chart counts"' <<<"$dom" && grep -qF 'draws (log scale)</text>' <<<"$dom" &&
  grep -qF "cell, in the test's order</text>" <<<"$dom" ||
  { echo "FAIL: naive's distribution failures have no counts chart with labelled axes"; status=1; }
# Its distribution failures name their cells: the most deviating are labelled on the chart
# (tokens or bands) and in its caption.
grep -qE '<text class="lbl name"[^>]*>(token [0-9]+|band )' <<<"$dom" &&
  grep -qF 'most deviating: ' <<<"$dom" ||
  { echo "FAIL: naive's counts charts name no token or band"; status=1; }
causes=$(grep -o '<li><p><strong>' <<<"$dom" | wc -l)
[ "$causes" -ge 3 ] ||
  { echo "FAIL: naive's report lists $causes root causes (its defects give at least 3)"; status=1; }
dom="$(render "$golden")"
grep -qF '&lt;script&gt;alert(1)&lt;/script&gt;' <<<"$dom" ||
  { echo "FAIL: the sampler named <script>alert(1)</script> is not shown as text"; status=1; }
[ $status = 0 ] && echo "rendered in $(chromium --version 2>/dev/null): no script errors, names shown as text"
exit $status

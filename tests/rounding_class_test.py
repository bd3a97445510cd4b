#!/usr/bin/env python3
"""The declared accuracy class enters the null (issue 10, point 4; SPEC TOL-7).

Usage: rounding_class_test.py SAMPCERT PLUGIN OUT_DIR SETTINGS conformant|fails [PROPERTY/FAMILY ...]

Runs `sampcert run --profile standard` on tests/plugins/rounding_plugin.c with SETTINGS (e.g.
"round=fp16 declare=fp16") as its --sampler-config and in SAMPCERT_ROUNDING (get_info, where the
class is declared, cannot see the config). "conformant": the verdict must be CONFORMANT with no
result Fail or Inconclusive. "fails": the verdict must be NOT CONFORMANT and one of the named
results must be a Fail. Every result that is not a Pass is printed, and the statistical notes
that state a per-class requirement or the admitted tolerance, as the note's evidence.
"""
import json
import os
import subprocess
import sys


def main():
    sampcert, plugin, out, settings, expect = sys.argv[1:6]
    wanted = sys.argv[6:]
    if expect not in ("conformant", "fails"):
        print(f"FAIL: expected 'conformant' or 'fails', got {expect!r}")
        return 2
    env = dict(os.environ, SAMPCERT_ROUNDING=settings)
    proc = subprocess.run([sampcert, "run", "--sampler", plugin, "--sampler-config", settings,
                           "--profile", "standard", "--jobs", "2", "--out", out], env=env,
                          capture_output=True, text=True)
    report_path = os.path.join(out, "report.json")
    if not os.path.exists(report_path):
        print(proc.stdout, proc.stderr)
        print(f"FAIL: no report for {settings}")
        return 1
    with open(report_path) as f:
        report = json.load(f)
    failed, inconclusive, draws = [], [], 0
    for r in report["results"]:
        draws += (r.get("statistics") or {}).get("draws", 0) or 0
        note = r.get("note", "")
        if r["status"] not in ("Pass", "NotSupported"):
            msg = (r.get("failure") or {}).get("message", "") or note
            print(f"{r['status']}: {r['property']}/{r['dtype']}/{r['family']}: {msg}")
            if r["status"] == "Fail":
                failed.append(f"{r['property']}/{r['family']}")
            if r["status"] == "Inconclusive":
                inconclusive.append(f"{r['property']}/{r['family']}")
        elif "class's requirement" in note or "admits" in note:
            print(f"{r['status']}: {r['property']}/{r['dtype']}/{r['family']} "
                  f"({(r.get('statistics') or {}).get('draws', 0)} draws): {note}")
    print(f"{settings}: exit {proc.returncode}, {draws} draws in all")
    if expect == "conformant":
        if proc.returncode != 0 or failed or inconclusive:
            print(f"FAIL: {settings} is not conformant (failed {failed}, inconclusive "
                  f"{inconclusive})")
            return 1
        print(f"ok: {settings} is conformant")
        return 0
    if proc.returncode == 0:
        print(f"FAIL: {settings} passed the standard profile")
        return 1
    caught = [w for w in wanted if w in failed]
    if wanted and not caught:
        print(f"FAIL: {settings} was not caught by any of {wanted} (failed: {failed})")
        return 1
    print(f"ok: {settings} is not conformant, caught by {caught or failed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A planted defect is caught by the standard profile (issue 9).

Usage: defect_caught_test.py SAMPCERT PLUGIN OUT_DIR DEFECT [--item=ID] [PROPERTY[/FAMILY] ...]
                             [!PROPERTY ...] [~PROPERTY ...]

Runs `sampcert run --profile standard` on the defective plug-in with SAMPCERT_DEFECT=DEFECT. With
no PROPERTY/FAMILY, the run must be conformant (the control). Otherwise the verdict must be
non-conformant and at least one of the named results (e.g. DIST-1/llm_like_V1000) must be a Fail;
every failing result is printed with its message and draws, which is the note's evidence. A
!PROPERTY names a property that must not fail at all (no result of it a Fail): the defect must
not be blamed on what it is not (a +inf tie defect is no tail claim). A PROPERTY without a
family matches any family. --item=ID runs that plan item only (the verifier family's
f32/verify, say) instead of the whole profile. A ~PROPERTY names a declared deviation (a lossy
verify scheme, SPEC VER-DEV-1): the run must be conformant, every result of that property a
Warning (or NotSupported where nothing could be measured), at least one a Warning, none a Pass.
"""
import json
import os
import subprocess
import sys


def main():
    sampcert, plugin, out, defect = sys.argv[1:5]
    rest = sys.argv[5:]
    item = [a.split("=", 1)[1] for a in rest if a.startswith("--item=")]
    rest = [a for a in rest if not a.startswith("--item=")]
    wanted = [a for a in rest if a[0] not in "!~"]
    innocent = [a[1:] for a in rest if a.startswith("!")]
    deviations = [a[1:] for a in rest if a.startswith("~")]
    env = dict(os.environ, SAMPCERT_DEFECT=defect)
    cmd = [sampcert, "run", "--sampler", plugin, "--profile", "standard", "--jobs", "2",
           "--out", out]
    for i in item:
        cmd += ["--item", i]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    report_path = os.path.join(out, "report.json")
    if not os.path.exists(report_path):
        print(proc.stdout, proc.stderr)
        print(f"FAIL: no report for defect {defect}")
        return 1
    with open(report_path) as f:
        report = json.load(f)
    failed = []
    for r in report["results"]:
        if r["status"] != "Pass" and r["status"] != "NotSupported":
            msg = (r.get("failure") or {}).get("message", "") or r.get("note", "")
            print(f"{r['status']}: {r['property']}/{r['dtype']}/{r['family']}: {msg}")
            if r["status"] == "Fail":
                failed.append(f"{r['property']}/{r['family']}")
    if not wanted:
        if proc.returncode != 0 or failed:
            print(f"FAIL: the control (defect {defect}) is not conformant (exit {proc.returncode})")
            return 1
        for p in deviations:
            statuses = [r["status"] for r in report["results"] if r["property"] == p]
            if "Warning" not in statuses or set(statuses) - {"Warning", "NotSupported"}:
                print(f"FAIL: defect {defect}: {p} is a declared deviation, but its results are "
                      f"{sorted(set(statuses))}, not Warnings")
                return 1
        print(f"ok: defect {defect} is conformant" +
              (f", with {deviations} as Warnings" if deviations else ""))
        return 0
    if proc.returncode == 0:
        print(f"FAIL: defect {defect} passed the standard profile")
        return 1
    blamed = sorted({f.split("/")[0] for f in failed} & set(innocent))
    if blamed:
        print(f"FAIL: defect {defect} is blamed on {blamed}, which it does not break")
        return 1
    caught = [w for w in wanted
              if w in failed or ("/" not in w and any(f.split("/")[0] == w for f in failed))]
    if not caught:
        print(f"FAIL: defect {defect} was not caught by any of {wanted} (failed: {failed})")
        return 1
    print(f"ok: defect {defect} caught by {caught}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

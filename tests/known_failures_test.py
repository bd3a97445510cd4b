#!/usr/bin/env python3
"""A known failure is never a pass, and a sampler with failures is never CONFORMANT.

Usage: known_failures_test.py SAMPCERT WORK_DIR PROFILE SAMPLER...

For each SAMPLER (naive, floor_fix): runs PROFILE without expectations (NOT CONFORMANT, exit 1),
writes an expectations file from that report with `sampcert report expectations`, runs again
with it, and checks every format the run wrote: the outcome is "NOT CONFORMANT: matches its N
known failures, no new ones" (exit 0), no (property, dtype) cell holding a known failure reads
Pass or is certified (report.json, the terminal table, the HTML matrix, JUnit), and the word
CONFORMANT never stands alone. Then a known failure that now passes fails the check (strict)
unless --expect-non-strict, and a file of the earlier format is refused by name (exit 2).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

sampcert, work, profile, samplers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        print("     " + str(detail).replace("\n", "\n     ")[:3000])
        failures.append(what)


def run(*args):
    p = subprocess.run([sampcert, *args], capture_output=True, text=True, timeout=1500)
    return p.returncode, p.stdout, p.stderr


def known_cells(report):
    return {(r["property"], r["dtype"]) for r in report["results"]
            if r["status"] == "KnownFailure"}


def check_formats(name, out_dir, stdout, report):
    cells = known_cells(report)
    v = report["verdict"]
    certified = set(v["certified"])
    check(f"{name}: no cell with a known failure is certified",
          not any(f"{p}/{d}" in certified for p, d in cells), sorted(cells))
    check(f"{name}: every cell with a known failure is listed as one (or as a new failure)",
          all(f"{p}/{d}" in v["known_failures"] + v["not_conformant"] for p, d in cells))
    check(f"{name}: report.json says conformant false", v["conformant"] is False, v)
    # The terminal's property table: the row of each such cell never shows Pass there.
    lines = stdout.splitlines()
    header = next((l for l in lines if l.startswith("property ")), "")
    dtypes = header.split()[1:]
    bad = []
    for p, d in cells:
        row = next((l for l in lines if l.split()[:1] == [p]), None)
        if row is None or d not in dtypes or row.split()[1 + dtypes.index(d)] == "Pass":
            bad.append((p, d, row))
    check(f"{name}: the terminal table shows no known-failure cell as Pass", not bad, bad)
    check(f"{name}: the terminal never prints a bare CONFORMANT",
          not re.search(r"(?<!NOT )CONFORMANT", stdout), stdout[-2000:])
    # The HTML matrix: each cell is a link whose text is the cell's status.
    html = open(os.path.join(out_dir, "report.html"), encoding="utf-8").read()
    bad = []
    for p, d in cells:
        m = re.search(r'<a href="#r-%s-%s">([A-Za-z]+)</a>' % (re.escape(p), re.escape(d)), html)
        if m is None or m.group(1) == "Pass":
            bad.append((p, d, m and m.group(0)))
    check(f"{name}: the HTML matrix shows no known-failure cell as Pass", not bad, bad)
    check(f"{name}: the HTML verdict is not green",
          'class="verdict ok"' not in html and 'class="verdict known"' in html)
    # JUnit: a known failure is skipped with its own type, never a plain pass.
    suites = ET.parse(os.path.join(out_dir, "report.junit.xml")).getroot()
    bare = [c.get("classname") + "/" + c.get("name") for c in suites.iter("testcase")
            if c.get("name") != "verdict" and len(c) == 0 and
            any(r["status"] == "KnownFailure" and c.get("classname").endswith(
                f".{r['dtype']}.{r['property']}") and c.get("name") == r["family"]
                for r in report["results"])]
    check(f"{name}: JUnit shows no known failure as a pass", not bare, bare[:5])
    types = [s.get("type") for s in suites.iter("skipped")]
    check(f"{name}: JUnit marks known failures KnownFailure",
          types.count("KnownFailure") == len([r for r in report["results"]
                                              if r["status"] == "KnownFailure"]))


def one(sampler):
    d = os.path.join(work, sampler)
    rc, out, err = run("run", "--sampler", sampler, "--profile", profile, "--jobs", "2",
                       "--out", f"{d}/plain")
    report = json.load(open(f"{d}/plain/report.json"))
    check(f"{sampler}: without expectations, NOT CONFORMANT with exit 1",
          rc == 1 and report["verdict"]["outcome"] == "NotConformant" and
          "verdict: NOT CONFORMANT: " in out, (rc, out[-1500:]))
    expect = f"{d}/expectations.json"
    rc, _, err = run("report", "expectations", f"{d}/plain/report.json", "-o", expect)
    check(f"{sampler}: report expectations writes the file", rc == 0, err)
    pinned = json.load(open(expect))
    n = len(pinned["entries"])
    check(f"{sampler}: it pins every failing result, each by its family",
          n == sum(1 for r in report["results"]
                   if r["status"] in ("Fail", "Inconclusive", "Crash", "Timeout")) and
          all("family" in e for e in pinned["entries"]), n)

    rc, out, err = run("run", "--sampler", sampler, "--profile", profile, "--jobs", "2",
                       "--expect", expect, "--out", f"{d}/expected")
    report = json.load(open(f"{d}/expected/report.json"))
    want = f"NOT CONFORMANT: matches its {n} known failures, no new ones"
    check(f"{sampler}: with them, '{want}', exit 0",
          rc == 0 and report["verdict"]["outcome"] == "MatchesExpectations" and
          report["verdict"]["text"] == want and f"verdict: {want}" in out, (rc, out[-1500:]))
    check_formats(sampler, f"{d}/expected", out, report)

    # A known failure that now passes: strict by default (exit 1), reported when not strict.
    passing = next(r for r in report["results"] if r["status"] == "Pass")
    stale = dict(pinned, entries=pinned["entries"] + [
        {"property": passing["property"], "dtype": passing["dtype"],
         "family": passing["family"], "status": "Fail", "reason": "a test entry"}])
    stale_file = f"{d}/stale.json"
    json.dump(stale, open(stale_file, "w"), indent=2)
    rc, out, _ = run("run", "--sampler", sampler, "--profile", profile, "--jobs", "2",
                     "--expect", stale_file, "--out", f"{d}/stale")
    check(f"{sampler}: a known failure that now passes fails the check (exit 1, FIX)",
          rc == 1 and "\nFIX " + passing["property"] in out and
          "1 known failure now passes" in out, (rc, out[-1500:]))
    rc, out, _ = run("run", "--sampler", sampler, "--profile", profile, "--jobs", "2",
                     "--expect", stale_file, "--expect-non-strict", "--out", f"{d}/lax")
    check(f"{sampler}: --expect-non-strict reports it, exit 0",
          rc == 0 and "1 known failure now passes (not strict" in out, (rc, out[-1500:]))

    # The earlier format, by (property, dtype): refused with how to convert it.
    old = {"entries": [{"property": e["property"], "dtype": e["dtype"], "status": e["status"],
                        "reason": e["reason"]} for e in pinned["entries"]]}
    old_file = f"{d}/old.json"
    json.dump(old, open(old_file, "w"))
    rc, _, err = run("run", "--sampler", sampler, "--profile", profile, "--expect", old_file,
                     "--out", f"{d}/old")
    check(f"{sampler}: an expectations file of the earlier format is refused (exit 2)",
          rc == 2 and "earlier format" in err and "sampcert report expectations" in err, err)


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
for s in samplers:
    one(s)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)

#!/usr/bin/env python3
"""A failure's one-line reproduction command reproduces it, numbers included (REPRO-1).

Runs naive (quick), then for the first failing statistical test, the first failing generated
case and the first failing covering-design row runs the printed reproduction command: the
statistical result must come back identical (p-value, draws, observed and expected counts; only
`seconds` may differ), and a case must fail with the same message, the same input and, where
the full run shrank it, the same minimal input. Every such failure also carries its complete input as a row file beside the
report (bit-exact JSON), and `sampcert reference --row` / `sampcert sample --row` replay it: the
row they read is the row the failure describes.

Usage: reproduction_test.py SAMPCERT WORK_DIR
"""
import json
import os
import shlex
import re
import shutil
import struct
import subprocess
import sys


def run(sampcert, args, out):
    proc = subprocess.run([sampcert, *args, "--out", out], capture_output=True, text=True)
    if proc.returncode != 1:
        sys.exit(f"FAIL: sampcert {shlex.join(args)} exited {proc.returncode}, expected 1\n"
                 f"{proc.stdout}\n{proc.stderr}")
    with open(os.path.join(out, "report.json")) as f:
        return json.load(f)["results"]


def key(r):
    return (r["property"], r["dtype"], r["family"])


def main():
    sampcert, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    full = run(sampcert, ["run", "--sampler", "naive", "--profile", "quick"], f"{work}/full")
    fails = [r for r in full if r["status"] == "Fail" and "failure" in r]
    stats = [r for r in fails if "statistics" in r]
    # Prefer a failed goodness-of-fit test (p-value, draws and counts to compare).
    statistical = next((r for r in stats if r["statistics"]["draws"] > 0),
                       stats[0] if stats else None)
    cases = [r for r in fails if "statistics" not in r and "--case" in r["failure"]["reproduction"]]
    # Prefer a failure the full run shrank, so the minimal input is compared too.
    generated = next((r for r in cases if r["failure"]["minimal_input"] != r["failure"]["input"]),
                     cases[0] if cases else None)
    # A covering-design row (family "design", case valid_cases_per_dtype + j) re-runs by its
    # --case too.
    design = next((r for r in cases if r["family"] == "design"), None)
    if statistical is None or generated is None or design is None:
        sys.exit("FAIL: naive's quick run should have a statistical, a generated-row and a "
                 "design-row failure")
    for i, want in enumerate((statistical, generated, design)):
        command = shlex.split(want["failure"]["reproduction"])
        # The tool is not on PATH here: the command names it by its path, runnable as pasted.
        if (len(command) < 2 or command[1] != "run" or
                os.path.realpath(command[0]) != os.path.realpath(sampcert)):
            sys.exit(f"FAIL: not a run of this tool ({sampcert}) by its path: "
                     f"{want['failure']['reproduction']}")
        again = {key(r): r for r in run(sampcert, command[1:], f"{work}/again{i}")}
        got = again.get(key(want))
        if got is None:
            sys.exit(f"FAIL: {shlex.join(command)} did not produce {key(want)}")
        if "statistics" in want:
            a = {k: v for k, v in want.items() if k != "seconds"}
            b = {k: v for k, v in got.items() if k != "seconds"}
            if a != b:
                sys.exit(f"FAIL: {shlex.join(command)} gave other numbers:\n{a}\n{b}")
        else:
            fields = ["message", "input"]
            if want["failure"]["minimal_input"] != want["failure"]["input"]:
                fields.append("minimal_input")  # the full run shrank it: so must --case
            for field in fields:
                if got["failure"][field] != want["failure"][field]:
                    sys.exit(f"FAIL: {shlex.join(command)}: {field} differs:\n"
                             f"  {want['failure'][field]}\n  {got['failure'][field]}")
        print(f"reproduced {key(want)} with '{shlex.join(command)}': "
              f"{want['failure']['message'][:100]}")
    # Every generated case's failure has a row file, and so has a planned row's test.
    with_rows = [r for r in fails if "--case" in r["failure"]["reproduction"]]
    check_row_files(sampcert, f"{work}/full", with_rows + [statistical], (statistical, generated))


def f32(x):
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]


def check_row_files(sampcert, folder, fails, replayed):
    """Every failure in `fails` names a row file published with the report, and the row
    that `sampcert reference --row` reads from it is the one minimal_input describes."""
    with open(os.path.join(folder, "report.manifest.json")) as f:
        published = {e["name"] for e in json.load(f)["files"]}
    for r in fails:
        name = r["failure"].get("row_file")
        if name is None:
            sys.exit(f"FAIL: {key(r)} has no row file")
        if name not in published or not os.path.isfile(os.path.join(folder, name)):
            sys.exit(f"FAIL: {key(r)}: row file {name} is not published with the report")
    for r in replayed:
        path = os.path.join(folder, r["failure"]["row_file"])
        with open(path) as f:
            row = json.load(f)
        described = r["failure"]["minimal_input"]
        m = re.search(r"V=(\d+) .*logits=\[([^\]]*)\]", described)
        if m is None or int(m.group(1)) != row["vocab"] or len(row["logit_bits"]) != row["vocab"]:
            sys.exit(f"FAIL: row file {path} (V={row['vocab']}) is not the row of {described}")
        ref = subprocess.run([sampcert, "reference", "--row", path], capture_output=True,
                             text=True)
        if ref.returncode not in (0, 1):
            sys.exit(f"FAIL: sampcert reference --row {path} exited {ref.returncode}: "
                     f"{ref.stderr}")
        if ref.returncode == 0:
            # The token table: index, logit, probability, class; its logits are the row's.
            table = [line.split() for line in ref.stdout.splitlines()[2:]]
            shown = [v for v in m.group(2).split(",") if v != "..."]
            for i, v in enumerate(shown):
                if f32(table[i][1]) != f32(v) and not (v == "nan" and table[i][1] == "nan"):
                    sys.exit(f"FAIL: reference --row {path}: logit {i} is {table[i][1]}, the "
                             f"failure says {v}")
        sample = subprocess.run([sampcert, "sample", "--sampler", "naive", "--row", path,
                                 "--draws", "3"], capture_output=True, text=True)
        if sample.returncode not in (0, 1) or "Traceback" in sample.stderr:
            sys.exit(f"FAIL: sampcert sample --row {path} exited {sample.returncode}: "
                     f"{sample.stderr}")
        # The row's fields are given by the file: repeating one on the command line is refused.
        both = subprocess.run([sampcert, "reference", "--row", path, "--logits", "1,2"],
                              capture_output=True, text=True)
        if both.returncode == 0 or "excludes" not in both.stderr + both.stdout:
            sys.exit(f"FAIL: --row with --logits should be refused, got {both.returncode}: "
                     f"{both.stderr}")
        print(f"row file {r['failure']['row_file']} replays ({row['dtype']}, V={row['vocab']})")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A failure's one-line reproduction command reproduces it, numbers included (REPRO-1).

Runs naive (quick), then for the first failing statistical test and the first failing generated
case runs the printed reproduction command: the statistical result must come back identical
(p-value, draws, observed and expected counts; only `seconds` may differ), and the generated
case must fail with the same message, the same input and, where the full run shrank it, the same
minimal input.

Usage: reproduction_test.py SAMPCERT WORK_DIR
"""
import json
import os
import shlex
import shutil
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
    if statistical is None or generated is None:
        sys.exit("FAIL: naive's quick run should have a statistical and a generated-row failure")
    for i, want in enumerate((statistical, generated)):
        command = shlex.split(want["failure"]["reproduction"])
        if command[:2] != ["sampcert", "run"]:
            sys.exit(f"FAIL: not a sampcert run command: {want['failure']['reproduction']}")
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


if __name__ == "__main__":
    main()

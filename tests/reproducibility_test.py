#!/usr/bin/env python3
"""REPRO-1 (SPEC.md section 12): the same sampler, seed and profile give the same report under
any --jobs, any load and any shard split.

For each sampler given, runs the profile with --jobs 1, with --jobs 2, and as three shards
merged with `report merge`, all five runs at once beside two CPU hogs (seven busy processes on
the machine; at once, not one after another, because ctest gives this test the machine to
itself: RUN_SERIAL). The reports must be identical once REPRO-1's closed list of run-shape and
timing fields is removed:
  context.seconds, context.jobs, context.shard, context.time_budget_s, results[].seconds, and
  the speed section (SPEC REPORT-3: measured after a whole run only, so the merge has none).

Usage: reproducibility_test.py SAMPCERT WORK_DIR PROFILE SAMPLER [SAMPLER...]
"""
import json
import multiprocessing
import os
import shutil
import subprocess
import sys

TIMING_CONTEXT_FIELDS = ("seconds", "jobs", "shard", "time_budget_s")


def hog(_):
    # A busy loop: the load the verdict must not notice. Bounded so it can never outlive the test.
    import time
    end = time.monotonic() + 1800
    x = 0
    while time.monotonic() < end:
        x += 1


def run_all(sampcert, runs):
    """Starts every (args, out) run at once; their exit codes once all have ended."""
    procs = []
    for args, out in runs:
        os.makedirs(os.path.dirname(out), exist_ok=True)
        err = open(out + ".stderr", "w+")
        procs.append((args, err, subprocess.Popen([sampcert, *args, "--out", out],
                                                  stdout=subprocess.DEVNULL, stderr=err)))
    codes = [proc.wait() for _, _, proc in procs]  # all of them, so none outlives a failure
    for (args, err, _), rc in zip(procs, codes):
        err.seek(0)
        text = err.read()
        err.close()
        if rc not in (0, 1):
            sys.exit(f"FAIL: sampcert {' '.join(args)} exited {rc}:\n{text}")
    return codes


def normalized(path):
    with open(path) as f:
        report = json.load(f)
    for key in TIMING_CONTEXT_FIELDS:
        report["context"].pop(key, None)
    for r in report["results"]:
        r.pop("seconds", None)
    report.pop("speed", None)
    return report


def first_difference(a, b, path="$"):
    if type(a) is not type(b):
        return f"{path}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: present in one report only"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
    elif isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} entries"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
    elif a != b:
        return f"{path}: {a!r} vs {b!r}"
    return None


def main():
    sampcert, work, profile, samplers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failed = False
    for i, sampler in enumerate(samplers):
        base = ["run", "--sampler", sampler, "--profile", profile, "--seed", "20261201"]
        d = os.path.join(work, f"s{i}")
        runs = [(base + ["--jobs", "1"], f"{d}/j1"), (base + ["--jobs", "2"], f"{d}/j2")]
        runs += [(base + ["--jobs", "1", "--shard", f"{k}/3"], f"{d}/shard{k}") for k in range(3)]
        with multiprocessing.Pool(2) as hogs:
            hogs.map_async(hog, range(2))
            rc1, rc2 = run_all(sampcert, runs)[:2]
            hogs.terminate()
        merge = subprocess.run([sampcert, "report", "merge", f"{d}/shard0/report.json",
                                f"{d}/shard1/report.json", f"{d}/shard2/report.json",
                                "--out", f"{d}/merged"], capture_output=True, text=True)
        if merge.returncode not in (0, 1):  # 1: merged, not conformant
            sys.exit(f"FAIL: report merge exited {merge.returncode}: {merge.stderr}")
        ref = normalized(f"{d}/j1/report.json")
        verdict = "CONFORMANT" if ref["verdict"]["conformant"] else "NOT CONFORMANT"
        for name, path in (("--jobs 2", f"{d}/j2/report.json"),
                           ("three shards merged", f"{d}/merged/report.json")):
            diff = first_difference(ref, normalized(path))
            if diff:
                print(f"FAIL {sampler}: {name} differs from --jobs 1: {diff}")
                failed = True
            else:
                print(f"ok {sampler}: {name} identical to --jobs 1 ({len(ref['results'])} "
                      f"results, {verdict})")
        if rc1 != rc2:
            print(f"FAIL {sampler}: exit {rc1} with --jobs 1, {rc2} with --jobs 2")
            failed = True
        fails = [r for r in ref["results"] if r["status"] == "Fail"]
        shrunk = [r for r in fails if r.get("failure", {}).get("minimal_input") !=
                  r.get("failure", {}).get("input")]
        print(f"   {len(fails)} Fail results, {len(shrunk)} shrunk")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

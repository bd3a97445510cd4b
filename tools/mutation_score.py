#!/usr/bin/env python3
"""The suite's mutation score: how many mutants of the catalogue a profile catches.

Usage:
  mutation_score.py SAMPCERT PLUGIN [--profile P] [--seeds 1,2,3] [--mutants a,b,...]
                    [--jobs N] [--parallel K] [--out DIR] [--record FILE] [--reasons FILE]
  mutation_score.py --show RECORD [--reasons FILE]
  mutation_score.py SAMPCERT PLUGIN --check RECORD --reasons FILE [--jobs N] [--parallel K]
  mutation_score.py SAMPCERT PLUGIN --compare RECORD [--reasons FILE] [--jobs N] [--parallel K]

PLUGIN is tests/plugins/mutants_plugin's library; its catalogue (name, failure class, mechanism,
citation, rare) comes from its exported sampcert_mutant_catalogue(). A run certifies every entry
at every seed with `sampcert run --profile P`, SAMPCERT_MUTANT naming the entry:

- a control runs the whole profile and must be CONFORMANT;
- a mutant runs the profile dtype by dtype (--dtype f32, then f16, then bf16) and stops at the
  first dtype whose part is not conformant: that part's failures are the standard profile's
  (REPRO-1: a part's results are those of the whole run), so "caught" means exactly what a
  whole run would say, at a third of the cost for a mutant the f32 rows catch. Nothing depends
  on time. Its proof is the reproduction of its cheapest failure (one generated case, or one
  planned item).

It prints a table (mutant, class, rare, caught at each seed, by which properties, citation)
and "caught N / M (non-rare: X / Y)", and with --record writes the results as JSON.

--show prints the table of a record without running anything.

--compare RECORD runs everything afresh (as without it) and compares each entry's outcome at
each seed (caught, or conformant for a control) with RECORD's: a difference exits 1.

--check (the ctest) runs the controls' whole profile at every recorded seed (each must be
CONFORMANT) and re-runs every recorded proof (each must still fail), and compares the record
with the catalogue and with --reasons (a JSON object: mutant -> why the profile does not catch
it): a non-rare mutant not caught at some seed must have a reason, a mutant with a reason must
not be caught at every seed (then the reason is stale: remove it), and every catalogue entry
must be in the record. Mutants recorded as not caught are not re-run by --check (that takes
whole runs: run the tool without --check to refresh the record). Exit 0 when everything
holds, 1 on any difference, 2 on a usage error.
"""
import argparse
import concurrent.futures
import ctypes
import json
import os
import subprocess
import sys
import tempfile

DTYPES = ["f32", "f16", "bf16"]
FAILING = {"Fail", "Crash", "Timeout", "Inconclusive"}


def catalogue(plugin):
    lib = ctypes.CDLL(os.path.abspath(plugin))
    lib.sampcert_mutant_catalogue.restype = ctypes.c_char_p
    return json.loads(lib.sampcert_mutant_catalogue().decode())


def run_sampcert(sampcert, plugin, mutant, args, out, jobs):
    env = dict(os.environ, SAMPCERT_MUTANT=mutant)
    # --no-speed: a score needs verdicts only; timing the slow mutant sampler after each whole
    # run cost 11 s a control run.
    cmd = [sampcert, "run", "--sampler", plugin, "--jobs", str(jobs), "--no-speed", "--out",
           out] + args
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    report = None
    path = os.path.join(out, "report.json")
    if os.path.exists(path):
        with open(path) as f:
            report = json.load(f)
    return proc.returncode, report, proc.stdout + proc.stderr


def failures(report):
    return [r for r in (report or {}).get("results", []) if r["status"] in FAILING]


def proof_of(fails):
    """The reproduction arguments of the cheapest failure: a generated case, then a planned item,
    then anything else (a pooled DIST-3 test re-runs its whole item)."""
    def args(r):
        line = (r.get("failure") or {}).get("reproduction", "")
        words = line.split()
        return words[words.index("--profile"):] if "--profile" in words else None
    ranked = sorted(fails, key=lambda r: (r["status"] != "Fail", r["property"] == "DIST-3",
                                          "--case" not in (args(r) or []), args(r) is None))
    for r in ranked:
        a = args(r)
        if a is not None:
            return a
    return None


def score_one(opts, entry, seed, workdir):
    """Runs one catalogue entry at one seed; returns its result for the record."""
    name = entry["name"]
    base = ["--profile", opts.profile, "--seed", str(seed)]
    out = os.path.join(workdir, f"{name}.{seed}")
    if entry["class"] == "control":
        rc, report, text = run_sampcert(opts.sampcert, opts.plugin, name, base, out, opts.jobs)
        fails = failures(report)
        return {"conformant": rc == 0 and not fails,
                "properties": sorted({f"{r['property']}/{r['dtype']}" for r in fails}),
                "output": "" if rc == 0 else text[-2000:]}
    for dtype in DTYPES:
        rc, report, text = run_sampcert(opts.sampcert, opts.plugin, name,
                                        base + ["--dtype", dtype], out + "." + dtype, opts.jobs)
        if rc not in (0, 1) or report is None:
            return {"caught": False, "error": f"sampcert exited {rc}: {text[-2000:]}"}
        fails = failures(report)
        if rc == 1 and fails:
            return {"caught": True, "dtype": dtype,
                    "properties": sorted({r["property"] for r in fails}),
                    "proof": proof_of(fails) or base + ["--dtype", dtype]}
    return {"caught": False}


def run_all(opts, entries, seeds):
    record = {"format": "sampcert-mutation-score/1", "profile": opts.profile, "seeds": seeds,
              "entries": {}}
    with tempfile.TemporaryDirectory(dir=opts.out) as workdir, \
            concurrent.futures.ThreadPoolExecutor(max_workers=opts.parallel) as pool:
        jobs = {(e["name"], s): pool.submit(score_one, opts, e, s, workdir)
                for e in entries for s in seeds}
        for e in entries:
            got = {str(s): jobs[(e["name"], s)].result() for s in seeds}
            record["entries"][e["name"]] = got
            print(f"  {e['name']}: " + ", ".join(
                f"seed {s} " + ("conformant" if r.get("conformant") else "NOT CONFORMANT")
                if e["class"] == "control" else
                f"seed {s} " + (f"caught ({r['dtype']})" if r.get("caught") else "not caught")
                for s, r in got.items()), flush=True)
    return record


def table(record, entries, reasons):
    seeds = [str(s) for s in record["seeds"]]
    lines = [f"mutation score, profile {record['profile']}, seeds {', '.join(seeds)}", ""]
    lines.append("| mutant | class | rare | " + " | ".join(f"seed {s}" for s in seeds) +
                 " | caught by | citation |")
    lines.append("|---|---|---|" + "---|" * len(seeds) + "---|---|")
    caught = non_rare = caught_non_rare = total = 0
    per_seed = {s: 0 for s in seeds}
    for e in entries:
        got = record["entries"].get(e["name"])
        if got is None:
            continue
        if e["class"] == "control":
            cells = ["pass" if got[s].get("conformant") else "FAIL" for s in seeds]
            by = "(control: must pass)"
        else:
            cells = ["caught" if got[s].get("caught") else "-" for s in seeds]
            props = sorted({p for s in seeds for p in got[s].get("properties", [])})
            by = ", ".join(props) if props else "not caught: " + reasons.get(e["name"], "?")
            total += 1
            every = all(got[s].get("caught") for s in seeds)
            caught += every
            for s in seeds:
                per_seed[s] += bool(got[s].get("caught"))
            if not e["rare"]:
                non_rare += 1
                caught_non_rare += every
        rare = "rare" if e["rare"] else ""
        lines.append(f"| {e['name']} | {e['class']} | {rare} | " + " | ".join(cells) +
                     f" | {by} | {e['citation']} |")
    lines.append("")
    lines.append("per seed: " + ", ".join(f"seed {s} caught {per_seed[s]} / {total}"
                                          for s in seeds))
    lines.append(f"caught {caught} / {total} at every seed "
                 f"(non-rare: {caught_non_rare} / {non_rare})")
    rare = [e for e in entries if e["rare"] and e["name"] in record["entries"]]
    if rare:
        lines.append("")
        lines.append("rare mutants (not required):")
        lines += [f"- {e['name']}: {e['rare']}" for e in rare]
    missed = [e["name"] for e in entries if e["class"] != "control" and not e["rare"]
              and e["name"] in record["entries"]
              and not all(record["entries"][e["name"]][s].get("caught") for s in seeds)]
    if missed:
        lines.append("")
        lines.append("non-rare mutants not caught at every seed:")
        lines += [f"- {m}: {reasons.get(m, 'NO REASON GIVEN')}" for m in missed]
    return "\n".join(lines)


def check(opts, entries, record, reasons, names):
    """`entries`: the catalogue entries to check (--mutants); `names`: the whole catalogue's."""
    problems = []
    seeds = [str(s) for s in record["seeds"]]
    for e in entries:
        if e["name"] not in record["entries"]:
            problems.append(f"{e['name']}: in the catalogue, not in the record (run the tool "
                            f"with --record)")
    for name in record["entries"]:
        if name not in names:
            problems.append(f"{name}: in the record, not in the catalogue")
    for name, why in reasons.items():
        got = record["entries"].get(name, {})
        if got and all(got[s].get("caught") for s in seeds):
            problems.append(f"FIX: {name} is caught at every seed; remove its reason ({why})")
    tasks = []
    checked = opts.check_seeds.split(",") if opts.check_seeds else seeds
    unknown = set(checked) - set(seeds)
    if unknown:
        problems.append(f"--check-seeds {opts.check_seeds}: not seeds of the record "
                        f"({', '.join(seeds)})")
    for e in entries:
        got = record["entries"].get(e["name"])
        if got is None:
            continue
        for s in seeds:
            if e["class"] == "control":
                if s in checked:
                    tasks.append((e, s, ["--profile", record["profile"], "--seed", s]))
            elif got[s].get("caught"):
                if s in checked:
                    tasks.append((e, s, got[s]["proof"]))
            elif not e["rare"] and e["name"] not in reasons:
                problems.append(f"{e['name']}: not caught at seed {s} and no reason given")

    def rerun(task, workdir):
        e, s, args = task
        out = os.path.join(workdir, f"{e['name']}.{s}")
        rc, report, text = run_sampcert(opts.sampcert, opts.plugin, e["name"], args, out,
                                        opts.jobs)
        fails = failures(report)
        if e["class"] == "control":
            if rc != 0 or fails:
                return (f"REGRESSION: control {e['name']} is not conformant at seed {s}: " +
                        ", ".join(f"{r['property']}/{r['dtype']}/{r['family']} {r['status']}"
                                  for r in fails) + f" (exit {rc}) {text[-600:]}")
            return None
        if rc != 1 or not fails:
            return (f"REGRESSION: {e['name']} at seed {s} passes its recorded proof "
                    f"(sampcert run {' '.join(args)}, exit {rc}); run the tool to re-record")
        return None

    with tempfile.TemporaryDirectory(dir=opts.out) as workdir, \
            concurrent.futures.ThreadPoolExecutor(max_workers=opts.parallel) as pool:
        for problem in pool.map(lambda t: rerun(t, workdir), tasks):
            if problem:
                problems.append(problem)
    controls = sum(1 for t in tasks if t[0]["class"] == "control")
    print(f"re-ran {controls} whole control runs and {len(tasks) - controls} recorded proofs")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sampcert", nargs="?")
    ap.add_argument("plugin", nargs="?")
    ap.add_argument("--profile", default="standard")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--mutants", default="", help="comma-separated entries (default: all)")
    ap.add_argument("--jobs", type=int, default=2, help="sampcert run --jobs")
    ap.add_argument("--parallel", type=int, default=1, help="sampcert runs at once")
    ap.add_argument("--out", default=None, help="where the runs' reports go (a temporary dir)")
    ap.add_argument("--record", help="write the results here (JSON)")
    ap.add_argument("--reasons", help="JSON: mutant -> why the profile does not catch it")
    ap.add_argument("--show", metavar="RECORD", help="print the table of a record")
    ap.add_argument("--check", metavar="RECORD", help="re-prove a record (the ctest)")
    ap.add_argument("--compare", metavar="RECORD", help="run afresh and compare with a record")
    ap.add_argument("--check-seeds", default="",
                    help="--check: re-run the controls' whole runs and the recorded proofs at "
                         "these of the record's seeds only (default: all; CI: 1, the rest "
                         "under SAMPCERT_STANDARD_TESTS); every seed's record is still checked "
                         "for missing catches and reasons")
    ap.add_argument("--catalogue", help="the catalogue as JSON, for --show without the plug-in")
    opts = ap.parse_args()
    reasons = {}
    if opts.reasons:
        with open(opts.reasons) as f:
            reasons = {k: v for k, v in json.load(f).items() if not k.startswith("//")}
    if opts.show:
        with open(opts.show) as f:
            record = json.load(f)
        entries = catalogue(opts.plugin) if opts.plugin else record["catalogue"]
        print(table(record, entries, reasons))
        return 0
    if not opts.sampcert or not opts.plugin:
        ap.error("SAMPCERT and PLUGIN are needed to run")
    entries = catalogue(opts.plugin)
    names = {e["name"] for e in entries}
    if opts.mutants:
        wanted = opts.mutants.split(",")
        unknown = set(wanted) - {e["name"] for e in entries}
        if unknown:
            ap.error(f"unknown mutants: {sorted(unknown)}")
        entries = [e for e in entries if e["name"] in wanted]
    if opts.check:
        with open(opts.check) as f:
            record = json.load(f)
        problems = check(opts, entries, record, reasons, names)
        print(table(record, entries, reasons))
        for p in problems:
            print("PROBLEM: " + p)
        print("mutation check: " + ("ok" if not problems else f"{len(problems)} problem(s)"))
        return 1 if problems else 0
    seeds = [int(s) for s in opts.seeds.split(",")]
    record = run_all(opts, entries, seeds)
    record["catalogue"] = entries
    print(table(record, entries, reasons))
    if opts.record:
        with open(opts.record, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
            f.write("\n")
    bad_controls = [e["name"] for e in entries if e["class"] == "control"
                    and not all(r.get("conformant") for r in record["entries"][e["name"]].values())]
    differences = []
    if opts.compare:
        with open(opts.compare) as f:
            old = json.load(f)["entries"]
        for name, got in record["entries"].items():
            for s, r in got.items():
                before = old.get(name, {}).get(s, {})
                key = "conformant" if "conformant" in r else "caught"
                if bool(before.get(key)) != bool(r.get(key)):
                    differences.append(f"DIFFERENCE: {name} at seed {s}: {key} was "
                                       f"{bool(before.get(key))}, is {bool(r.get(key))}")
        for d in differences:
            print(d)
    return 1 if bad_controls or differences else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""What sampcert's runs found in the third-party samplers, and why, from the runs themselves.

Each adapter keeps a findings file (`<adapter>/findings.json`): the mechanisms found in that
library, each with the direct probe that pins it on the library itself, outside sampcert (a
test function in the adapter's `*_probes_test.py`, run by ctest), and the results it explains
(property, optionally dtype, family, sampler variant, a regular expression on the message).
From a certification's report.json and that file this tool produces, never by hand:

    findings.py REPORT.json expectations FINDINGS   the expectations file: every non-passing
                                                    (property, dtype, family) with the reason of
                                                    the finding that explains it; exit 1, naming
                                                    them, when a result has no finding
    findings.py write BUILD_DIR [--profiles P,...]  rewrites the expectations file of every
                                                    certification of CERTIFICATIONS at those
                                                    profiles (default: quick, ctest's) and
                                                    docs/thirdparty.md's findings table (from the quick
                                                    runs) from the reports of the ctests
    findings.py check BUILD_DIR [--profiles P,...]  the same, compared instead of written: exit
                                                    1 on any difference (ctest
                                                    docs.thirdparty_findings)
    findings.py REPORT.json table | summary         a markdown table of a report's failures
                                                    (every cell, or one row per property)

A finding with a "readme" sentence is listed in docs/thirdparty.md when the quick runs show it (with
their properties, variants and first input), when it explains no result (its probe alone found
it), when a checked-in standard-profile expectations file names it (marked so), or when it
carries "shown_by" (a run past ctest's budget shows it; its properties, variants and command); a
finding nothing shows is not listed. Only the standard library: it reads the
report's JSON (reports/report.schema.json).
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

# The certifications whose expectations come from findings: (report folder under the dev build
# tree, findings file, expectations file, profile), in the findings table's order. tests/thirdparty_python.cmake
# and adapters/thirdparty/llama_cpp/CMakeLists.txt register their ctests. The quick runs are
# ctest's (and CI's) and make the findings table; the standard runs exist where the build was
# configured with -DSAMPCERT_THIRDPARTY_STANDARD=ON (`check BUILD_DIR --profiles quick,standard`).
def _python_runs(profile, suffix):
    return [(f"tests/thirdparty/{name}.{profile}", f"{library}/findings.json",
             f"{library}/{expect}{suffix}")
            for name, library, expect in (
                ("torch", "torch", "expectations"),
                ("torch_f16", "torch", "expectations_f16"),
                ("torch_bf16", "torch", "expectations_bf16"),
                ("transformers", "transformers", "expectations"),
                ("transformers_f16", "transformers", "expectations_f16"),
                ("transformers_bf16", "transformers", "expectations_bf16"))]


CERTIFICATIONS = [run + ("quick",) for run in _python_runs("quick", ".json") + [
    ("tests/thirdparty/jax.quick", "jax/findings.json", "jax/expectations.json"),
    ("tests/thirdparty/jax_bf16.quick", "jax/findings.json", "jax/expectations_bf16.json"),
    ("thirdparty/llama_cpp/quick", "llama_cpp/findings.json", "llama_cpp/expectations.json"),
    # torch.multinomial(p, 1), generate's call (--draws step): quick runs only so far.
    ("tests/thirdparty/torch_step.quick", "torch/findings.json", "torch/expectations_step.json"),
    ("tests/thirdparty/torch_step_f16.quick", "torch/findings.json",
     "torch/expectations_step_f16.json"),
    ("tests/thirdparty/torch_step_bf16.quick", "torch/findings.json",
     "torch/expectations_step_bf16.json"),
]] + [run + ("standard",) for run in _python_runs("standard", ".standard.json") + [
    # JAX's mode="high" at the quick profile: registered with the standard runs (CI has no room
    # for its 310 CPU-s), so it is checked with them.
    ("tests/thirdparty/jax_high.quick", "jax/findings.json", "jax/expectations_high.json"),
]]

# reports::Severity: a cell shows its most severe status; a known failure outranks a pass.
WORST = ["NotSupported", "Pass", "Warning", "KnownFailure", "Inconclusive", "Fail", "Timeout",
         "Crash"]

# Results explained by sampcert's own rules, not by the library: no probe needed.
OWN = [
    ({"status": "Inconclusive", "message": r"^not reached"},
     "not reached: an earlier check of the same case failed (the finding that explains that "
     "check is the case's own)"),
    ({"status": "Inconclusive", "message": r"draw budget capped this test|declared draw cost"},
     "Inconclusive by the plan: the sampler's declared draw cost caps this test's draws below "
     "what its power needs (SPEC STAT-4b), so it is listed as not certified, never a Pass"),
    ({"status": "Inconclusive", "message": r"^no valid generated row returned draws"},
     "not reached: every valid generated row of this family failed an earlier check, so no "
     "draws were pooled"),
]

README_BEGIN = "<!-- findings.py: begin (generated; `findings.py write build/dev` regenerates) -->"
README_END = "<!-- findings.py: end -->"


def status_as_run(r):
    """A known failure's status as the sampler produced it."""
    return r["known_failure"]["status"] if r["status"] == "KnownFailure" else r["status"]


def message(r):
    return r.get("failure", {}).get("message", r.get("note", ""))


def failing(report):
    """Every result that is not a Pass, NotSupported or Warning, with its status as run."""
    out = []
    for r in report["results"]:
        r = dict(r, status=status_as_run(r))
        if r["status"] not in ("Pass", "NotSupported", "Warning"):
            out.append(r)
    return out


def matches(rule, r, sampler):
    for key in ("property", "dtype", "family", "status"):
        if key in rule and rule[key] != r[key]:
            return False
    if "sampler" in rule and sampler not in (rule["sampler"] if isinstance(rule["sampler"], list)
                                             else [rule["sampler"]]):
        return False
    return "message" not in rule or re.search(rule["message"], message(r)) is not None


def explain(r, sampler, findings, confirm=None):
    """(finding or None, reason) for one failing result; (None, None) when nothing explains it.
    With CONFIRM, a finding that carries a predicate explains the result only when
    CONFIRM(finding, result) holds (its probe, run on the result's row)."""
    for rule, reason in OWN:
        if matches(rule, r, sampler):
            return None, reason
    for f in findings["findings"]:
        if any(matches(rule, r, sampler) for rule in f["explains"]):
            if confirm is not None and "predicate" in f and not confirm(f, r):
                continue
            return f, f"{f['mechanism']} (probed: {', '.join(f['probes'])})"
    return None, None


class Confirm:
    """A finding's predicate on one result: its probe, run on the result's row file beside the
    report, prints one JSON object per row, and the predicate holds when the named field is at
    least its minimum. "probe" is a program of the build tree, run once per row; "python" is a
    script beside the findings file, run once per report on all its row files by the
    third-party venv's python ($SAMPCERT_THIRDPARTY_PYTHON, or .ci/install-deps's), given the
    run's --dtype. A result without a row file is not confirmed; a property the predicate
    lists as unchecked (with the reason) is taken as explained."""

    def __init__(self, build_dir, report_dir, report, findings_dir):
        self.build_dir, self.report_dir, self.findings_dir = build_dir, report_dir, findings_dir
        m = re.search(r"--dtype (f32|f16|bf16)\b", report["sampler"].get("exec", ""))
        self.dtype = m.group(1) if m else "f32"
        self.cache = {}

    def __call__(self, finding, r):
        pred = finding["predicate"]
        if r["property"] in pred.get("unchecked", {}):  # its reason says why, in findings.json
            return True
        row = r.get("failure", {}).get("row_file")
        if not row:
            return False
        out = self.probe(pred, os.path.join(self.report_dir, row))
        return out is not None and out.get(pred["field"], 0) >= pred["min"]

    def probe(self, pred, row_path):
        if "python" in pred:
            script = os.path.normpath(os.path.join(self.findings_dir, pred["python"]))
            if script not in self.cache:
                rows = sorted(os.path.join(self.report_dir, f) for f in os.listdir(self.report_dir)
                              if f.startswith("row.") and f.endswith(".json"))
                python = os.environ.get("SAMPCERT_THIRDPARTY_PYTHON",
                                        "/opt/sampcert-thirdparty/venv/bin/python")
                p = subprocess.run([python, script, "--dtype", self.dtype, *rows],
                                   capture_output=True, text=True)
                self.cache[script] = {} if p.returncode != 0 else {
                    o["row"]: o for o in map(json.loads, p.stdout.splitlines())}
            return self.cache[script].get(row_path)
        key = (pred["probe"], row_path)
        if key not in self.cache:
            p = subprocess.run([os.path.join(self.build_dir, pred["probe"]), row_path],
                               capture_output=True, text=True)
            self.cache[key] = json.loads(p.stdout) if p.returncode == 0 else None
        return self.cache[key]


def load(path):
    with open(path) as f:
        return json.load(f)


def check_probes(findings, findings_path):
    """Every finding names at least one probe, each a test that exists in the adapter's folder:
    FILE::NAME, a Python test method (def NAME) or a GoogleTest (TEST(Suite, NAME))."""
    problems = []
    for f in findings["findings"]:
        if not f.get("probes"):
            problems.append(f"{findings_path}: finding {f['id']} names no probe")
        for probe in f.get("probes", []):
            file, _, test = probe.partition("::")
            path = os.path.join(os.path.dirname(findings_path), file)
            pattern = rf"^\s+def {re.escape(test)}\(|^TEST\(\w+, {re.escape(test)}\)"
            if not test or not os.path.exists(path) or \
                    re.search(pattern, open(path).read(), re.M) is None:
                problems.append(f"{findings_path}: finding {f['id']}: probe {probe} not found")
    return problems


def expectations(report, findings, confirm=None):
    """(expectations dict, [unexplained results]) for one report."""
    sampler = report["sampler"]["name"]
    cells, unexplained = {}, []
    for r in failing(report):
        f, reason = explain(r, sampler, findings, confirm)
        if reason is None:
            unexplained.append(r)
            continue
        key = (r["property"], r["dtype"], r["family"])
        rank = WORST.index(r["status"]) if r["status"] in WORST else len(WORST)
        cell = cells.setdefault(key, {"rank": -1, "reasons": []})
        if reason not in cell["reasons"]:
            cell["reasons"].append(reason)
        if rank > cell["rank"]:
            cell["rank"], cell["status"] = rank, r["status"]
    entries = [{"property": k[0], "dtype": k[1], "family": k[2], "status": c["status"],
                "reason": "; and ".join(c["reasons"])} for k, c in sorted(cells.items())]
    ctx = report["context"]
    return {"format": "sampcert-expectations/2", "sampler": sampler,
            "profile": ctx.get("profile"), "seed": ctx.get("seed"),
            "note": f"Expected results of {sampler} ({report['sampler'].get('version', '')}) "
                    f"under the {ctx.get('profile')} profile, seed {ctx.get('seed')}. Written "
                    "by adapters/thirdparty/findings.py from the run and the adapter's "
                    "findings.json (each reason is a finding, with its direct probe): "
                    "regenerate, never edit.",
            "entries": entries}, unexplained


def cell(text, limit=300):
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[:limit] + " ..."


def code(text):
    return f"`{text}`" if text else ""


def portable(text, build_dir):
    """A reproduction line without this checkout's absolute paths; the tool, which the line names
    as it ran (a path into the build), is named `sampcert`, as the docs' other commands name it."""
    text = text.replace(os.path.abspath(build_dir) + "/", "build/dev/").replace(ROOT + "/", "")
    return re.sub(r"^(\S*/)?cli/sampcert ", "sampcert ", text)


def standard_reasons():
    """The reasons of every checked-in standard-profile expectations file, joined."""
    return "\n".join(e["reason"] for _, _, expect, profile in CERTIFICATIONS
                     if profile == "standard" and os.path.exists(os.path.join(HERE, expect))
                     for e in load(os.path.join(HERE, expect))["entries"])


def readme_table(runs, build_dir):
    """The findings table of docs/thirdparty.md: one row per finding with a readme sentence that the current runs
    show, with the properties it explains, its first minimal input and reproduction."""
    rows = []
    seen = {}
    for report, findings, confirm in runs:
        sampler = report["sampler"]["name"]
        for r in failing(report):
            f, _ = explain(r, sampler, findings, confirm)
            if f is None or "readme" not in f:
                continue
            key = (findings["library"], f["id"])
            entry = seen.setdefault(key, {"finding": f, "props": set(), "first": r,
                                          "samplers": []})
            entry["props"].add(r["property"])
            if sampler not in entry["samplers"]:
                entry["samplers"].append(sampler)
    # Findings that no property can show (found and pinned by a probe alone), those that only
    # the standard profile's runs show (a reason in a checked-in .standard.json file), and those
    # that only a run past ctest's budget shows ("shown_by": its properties, variants and
    # command, recorded in the adapter's README) are listed too: their probes run in ctest.
    standard = standard_reasons()
    for report, findings, _ in runs:
        for f in findings["findings"]:
            key = (findings["library"], f["id"])
            if "readme" in f and key not in seen and \
                    (not f["explains"] or f["mechanism"] in standard or "shown_by" in f):
                seen[key] = {"finding": f, "props": set(), "first": None, "samplers": []}
    for (library, _), e in seen.items():
        f, r = e["finding"], e["first"]
        if r is None and "shown_by" in f:
            s = f["shown_by"]
            rows.append(f"| {library} | {cell(f['readme'], 400)} | {s['properties']} "
                        f"({cell(s['note'], 200)}) | {s['variants']} "
                        f"| {code(cell(f.get('input', ''), 160))} | "
                        f"{code(cell(f.get('reproduce', ''), 300))} "
                        f"| {', '.join(f'`{p}`' for p in f['probes'])} |")
            continue
        if r is None:
            where = ("(none: its probe found it)" if not f["explains"] else
                     "(not in the quick runs: in the standard profile's, pinned in "
                     "expectations*.standard.json)")
            rows.append(f"| {library} | {cell(f['readme'], 400)} | {where} "
                        f"| | {code(cell(f.get('input', ''), 160))} | "
                        f"{code(cell(f.get('reproduce', ''), 300))} "
                        f"| {', '.join(f'`{p}`' for p in f['probes'])} |")
            continue
        fail = r.get("failure", {})
        rows.append(f"| {library} | {cell(f['readme'], 400)} | {', '.join(sorted(e['props']))} "
                    f"| {', '.join(e['samplers'])} "
                    f"| `{cell(fail.get('minimal_input') or fail.get('input', ''), 160)}` "
                    f"| `{cell(portable(fail.get('reproduction', ''), build_dir), 300)}` "
                    f"| {', '.join(f'`{p}`' for p in f['probes'])} |")
    head = ["| library | finding | properties | variants | minimal input | reproduce | "
            "direct probe |", "|---|---|---|---|---|---|---|"]
    return "\n".join(head + rows)


def regenerate(build_dir, profiles=("quick",)):
    """({path: wanted text}, problems) for the expectations files of the runs of PROFILES and
    docs/thirdparty.md (from the quick runs)."""
    wanted, problems, runs, unexplained_first = {}, [], [], []
    for folder, findings_file, expect_file, profile in CERTIFICATIONS:
        if profile not in profiles:
            continue
        report_path = os.path.join(build_dir, folder, "report.json")
        findings_path = os.path.join(HERE, findings_file)
        if not os.path.exists(report_path):
            problems.append(f"{report_path}: missing (run its ctest first: ctest -L thirdparty)")
            continue
        report, findings = load(report_path), load(findings_path)
        problems += check_probes(findings, findings_path)
        confirm = Confirm(build_dir, os.path.dirname(report_path), report,
                          os.path.dirname(findings_path))
        exp, unexplained = expectations(report, findings, confirm)
        for r in unexplained:
            unexplained_first.append(
                f"UNEXPLAINED {report['sampler']['name']} {r['property']} {r['dtype']} "
                f"{r['family']} {r['status']}: no finding of {findings_file} explains it (or "
                f"its predicate does not hold on the row): {cell(message(r), 200)}")
        wanted[os.path.join(HERE, expect_file)] = json.dumps(exp, indent=2) + "\n"
        if profile == "quick":
            runs.append((report, findings, confirm))
    problems = unexplained_first + problems
    readme = os.path.join(ROOT, "docs", "thirdparty.md")
    text = open(readme).read()
    a, b = text.find(README_BEGIN), text.find(README_END)
    if a < 0 or b < a:
        problems.append(f"{readme}: no '{README_BEGIN}' ... '{README_END}' block")
    elif not problems:
        table = readme_table(runs, build_dir)
        wanted[readme] = text[:a + len(README_BEGIN)] + "\n" + table + "\n" + text[b:]
    return wanted, problems


def summary_or_table(report, mode):
    rows = failing(report)
    if mode == "summary":
        by_prop = {}
        for r in rows:
            if r["status"] in ("Fail", "Timeout", "Crash"):
                by_prop.setdefault(r["property"], []).append(r)
        print("| property | dtypes | what the sampler does | minimal input | reproduce |")
        print("|---|---|---|---|---|")
        for prop in sorted(by_prop):
            rs = by_prop[prop]
            first = next((r for r in rs if r["dtype"] == "f32"), rs[0])
            f = first.get("failure", {})
            dtypes = ", ".join(d for d in ("f32", "f16", "bf16") if any(r["dtype"] == d
                                                                        for r in rs))
            print(f"| {prop} | {dtypes} | {cell(f.get('message', ''), 260)} | "
                  f"`{cell(f.get('minimal_input', ''), 200)}` | "
                  f"`{cell(f.get('reproduction', ''), 400)}` |")
        return
    print("| property | dtype | family | status | what the sampler does | minimal input |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        f = r.get("failure", {})
        print(f"| {r['property']} | {r['dtype']} | {r['family']} | {r['status']} | "
              f"{cell(message(r))} | "
              f"`{cell(f.get('minimal_input', r.get('worst_input', '')), 200)}` |")


def main(argv):
    if len(argv) in (2, 4) and argv[0] in ("write", "check"):
        profiles = ("quick",)
        if len(argv) == 4:
            profiles = tuple(argv[3].split(","))
            unknown = [p for p in profiles if p not in {c[3] for c in CERTIFICATIONS}]
            if argv[2] != "--profiles" or unknown:
                print(__doc__, file=sys.stderr)
                return 2
        wanted, problems = regenerate(argv[1], profiles)
        for p in problems:
            print("findings:", p)
        missing = [p for p in problems if ": missing (run its ctest first" in p]
        if argv[0] == "check" and missing and len(missing) == len(problems) and \
                os.environ.get("CI") != "true":
            print("SKIP: a certification's report is missing (its library is not installed: "
                  "sudo .ci/install-deps); under CI=true this fails")
            return 77
        if problems:
            return 1
        differ = [p for p, text in wanted.items()
                  if not os.path.exists(p) or open(p).read() != text]
        if argv[0] == "write":
            for p in differ:
                with open(p, "w") as f:
                    f.write(wanted[p])
            print(f"findings: wrote {len(differ)} file(s) of {len(wanted)}")
            return 0
        for p in differ:
            print(f"findings: {os.path.relpath(p, ROOT)} differs from what the current runs "
                  "give: run `adapters/thirdparty/findings.py write BUILD_DIR` and review")
        print(f"findings: {len(wanted) - len(differ)} of {len(wanted)} files as the runs give")
        return 1 if differ else 0
    if len(argv) >= 2 and argv[1] in ("table", "summary"):
        summary_or_table(load(argv[0]), argv[1])
        return 0
    if len(argv) == 3 and argv[1] == "expectations":
        exp, unexplained = expectations(load(argv[0]), load(argv[2]))
        json.dump(exp, sys.stdout, indent=2)
        print()
        for r in unexplained:
            print(f"findings: no finding explains {r['property']} {r['dtype']} {r['family']} "
                  f"{r['status']}: {cell(message(r), 200)}", file=sys.stderr)
        return 1 if unexplained else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

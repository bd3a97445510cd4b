#!/usr/bin/env python3
"""What a sampcert run found in a third-party sampler, from its report.json.

    findings.py REPORT.json table          a markdown table: property, dtype, status, what the
                                           sampler did (the failure message), minimal input,
                                           the command that reproduces it
    findings.py REPORT.json summary        the same, one row per property (its first failing
                                           case, f32 first), with the dtypes it fails in
    findings.py REPORT.json expectations   a draft expectations file (format 2) pinning every
                                           failing (property, dtype, family); the reasons are
                                           the messages: edit them into why (`sampcert report
                                           expectations REPORT --reasons OLD` keeps old ones)

Only the standard library: it reads the report's JSON (reports/report.schema.json).
"""
import json
import sys

# reports::Severity: a cell shows its most severe status; a known failure outranks a pass.
WORST = ["NotSupported", "Pass", "Warning", "KnownFailure", "Inconclusive", "Fail", "Timeout",
         "Crash"]


def status_as_run(r):
    """A known failure's status as the sampler produced it."""
    return r["known_failure"]["status"] if r["status"] == "KnownFailure" else r["status"]


def non_conformant(report, by_family=False):
    worst = {}
    for r in report["results"]:
        r = dict(r, status=status_as_run(r))
        if r["status"] in ("Pass", "NotSupported", "Warning"):
            continue
        key = (r["property"], r["dtype"]) + ((r["family"],) if by_family else ())
        rank = WORST.index(r["status"]) if r["status"] in WORST else len(WORST)
        if key not in worst or rank > worst[key][0]:
            worst[key] = (rank, r)
    return [worst[k][1] for k in sorted(worst)]


def cell(text, limit=300):
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[:limit] + " ..."


def main():
    report = json.load(open(sys.argv[1]))
    mode = sys.argv[2] if len(sys.argv) > 2 else "table"
    rows = non_conformant(report)
    if mode == "expectations":
        s = report["sampler"]
        entries = [{"property": r["property"], "dtype": r["dtype"], "family": r["family"],
                    "status": r["status"],
                    "reason": cell(r.get("failure", {}).get("message", r.get("note", "")))}
                   for r in non_conformant(report, by_family=True)]
        json.dump({"format": "sampcert-expectations/2", "sampler": s.get("name"),
                   "profile": report["context"].get("profile"),
                   "seed": report["context"].get("seed"), "entries": entries},
                  sys.stdout, indent=2)
        print()
        return
    if mode == "summary":
        by_prop = {}
        for r in report["results"]:
            r = dict(r, status=status_as_run(r))
            if r["status"] not in ("Fail", "Timeout", "Crash"):
                continue
            by_prop.setdefault(r["property"], []).append(r)
        print("| property | dtypes | what the sampler does | minimal input | reproduce |")
        print("|---|---|---|---|---|")
        for prop in sorted(by_prop):
            rs = by_prop[prop]
            first = next((r for r in rs if r["dtype"] == "f32"), rs[0])
            f = first.get("failure", {})
            dtypes = ", ".join(d for d in ("f32", "f16", "bf16")
                               if any(r["dtype"] == d for r in rs))
            print(f"| {prop} | {dtypes} | {cell(f.get('message', ''), 260)} | "
                  f"`{cell(f.get('minimal_input', ''), 200)}` | "
                  f"`{cell(f.get('reproduction', ''), 400)}` |")
        return
    print("| property | dtype | status | what the sampler does | minimal input | reproduce |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        f = r.get("failure", {})
        print(f"| {r['property']} | {r['dtype']} | {r['status']} | "
              f"{cell(f.get('message', r.get('note', '')))} | "
              f"`{cell(f.get('minimal_input', r.get('worst_input', '')), 200)}` | "
              f"`{cell(f.get('reproduction', ''), 400)}` |")


if __name__ == "__main__":
    main()

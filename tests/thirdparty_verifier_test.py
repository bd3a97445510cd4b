#!/usr/bin/python3
"""Certifies a third-party speculative-decoding verifier's family against its findings file.

Usage: thirdparty_verifier_test.py SAMPCERT PYTHON MODULES SERVER FINDINGS OUT_DIR [ARG...]

Runs `sampcert run --sampler exec:'PYTHON SERVER ARG...' --item ITEM --profile PROFILE --seed
SEED` (ITEM, PROFILE and SEED from FINDINGS) and requires that the results that are neither Pass
nor NotSupported are exactly FINDINGS' entries (property, family, status, and a substring of the
failure message), no more and no fewer. The verifier family alone is run (a quick profile's
item): the sampler's own sampling properties are the other third-party tests'. Skipped (77)
without the modules, failed under CI=true, as thirdparty_python_test.py.
"""
import json
import os
import shlex
import subprocess
import sys

sampcert, python, modules, server, findings_path, out_dir, *args = sys.argv[1:]


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import thirdparty_env  # noqa: E402

thirdparty_env.require(python, modules)

with open(findings_path) as f:
    spec = json.load(f)
command = " ".join(shlex.quote(w) for w in [python, server, *args])
cmd = [sampcert, "run", "--sampler", f"exec:{command}", "--profile", spec["profile"], "--seed",
       str(spec["seed"]), "--item", spec["item"], "--jobs", "2", "--out", out_dir]
print("$", " ".join(shlex.quote(w) for w in cmd), flush=True)
p = subprocess.run(cmd, capture_output=True, text=True)
report_path = os.path.join(out_dir, "report.json")
if not os.path.exists(report_path):
    print(p.stdout[-4000:], p.stderr[-4000:])
    sys.exit("FAIL: no report")
with open(report_path) as f:
    report = json.load(f)
got = {}
for r in report["results"]:
    if r["status"] in ("Pass", "NotSupported") or not r["property"].startswith("VER"):
        continue
    msg = (r.get("failure") or {}).get("message", "") or r.get("note", "")
    got[(r["property"], r["family"])] = (r["status"], msg)
want = {(e["property"], e["family"]): e for e in spec["findings"]}
bad = []
for key, (status, msg) in sorted(got.items()):
    e = want.get(key)
    if e is None:
        bad.append(f"NEW: {key[0]}/{key[1]} is {status}: {msg[:300]}")
    elif e["status"] != status or e["message"] not in msg:
        bad.append(f"CHANGED: {key[0]}/{key[1]} is {status}: {msg[:300]} (the findings say "
                   f"{e['status']}, '{e['message']}')")
for key in sorted(set(want) - set(got)):
    bad.append(f"FIXED: {key[0]}/{key[1]} now passes (the findings say {want[key]['status']}): "
               "update the findings file and docs/thirdparty.md")
passed = sum(r["status"] == "Pass" for r in report["results"] if r["property"].startswith("VER"))
print(f"{passed} VER results pass; {len(got)} findings, {len(want)} expected")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)

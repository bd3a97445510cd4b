#!/usr/bin/python3
"""Writes DIR/report.manifest.json listing every file in DIR (symlinks too, hashed through them)
with its SHA-256, the way `sampcert` publishes a report set: for tests that edit a report and
need the readers to get past the manifest to the check under test.

Usage: reseal_report.py DIR"""
import hashlib
import json
import os
import sys

folder = sys.argv[1]
files = []
for name in sorted(os.listdir(folder)):
    path = os.path.join(folder, name)
    if name == "report.manifest.json" or name.startswith(".") or os.path.isdir(path):
        continue
    with open(path, "rb") as f:
        files.append({"name": name, "sha256": hashlib.sha256(f.read()).hexdigest()})
with open(os.path.join(folder, "report.manifest.json"), "w") as f:
    json.dump({"files": files}, f, indent=2)
    f.write("\n")

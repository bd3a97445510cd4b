#!/usr/bin/python3
"""Validates report.json files against reports/report.schema.json with python3-jsonschema.

Usage: validate_reports.py SCHEMA REPORT.json...   Exit 0: all valid; 1: one is not;
77: jsonschema is not installed (ctest counts it as skipped, with this message)."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("SKIP: python3-jsonschema is not installed (apt-get install python3-jsonschema)")
    sys.exit(77)

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
bad = 0
for path in sys.argv[2:]:
    errors = sorted(validator.iter_errors(json.load(open(path))), key=lambda e: list(e.path))
    for e in errors[:5]:
        print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}")
    bad += bool(errors)
    print(f"{path}: {'INVALID' if errors else 'valid'}")
sys.exit(1 if bad else 0)

#!/usr/bin/env python3
"""llama_row_probe (the predicate of llama.cpp's findings, findings.json) on row files written
here as sampcert writes them: each field is 1 or more on the row that shows its mechanism and 0
on a plain row (V = 3, T = 1, no truncation).

Usage: llama_row_probe_test.py LLAMA_ROW_PROBE   (exit 77, skipped, when it was not built)
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

probe_path = sys.argv[1]
if not os.path.exists(probe_path):
    print(f"SKIP: {probe_path} was not built (adapters/thirdparty/llama_cpp/install.sh)")
    sys.exit(77)


def bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


NEAR = [2.7078185, 2.7078187, 2.707819]
ROWS = {  # name: logits, T, other fields
    "plain": ([0.0, 1.0, 2.0], 1.0, {}),
    "neg_t": ([0.0, 1.0, 2.0], -0.5, {}),
    "nan_logit": ([0.0, float("nan"), 2.0], 1.0, {}),
    "top_p_above_one": ([0.0, 1.0, 2.0], 1.0, {"top_p_bits": bits(1.5)}),
    "negative_top_k": ([0.0, 1.0, 2.0], 1.0, {"top_k": -2}),
    # Three adjacent float32 logits at T = 2.7e-7: quotients about 1e7, float32's spacing 1.
    "near_ties_small_t": (NEAR, 2.7078187e-07, {}),
    "near_ties_t_one": (NEAR, 1.0, {}),
}
EXPECT = {"neg_t": "invalid_selected", "nan_logit": "invalid_selected",
          "top_p_above_one": "invalid_selected", "negative_top_k": "invalid_selected",
          "near_ties_small_t": "quotient_rounding"}

seen, failures = {}, []
with tempfile.TemporaryDirectory() as d:
    for name, (x, t, extra) in ROWS.items():
        row = {"format": "sampcert-row/1", "dtype": "f32", "logit_bits": [bits(v) for v in x],
               "temperature_bits": bits(t), "top_k": 0, "top_p_bits": bits(1.0),
               "min_p_bits": 0, **extra}
        path = os.path.join(d, name + ".json")
        with open(path, "w") as f:
            json.dump(row, f)
        p = subprocess.run([probe_path, path], capture_output=True, text=True)
        if p.returncode != 0:
            failures.append(f"{name}: exit {p.returncode}: {p.stderr.strip()}")
            continue
        seen[name] = json.loads(p.stdout)
for name, field in EXPECT.items():
    if name in seen and seen[name][field] < 1:
        failures.append(f"{field} is {seen[name][field]} on {name}: {seen[name]}")
for field in set(EXPECT.values()):
    for name in ("plain", "near_ties_t_one"):
        if name in seen and seen[name][field] != 0:
            failures.append(f"{field} is {seen[name][field]} on {name}, wants 0: {seen[name]}")
if "neg_t" in seen and seen["neg_t"]["quotient_rounding"] != 0:
    failures.append(f"quotient_rounding at T < 0: {seen['neg_t']}")
for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failure(s)" if failures else f"all {len(ROWS)} rows as expected")
sys.exit(1 if failures else 0)

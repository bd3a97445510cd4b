"""A direct probe of torch on report rows, outside sampcert: what torch.softmax(logits / T)
gives on each row file (sampcert-row/1), in the compute dtype of the certified variant.

    /opt/sampcert-thirdparty/venv/bin/python torch_row_probe.py --dtype f32|f16|bf16 ROW_FILE...

Builds the logits from the row's bit patterns (float32 exactly for --dtype f32; the row's own
half type otherwise, as torch_sampler.py's variants do), sets masked tokens to -inf, divides by
T and takes torch.softmax: plain torch and numpy, no sampcert code. Prints one JSON line per
row: {"row": file, "nan": NaN probabilities, "zero": probabilities exactly 0, "inf_quotients":
infinite logit / T among the allowed tokens, "masked_nan": NaN logits among the masked tokens,
"drawn_at_invalid_temperature": 1 when T is not a valid temperature (T < 0 or T = +inf; SPEC
IN-2) and torch.multinomial(probabilities, 1) still returns a token, else 0, "quotient_rounding":
what rounding logit / T to the compute dtype does when everything after it is exact (at T > 0,
on the allowed tokens): the pairs of distinct logits whose quotients come out equal, plus the
tokens whose probability it moves past SPEC TOL-3's bound for the variant's accuracy class}.
adapters/thirdparty/
findings.py runs it as the predicate of a torch or transformers finding on the failing rows
the finding claims (findings.json).
"""
import argparse
import json
import math

import numpy as np
import torch

HALF = {"f16": (np.float16, torch.float16), "bf16": (None, torch.bfloat16)}
# SPEC section 8's table, by the variant's accuracy class (its compute dtype): u_out and floor;
# u = 2^-24, c = 6 and lambda = 8 in every class.
TOLERANCE = {"f32": (2.0**-24, 2.0**-100), "bf16": (2.0**-8, 2.0**-100),
             "f16": (2.0**-11, 2.0**-14)}


def quotient_rounding(x, allowed, t, compute):
    """Pairs of distinct allowed logits whose quotients round to one value, plus allowed tokens
    whose probability the rounding of x / T alone moves past TOL-3 (rel_i <= u (3 |l_i| + c) +
    lambda sqrt(V) u + u + u_out, for p_i >= floor): the quotients as the variant computes them,
    then the softmax in float64 against the exact one (float64 of x, divided in float64)."""
    if not t > 0 or not bool(allowed.any()):
        return 0
    exact = x[allowed].double()
    if not bool(torch.isfinite(exact).all()):
        return 0  # an infinite or NaN logit: other findings' mechanisms
    rounded = (x[allowed] / torch.tensor(t, dtype=x.dtype)).double()
    if not bool(torch.isfinite(rounded).all()):
        return 0  # an overflow: inf-minus-inf's
    merged = len(torch.unique(exact)) - len(torch.unique(rounded))
    lw = exact / t - (exact / t).max()  # the exact log-weights, l_i <= 0
    p = torch.softmax(lw, 0)
    q = torch.softmax(rounded - rounded.max(), 0)
    u, (u_out, floor) = 2.0**-24, TOLERANCE[compute]
    bound = u * (3 * lw.abs() + 6) + 8 * math.sqrt(x.shape[0]) * u + u + u_out
    rel = (q - p).abs() / p
    return merged + int(((p >= floor) & (rel > bound)).sum())


def logits(row, compute):
    dtype, bits = row["dtype"], row["logit_bits"]
    if dtype == "f32":
        x = torch.from_numpy(np.array(bits, dtype=np.uint32).view(np.float32).copy())
        return x if compute == "f32" else x.to(HALF[compute][1])
    half = torch.from_numpy(np.array(bits, dtype=np.uint16).view(np.int16).copy())
    half = half.view(torch.bfloat16 if dtype == "bf16" else torch.float16)
    return half.float() if compute == "f32" else half


def probe(path, compute):
    with open(path) as f:
        row = json.load(f)
    if row.get("format") != "sampcert-row/1":
        raise SystemExit(f"{path}: not a sampcert-row/1 file")
    x = logits(row, compute)
    allowed = torch.ones(x.shape[0], dtype=torch.bool)
    masked_nan = 0
    if row.get("mask"):
        masked_nan = int((torch.isnan(x) & ~torch.tensor(row["mask"], dtype=torch.bool)).sum())
        allowed = torch.tensor(row["mask"], dtype=torch.bool)
        x = x.masked_fill(~allowed, float("-inf"))
    t = float(np.array([row["temperature_bits"]], dtype=np.uint32).view(np.float32)[0])
    q = x / t
    p = torch.softmax(q, dim=-1)
    drawn = 0
    if t < 0 or t == float("inf"):
        try:
            torch.multinomial(p.float(), 1)
            drawn = 1
        except RuntimeError:  # torch's own check of the probabilities, not of the temperature
            pass
    return {"row": path, "nan": int(torch.isnan(p).sum()), "zero": int((p == 0).sum()),
            "inf_quotients": int(torch.isinf(q[allowed]).sum()), "masked_nan": masked_nan,
            "drawn_at_invalid_temperature": drawn,
            "quotient_rounding": quotient_rounding(x, allowed, t, compute)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="f32")
    ap.add_argument("rows", nargs="+")
    args = ap.parse_args()
    for path in args.rows:
        print(json.dumps(probe(path, args.dtype)))


if __name__ == "__main__":
    main()

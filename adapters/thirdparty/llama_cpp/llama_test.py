#!/usr/bin/python3
"""llama.cpp's sampler chain (adapters/thirdparty/llama_cpp/) through the sampcert binary.

Usage: llama_test.py MODE SAMPCERT PLUGIN WORK_DIR SOURCE_DIR
  MODE behaviour: the plug-in draws from llama.cpp's chain (positive controls: top-k, masks,
       same-seed streams, batch position), and each llama.cpp behaviour the findings table of docs/thirdparty.md
       table lists is reproduced with its one-line command, exactly as pinned there.
  MODE quick: `sampcert run --profile quick --expect expectations.json` (the certification
       ctest runs); every failure must be the pinned one (a FIX, REGRESSION or DIFFERENCE fails
       the test).
  MODE penalties: PLUGIN is the penalties variant (libsampcert_llama_cpp_penalties.so): its
       declaration, then each penalty item of its quick plan (SPEC section 16, "Planned rows"),
       `sampcert run --profile quick --item ITEM --expect expectations_penalties.json`, two at a
       time; every item must run, give its PEN-* result (INV-ERR-1 on INV-8's invalid
       requests) and match the expectations file.
PLUGIN empty: llama.cpp was not built (adapters/thirdparty/llama_cpp/install.sh): exit 77
(skipped) with a message, or 1 under CI=true, where a third-party test must run.
"""
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

mode, sampcert, plugin, work, source = sys.argv[1:6]
if not plugin or not os.path.exists(plugin):
    print("SKIP: llama.cpp is not built, so its plug-in is not either: run "
          "adapters/thirdparty/llama_cpp/install.sh (or .ci/install-deps), then reconfigure "
          "with -DSAMPCERT_THIRDPARTY=ON")
    sys.exit(1 if os.environ.get("CI") == "true" else 77)
os.makedirs(work, exist_ok=True)
failures = []


def run(*args, timeout=600):
    p = subprocess.run([sampcert, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def check(what, cond, detail=""):
    print(f"{'ok  ' if cond else 'FAIL'} {what}")
    if not cond:
        print("     " + detail.replace("\n", "\n     ")[:3000])
        failures.append(what)


def draws(*row, n=400, seed=1, extra=()):
    """Tokens llama.cpp draws for one row (sampcert sample), or None on an error."""
    rc, out = run("sample", "--sampler", plugin, "--draws", str(n), "--seed", str(seed),
                  *extra, *row)
    if rc != 0:
        return None, out
    return [int(t) for t in out.split(":")[-1].split()], out


if mode == "behaviour":
    rc, out = run("info", "--sampler", plugin)
    check("info: llama.cpp's declaration",
          rc == 0 and "llama.cpp" in out and "truncation first" in out, out)
    rc, out = run("info", "--sampler", plugin, "--sampler-config", "order=bogus")
    check("an unknown --sampler-config is refused, named", rc == 3 and "order=bogus" in out, out)

    # Positive controls: what llama.cpp gets right.
    t, out = draws("--logits", "0,1,2,3", "--top-k", "2", n=2000)
    check("top-k 2 draws only the top two, both", t is not None and set(t) == {2, 3}, out)
    t, out = draws("--logits", "5,1,2,3", "--mask", "0,1,1,1", n=2000)
    check("a masked token (-inf) is never drawn", t is not None and 0 not in t and len(set(t)) == 3,
          out)
    t, out = draws("--logits", "0,0,0,9", "--temperature", "0", n=200)
    check("T = 0 draws the maximum", t == [3] * 200, out)
    a, _ = draws("--logits", "0,1,2,3", n=300, seed=7)
    b, _ = draws("--logits", "0,1,2,3", n=300, seed=7)
    c, out = draws("--logits", "0,1,2,3", n=300, seed=8)
    check("same seed, same draws; another seed, other draws",
          a is not None and a == b and a != c, out)
    # Draws 0..299 at once equal draws 0..299 of a longer run (one stream per seed and row id).
    d, out = draws("--logits", "0,1,2,3", n=600, seed=7)
    check("draws are a stream: a longer run continues the shorter one",
          a is not None and d is not None and d[:300] == a, out)
    e, out = draws("--logits", "0,1,2,3", n=300, seed=7, extra=("--row-id", "5"))
    check("another row id, another stream", e is not None and e != a, out)

    # llama.cpp's behaviours the README table pins (each one a finding of the suite). The
    # last candidate of an unsorted chain is token V - 1.
    t, out = draws("--logits", "0,nan,1,2")
    check("NaN logit: a token, always the last candidate (the NaN poisons dist's sum)",
          t == [3] * 400, out)
    t, out = draws("--logits", "0,1,2", "--mask", "0,0,0")
    check("empty support: a masked token, always the last candidate", t == [2] * 400, out)
    t, out = draws("--logits", "0,inf,1")
    check("+inf logit loses: inf - inf = NaN in dist, the last candidate wins", t == [2] * 400,
          out)
    t, out = draws("--logits", "1,0", "--temperature", "1e-45")
    check("T = 1e-45: 1/T overflows, inf - inf = NaN, the smaller logit wins", t == [1] * 400,
          out)
    # top-k above 128 sorts by buckets: int(6.4 * x + 64) overflows for x > 3.4e8 (and +inf,
    # NaN) and lands in the lowest bucket, so the largest logit is cut; at 128 it is kept.
    big = "1e10" + ",0" * 129
    t, out = draws("--logits", big, "--top-k", "129")
    check("top_k = 129 drops a logit of 1e10 (bucket index overflow): never token 0",
          t is not None and 0 not in t and len(set(t)) > 50, out)
    t, out = draws("--logits", big, "--top-k", "128")
    check("top_k = 128 (a plain partial sort) keeps it: always token 0", t == [0] * 400, out)
    t, out = draws("--logits", "0,3,1", "--temperature", "-1")
    check("T < 0: a token (greedy), no error", t == [1] * 400, out)
    t, out = draws("--logits", "0,1,2,3", "--temperature", "inf", n=2000)
    check("T = inf: a token, uniform over the candidates", t is not None and set(t) == {0, 1, 2, 3},
          out)
    t, out = draws("--logits", "0,1,2,3", "--top-p", "1.5", n=2000)
    check("top_p = 1.5: a token (top-p off)", t is not None and set(t) == {0, 1, 2, 3}, out)
    t, out = draws("--logits", "0,1,2,3", "--top-p", "0")
    check("top_p = 0: a token (the top one)", t == [3] * 400, out)
    t, out = draws("--logits", "0,1,2,3", "--min-p", "1.5")
    check("min_p = 1.5: a token (the top one)", t == [3] * 400, out)
    t, out = draws("--logits", "0,1,2,3", "--top-k", "-1", n=2000)
    check("top_k = -1: a token (top-k off)", t is not None and set(t) == {0, 1, 2, 3}, out)
elif mode == "quick":
    start = time.monotonic()
    rc, out = run("run", "--sampler", plugin, "--profile", mode, "--jobs", "2", "--expect",
                  os.path.join(source, "expectations.json"), "--out", work, timeout=3600)
    print(out[-20000:])
    print(f"llama.cpp {mode} run: {time.monotonic() - start:.1f} s")
    check(f"the {mode} profile fails exactly as pinned in the expectations file", rc == 0, "")
elif mode == "penalties":
    start = time.monotonic()
    rc, out = run("info", "--sampler", plugin)
    check("info: the penalties variant declares penalties, both rules over prompt and output",
          rc == 0 and "llama.cpp_penalties" in out and ", penalties" in out
          and out.count("prompt and output") == 2, out)
    rc, out = run("plan", "--sampler", plugin, "--profile", "quick")
    items = [line.split()[1] for line in out.splitlines() if line.startswith("penalties ")]
    # Ten planned rows per dtype (penalty_rows.cc), the top-k one and INV-8's two invalid
    # requests included: a plan that stops sending them certifies nothing.
    check("the quick plan has the 30 penalty items (10 rows x 3 dtypes)",
          rc == 0 and len(items) == 30, out[-3000:])
    expect = os.path.join(source, "expectations_penalties.json")

    def certify(item):
        folder = os.path.join(work, item.replace("/", "_"))
        rc, out = run("run", "--sampler", plugin, "--profile", "quick", "--item", item,
                      "--expect", expect, "--out", folder)
        try:
            with open(os.path.join(folder, "report.json")) as f:
                results = json.load(f)["results"]
        except (OSError, ValueError):
            results = []
        return item, rc, out, [r for r in results
                               if r["property"].startswith("PEN-") or r["property"] == "INV-ERR-1"]

    with ThreadPoolExecutor(max_workers=2) as pool:
        for item, rc, out, pen in pool.map(certify, items):
            statuses = ", ".join(f"{r['property']} {r['status']}" for r in pen)
            check(f"{item}: {statuses or 'no PEN-* or INV-ERR-1 result'}, as the expectations "
                  "file says",
                  rc == 0 and len(pen) > 0, out[-3000:])
    print(f"llama.cpp penalties run: {time.monotonic() - start:.1f} s")
else:
    sys.exit(f"unknown mode {mode}")

if failures:
    print(f"{len(failures)} check(s) failed: {failures}")
    sys.exit(1)
print("all checks passed")

#!/usr/bin/python3
"""Certifies a third-party Python sampler (adapters/thirdparty/) through the exec: protocol.

Usage: thirdparty_python_test.py SAMPCERT PYTHON MODULES SERVER EXPECT OUT_DIR PROFILE [ARG...]
       thirdparty_python_test.py --unittest PYTHON MODULES TEST_DIR

Runs `sampcert run --sampler exec:'PYTHON SERVER ARG...' --profile PROFILE --expect EXPECT
--item-timeout 1200`;
the result is sampcert's: 0 when every result is what EXPECT pins (a FIX, REGRESSION or
DIFFERENCE fails). MODULES (comma-separated, e.g. "torch,transformers") must import in PYTHON
(the virtual environment .ci/install-deps makes); when they do not, the test is skipped
(exit 77) with what is missing and how to install it, except under CI=true, where it fails.
--unittest runs the adapters' own tests (unittest discover in TEST_DIR) with PYTHON instead.
"""
import os
import shlex
import subprocess
import sys
import time

unit = sys.argv[1] == "--unittest"
if unit:
    python, modules, test_dir = sys.argv[2:5]
else:
    sampcert, python, modules, server, expect, out_dir, profile, *args = sys.argv[1:]


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import thirdparty_env  # noqa: E402

thirdparty_env.require(python, modules)

if unit:
    sys.exit(subprocess.run([python, "-m", "unittest", "discover", "-v", "-s", test_dir, "-p",
                             "*_test.py"]).returncode)
command = " ".join(shlex.quote(w) for w in [python, server, *args])
# The item limit (CPU seconds, the worker's and, separately, the sampler process's) is 1200,
# not the default 300: an interpreted sampler pays every row of a deterministic item in Python
# (transformers f16's used 176 CPU-s here, and past 300 on a slower CI machine, where SIGXCPU
# killed it). The limit guards against a hang; it must not decide what a run certifies.
cmd = [sampcert, "run", "--sampler", f"exec:{command}", "--profile", profile, "--jobs", "2",
       "--item-timeout", "1200", "--expect", expect, "--out", out_dir]
print("$", " ".join(shlex.quote(w) for w in cmd), flush=True)
t = time.monotonic()
# The run starts a sampler process per worker (about 70 in a quick run), each importing torch
# and transformers again (5 s of CPU each, most of the quick run's time). A fork server of the
# same command imports them once (sampcert.protocol.delegate_to_fork_server: each process the
# tool starts is served by a child forked from it); the command and the report are unchanged.
# SAMPCERT_NO_FORK_SERVER=1 runs without it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from sampcert import api  # noqa: E402

fork = os.environ.get("SAMPCERT_NO_FORK_SERVER", "") in ("", "0")
with api._ForkServer([python, server, *args] if fork else None, script=True) as env:
    print("fork server:", "running" if env else "none (each sampler process imports itself)",
          flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
print(p.stdout[-6000:], p.stderr[-4000:], sep="\n")
print(f"exit {p.returncode} after {time.monotonic() - t:.0f} s; report in {out_dir}")
sys.exit(p.returncode)

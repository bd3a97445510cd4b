#!/usr/bin/env python3
"""sampcert's in-process debugging (sampcert.load_row, reference, replay, load_sampler) and
certify()'s fork server (python/sampcert/_fork_server.py), from the source tree.

    python_debug_test.py SAMPCERT WORK

SAMPCERT is the built tool (SAMPCERT_EXECUTABLE). Hand-written row files: load_row gives the
row's values, mask and parameters bit-exact; reference agrees with `sampcert reference`; replay
passes a correct sampler, fails one that draws a -inf token or returns tokens for an invalid
row, and lets a sampler's exception through (a debugger stops there). The fork server: a
sampler process that `sampcert sample` starts is a child forked from the server (not a fresh
interpreter), its tokens are right, a hung child is killed with the process the tool times
out, and without the server every process loads the sampler itself. Exit 77 (skip) without
numpy; under CI=true that fails.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent

try:
    import numpy as np
except ImportError:
    print("SKIP: no numpy")
    sys.exit(1 if os.environ.get("CI") == "true" else 77)

sys.path.insert(0, str(SOURCE / "python"))
import sampcert  # noqa: E402
from sampcert import api, protocol  # noqa: E402


def f32_bits(x):
    return int(np.array([x], dtype="<f4").view("<u4")[0])


def row_file(path, dtype, logits, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, mask=None,
             row_id=7):
    if dtype == "f32":
        bits = [int(b) for b in np.array(logits, dtype="<f4").view("<u4")]
    elif dtype == "f16":
        bits = [int(b) for b in np.array(logits, dtype="<f2").view("<u2")]
    else:
        bits = [int(b) >> 16 for b in np.array(logits, dtype="<f4").view("<u4")]
    data = {"format": "sampcert-row/1", "dtype": dtype, "vocab": len(bits),
            "family": "hand_written", "temperature": temperature,
            "temperature_bits": f32_bits(temperature), "top_k": top_k, "top_p": top_p,
            "top_p_bits": f32_bits(top_p), "min_p": min_p, "min_p_bits": f32_bits(min_p),
            "row_id": row_id, "logit_bits": bits}
    if mask is not None:
        data["mask"] = mask
    path.write_text(json.dumps(data))
    return path


def softmax_sampler(batch, seed, first_draw, draws_per_row):
    """Correct for rows without truncation: draws from softmax over the support."""
    out = []
    for r in batch.rows:
        x = r.logits.astype(np.float64) / r.temperature
        if r.mask is not None:
            x = np.where(r.mask, x, -np.inf)
        p = np.exp(x - x.max())
        p /= p.sum()
        rng = np.random.default_rng([seed, r.row_id, first_draw])
        out.append(rng.choice(len(p), size=draws_per_row, p=p))
    return np.array(out)


def check(condition, message):
    if not condition:
        print(f"FAIL: {message}")
        sys.exit(1)


def test_debugging(work):
    valid = row_file(work / "valid.json", "f32", [0.0, 1.0, 2.0, -np.inf])
    f16 = row_file(work / "f16.json", "f16", [0.5, -1.25, 3.0], temperature=0.5,
                   mask=[1, 0, 1], top_p=0.9)
    invalid = row_file(work / "invalid.json", "f32", [0.0, 1.0], temperature=-1.0)

    b = sampcert.load_row(f16)
    r = b.rows[0]
    check(b.dtype == "f16" and b.vocab == 3 and len(b.rows) == 1, f"batch {b}")
    check(r.logits.dtype == np.float32 and list(r.logits) == [0.5, -1.25, 3.0], f"{r.logits}")
    check(list(r.mask) == [True, False, True] and r.temperature == 0.5 and r.row_id == 7,
          f"{r}")
    check(r.top_p == np.float32(0.9), f"top_p {r.top_p!r} is not fp32 0.9")

    ref = sampcert.reference(valid)
    check(ref.vocab == 4 and ref.support == 3 and ref.classes[3] == "outside-support",
          f"reference {ref}")
    e = np.exp([0.0, 1.0, 2.0])
    check(np.allclose(ref.probabilities[:3], e / e.sum(), rtol=1e-15, atol=0)
          and ref.probabilities[3] == 0, f"reference probabilities {ref.probabilities}")
    check(str(ref).startswith("regime: "), f"reference text {str(ref)[:80]!r}")

    good = sampcert.replay(softmax_sampler, valid, draws=2000, seed=3)
    check(good.ok and good.tokens.shape == (1, 2000), good.describe())
    counts = good.counts()
    check(counts[3] == 0 and counts[2] > counts[0], f"counts {counts}")

    def draws_the_minus_inf_token(batch, seed, first_draw, draws_per_row):
        t = softmax_sampler(batch, seed, first_draw, draws_per_row)
        t[0, 5] = 3
        return t
    bad = sampcert.replay(draws_the_minus_inf_token, valid, draws=100)
    check(not bad.ok and "token 3" in bad.describe(), bad.describe())
    try:
        bad.assert_ok()
        check(False, "assert_ok passed a failing replay")
    except AssertionError as failure:
        check("outside the reference's kept set" in str(failure), str(failure))

    def drops_the_least_token(batch, seed, first_draw, draws_per_row):
        t = softmax_sampler(batch, seed, first_draw, draws_per_row)
        t[t == 0] = 1  # token 0 (p = 0.09) is never drawn: 180 of 2000 expected
        return t
    dropped = sampcert.replay(drops_the_least_token, valid, draws=2000)
    check(not dropped.ok and "token 0 must be kept" in dropped.describe(), dropped.describe())

    def raising(batch, seed, first_draw, draws_per_row):
        raise ZeroDivisionError("the sampler's own bug")
    try:
        sampcert.replay(raising, valid)
        check(False, "replay swallowed the sampler's exception on a valid row")
    except ZeroDivisionError:
        pass

    def refuses(batch, seed, first_draw, draws_per_row):
        if batch.rows[0].temperature < 0:
            raise protocol.SamplerError(protocol.INVALID_TEMPERATURE, "negative temperature")
        return softmax_sampler(batch, seed, first_draw, draws_per_row)
    check(sampcert.replay(refuses, invalid).ok, "a sampler that refuses an invalid row failed")
    silent = sampcert.replay(softmax_sampler, invalid, draws=10)
    check(not silent.ok and "invalid row" in silent.describe(), silent.describe())
    try:
        sampcert.reference(invalid)
        check(False, "reference of an invalid row returned")
    except sampcert.InvalidRow as why:
        check(why.code == "InvalidTemperature", f"InvalidRow code {why.code}")

    # A one-row Batch made in Python (no file) has a reference too.
    made = protocol.Batch("f32", 3, [protocol.Row(np.array([0, 0, 5], np.float32),
                                                  np.array([0, 0, 5], np.float32).view("<u4"),
                                                  None, 0.0, 0, 1.0, 0.0, 1)])
    check(sampcert.reference(made).regime == "greedy" or
          list(sampcert.reference(made).probabilities) == [0, 0, 1],
          f"temperature 0: {sampcert.reference(made)}")
    print("debugging: ok")


SAMPLER_FILE = '''
import os, time
import numpy as np
import sampcert
LOADED_IN = os.getpid()

def sample(batch, seed, first_draw, draws_per_row):
    with open(os.environ["PID_LOG"], "a") as f:
        f.write(f"{LOADED_IN} {os.getpid()} {os.getppid()}\\n")
    if batch.rows[0].temperature == 3.0:
        while True:  # a hang that burns CPU: the item's CPU time must stop it
            pass
    if batch.rows[0].temperature == 4.0:
        time.sleep(600)  # a hang of its own: its process dies with the tool
    return np.array([[int(np.argmax(r.logits))] * draws_per_row for r in batch.rows])

sampcert.certify(sample)  # a script that certifies at its top level: loaded up to here
'''


def sample_once(tool, command, env, temperature="1", timeout=None, timeout_s=120):
    argv = [tool, "sample", "--sampler", command, "--logits", "0,5,1", "--draws", "3",
            "--temperature", temperature]
    if timeout:
        argv += ["--item-timeout", str(timeout)]
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env, timeout=timeout_s)


def gone(pid, within=5.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.05)
    return not Path(f"/proc/{pid}").exists()


def test_fork_server(tool, work):
    file = work / "pid_sampler.py"
    file.write_text(SAMPLER_FILE)
    log = work / "pids.log"
    log.unlink(missing_ok=True)
    fn = sampcert.load_sampler(f"{file}:sample")
    command, python = api._sampler_argv(fn)
    os.environ["PID_LOG"] = str(log)
    with api._ForkServer(python["argv"]) as env:
        check(env is not None and "SAMPCERT_FORK_SERVER" in env, "the fork server did not start")
        server = Path(env["SAMPCERT_FORK_SERVER"])
        started = time.monotonic()
        for _ in range(3):
            out = sample_once(tool, command, env)
            check(out.returncode == 0 and out.stdout.rstrip().endswith(": 1 1 1"), out.stdout)
        forked = time.monotonic() - started
        loaded, pids = set(), set()
        for line in log.read_text().split("\n")[:-1]:
            loaded_in, pid, parent = (int(x) for x in line.split())
            check(loaded_in != pid and parent == loaded_in,
                  f"sampler process {pid} (parent {parent}) was not forked from the server "
                  f"that loaded the sampler ({loaded_in})")
            loaded.add(loaded_in)
            pids.add(pid)
        check(len(loaded) == 1 and len(pids) == 3, f"servers {loaded}, children {pids}")
        # A hang that burns CPU: the child has the item's CPU limit of the process it serves,
        # and runs out of it as that process would.
        log.unlink()
        started = time.monotonic()
        out = sample_once(tool, command, env, temperature="3", timeout=1)
        spent = time.monotonic() - started
        check(out.returncode != 0 and "CPU time" in out.stdout and spent < 15,
              f"a CPU-bound hang ({spent:.1f} s): {out.stdout}")
        hung = int(log.read_text().split()[1])
        check(gone(hung), f"the hung child {hung} outlived its timeout")
        # A hang that sleeps, and the tool killed: the server kills the child of the process
        # that asked for it when that process dies.
        log.unlink()
        try:
            sample_once(tool, command, env, temperature="4", timeout_s=3)
            check(False, "a sleeping sampler answered")
        except subprocess.TimeoutExpired:
            pass  # subprocess.run killed the tool; its sampler process dies with it
        hung = int(log.read_text().split()[1])
        check(gone(hung), f"the sleeping child {hung} outlived the tool")
    check(not server.exists(), f"the server left its socket {server}")
    log.unlink()
    started = time.monotonic()
    out = sample_once(tool, command, None)
    fresh = time.monotonic() - started
    loaded_in, pid, _ = (int(x) for x in log.read_text().split())
    check(out.returncode == 0 and loaded_in == pid,
          f"without the server the process loads the sampler itself: {out.stdout}")
    print(f"fork server: ok (3 forked calls {forked:.2f} s; one fresh call {fresh:.2f} s)")


def main():
    tool, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    os.environ["SAMPCERT_EXECUTABLE"] = tool
    test_debugging(work)
    test_fork_server(tool, work)


if __name__ == "__main__":
    main()

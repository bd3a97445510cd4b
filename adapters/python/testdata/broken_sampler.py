"""A deliberately broken protocol sampler for tests/exec_sampler_test.py. --sampler-config picks
how sample() misbehaves: print (stray prints, then a correct answer), raise (an exception),
crash (SIGSEGV), exit (exits mid-call), garbage (junk on the reply fd), stall (never answers),
row-error (a SamplerError naming row 0), wrong-count (too few tokens), spin (computes forever:
the CPU limit it inherits from a runner's worker ends it), slow (answers correctly after
BROKEN_SAMPLER_SLEEP_S seconds). BROKEN_SAMPLER_DRAW_COST_NS, where set, is the declared draw
cost per token (which extends how long the host waits for a sample reply)."""

import os
import signal
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sampcert_protocol as sp  # noqa: E402

MODE = {}


def create(config):
    MODE["mode"] = config or "print"


def sample(batch, seed, first_draw, draws_per_row):
    mode = MODE["mode"]
    if mode == "print":
        print("stray print to stdout " * 10)
        sys.__stdout__.write("written to the real stdout\n")
        sys.__stdout__.flush()
        os.write(1, b"raw write to fd 1\n")
        return np.zeros((len(batch.rows), draws_per_row), np.int64)
    if mode == "raise":
        raise KeyError("no such thing")
    if mode == "crash":
        sys.stderr.write("about to crash\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "exit":
        os._exit(3)
    if mode == "garbage":
        os.write(int(os.environ["SAMPCERT_PROTOCOL_FDS"].split(",")[1]), b"Hello, world!\n" * 4)
        time.sleep(60)
    if mode == "stall":
        time.sleep(3600)
    if mode == "slow":
        time.sleep(float(os.environ["BROKEN_SAMPLER_SLEEP_S"]))
        return np.zeros((len(batch.rows), draws_per_row), np.int64)
    if mode == "spin":
        while True:
            pass
    if mode == "row-error":
        raise sp.SamplerError(sp.INVALID_TOP_P, "row 0: top_p is wrong (from python)", 0)
    if mode == "wrong-count":
        return np.zeros(1, np.int64)
    raise sp.SamplerError(sp.INVALID_ARGUMENT, f"unknown mode {mode}")


if __name__ == "__main__":
    cost = float(os.environ.get("BROKEN_SAMPLER_DRAW_COST_NS", "0"))
    sp.serve(sample, sp.Info(name="broken", capabilities=["f32"], draw_cost_ns_per_token=cost),
             create_fn=create)

#!/usr/bin/env python3
"""The smallest complete protocol sampler: f32 rows, softmax in float64 at any temperature
including 0 (uniform over the arg-max), no masks, no truncation: it declares only what it does.

    PYTHONPATH=adapters/python sampcert run --sampler exec:'python3 minimal_sampler.py'

Draw j of a row is keyed by (seed, row_id, j) through numpy's Philox counter, so any range of
draws can be asked for in any order (SPEC DRAW-1's random access; same-seed determinism)."""
import numpy as np

import sampcert_protocol as sp


def distribution(r, row):
    t = row.temperature
    if not (t >= 0 and t != np.inf):  # NaN, negative or +inf (-0.0 is 0)
        raise sp.SamplerError(sp.INVALID_TEMPERATURE, f"row {r}: temperature is {t} "
                              "(must be finite and >= 0)", r)
    if row.top_k < 0:
        raise sp.SamplerError(sp.INVALID_TOP_K, f"row {r}: top_k is {row.top_k} (>= 0)", r)
    if not 0 < row.top_p <= 1:
        raise sp.SamplerError(sp.INVALID_TOP_P, f"row {r}: top_p is {row.top_p} (in (0, 1])", r)
    if not 0 <= row.min_p < 1:
        raise sp.SamplerError(sp.INVALID_MIN_P, f"row {r}: min_p is {row.min_p} (in [0, 1))", r)
    x = row.logits.astype(np.float64)
    if np.isnan(x).any():
        raise sp.SamplerError(sp.NAN_LOGIT, f"row {r}: logit {np.flatnonzero(np.isnan(x))[0]} "
                              "is NaN", r)
    if (x == -np.inf).all():
        raise sp.SamplerError(sp.EMPTY_SUPPORT, f"row {r}: empty support: every logit is -inf",
                              r)
    m = x.max()
    w = (x == m).astype(np.float64) if t == 0 or m == np.inf else np.exp((x - m) / t)
    return w / w.sum()


def sample(batch, seed, first_draw, draws_per_row):
    dists = [distribution(r, row) for r, row in enumerate(batch.rows)]  # all rows valid first
    out = np.empty((len(batch.rows), draws_per_row), np.int64)
    for r, (row, p) in enumerate(zip(batch.rows, dists)):
        # One 4-word Philox block per draw: block first_draw + j is draw j's, whatever came before.
        bits = np.random.Philox(key=[seed, row.row_id], counter=[first_draw, 0, 0, 0])
        words = bits.random_raw(4 * draws_per_row)[::4]
        u = ((words >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53
        out[r] = np.minimum(np.searchsorted(np.cumsum(p), u, side="right"),
                            np.flatnonzero(p > 0)[-1])
    return out


if __name__ == "__main__":
    sp.serve(sample, sp.Info(name="minimal_python", version="1",
                             capabilities=["f32", "temperature-0", "batch"]))

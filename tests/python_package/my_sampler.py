# my_sampler.py: a softmax sampler in numpy (f32 rows, any temperature including 0), certified
# from Python. Draw j of a row is keyed by (seed, row_id, first_draw + j) through numpy's Philox
# counter, so any range of draws can be asked for in any order (SPEC DRAW-1).
import numpy as np

import sampcert
from sampcert import protocol as sp


def my_sampler(batch, seed, first_draw, draws_per_row):
    out = np.empty((len(batch.rows), draws_per_row), np.int64)
    ps = []
    for r, row in enumerate(batch.rows):  # every row is checked before any is drawn
        t, x = row.temperature, row.logits.astype(np.float64)
        if not (t >= 0 and t != np.inf):  # NaN, negative or +inf
            raise sp.SamplerError(sp.INVALID_TEMPERATURE, f"row {r}: temperature {t}", r)
        if row.top_k < 0 or not 0 < row.top_p <= 1 or not 0 <= row.min_p < 1:
            code = (sp.INVALID_TOP_K if row.top_k < 0 else
                    sp.INVALID_TOP_P if not 0 < row.top_p <= 1 else sp.INVALID_MIN_P)
            raise sp.SamplerError(code, f"row {r}: invalid truncation parameter", r)
        if np.isnan(x).any():
            raise sp.SamplerError(sp.NAN_LOGIT, f"row {r}: a logit is NaN", r)
        if (x == -np.inf).all():
            raise sp.SamplerError(sp.EMPTY_SUPPORT, f"row {r}: every logit is -inf", r)
        m = x.max()
        w = (x == m).astype(np.float64) if t == 0 or m == np.inf else np.exp((x - m) / t)
        ps.append(w / w.sum())
    for r, (row, p) in enumerate(zip(batch.rows, ps)):
        bits = np.random.Philox(key=[seed, row.row_id], counter=[first_draw, 0, 0, 0])
        u = ((bits.random_raw(4 * draws_per_row)[::4] >> np.uint64(11)) + 0.5) / 2.0**53
        out[r] = np.minimum(np.searchsorted(np.cumsum(p), u, side="right"),
                            np.flatnonzero(p > 0)[-1])
    return out


my_sampler.info = sp.Info(name="my_sampler", capabilities=["f32", "temperature-0", "batch"])

if __name__ == "__main__":
    report = sampcert.certify(my_sampler, profile="quick")
    print(report.verdict)       # Conformant
    report.assert_conformant()  # otherwise: AssertionError naming each root cause

"""What a sampler project's pytest file looks like (run by `tests/python_package/run.py pytest`,
which expects test_correct_sampler to pass and test_top_p_drops_the_crossing_token to fail).

The correct sampler is adapters/python/examples/numpy_sampler.py (f32 / f16 / bf16, masks, top-k
/ top-p / min-p, temperature 0, probabilities, speculative-decoding verification). The planted bug is a classic top-p defect: the
token whose cumulative mass crosses p is cut instead of kept (the nucleus keeps only tokens
whose inclusive cumulative probability is <= p), so top-p rows lose their least probable kept
token.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "adapters", "python", "examples"))
import numpy_sampler as ns  # noqa: E402


class CorrectSampler:
    info = ns.INFO

    def sample(self, batch, seed, first_draw, draws_per_row, logprobs=None):
        return ns.sample(batch, seed, first_draw, draws_per_row, logprobs=logprobs)

    def probabilities(self, batch):
        return ns.probabilities(batch)

    def verify(self, chains, seed):
        return ns.verify(chains, seed)


def _top_p_without_crossing_token(distribution):
    def buggy(r, row):
        p = distribution(r, row)
        kept = np.flatnonzero(p > 0)
        if 0 < row.top_p < 1 and row.temperature > 0 and kept.size > 1:
            p = p.copy()
            p[kept[np.argmin(p[kept])]] = 0.0  # the token that crossed p
            p /= p.sum()
        return p
    return buggy


class TopPBugSampler:
    """numpy_sampler with the bug in its distribution, so its draws and its probabilities
    agree with each other (one defect, not two)."""
    info = ns.INFO

    def _with_bug(self, call, *args):
        correct = ns.distribution
        ns.distribution = _top_p_without_crossing_token(correct)
        try:
            return call(*args)
        finally:
            ns.distribution = correct

    def sample(self, batch, seed, first_draw, draws_per_row, logprobs=None):
        return self._with_bug(ns.sample, batch, seed, first_draw, draws_per_row, logprobs)

    def probabilities(self, batch):
        return self._with_bug(ns.probabilities, batch)

    def verify(self, chains, seed):
        return self._with_bug(ns.verify, chains, seed)


# dtypes: the f32 path only, as a project would for a quick check of one dtype in its own
# tests (a third of the time of all three). numpy_sampler's three dtypes are certified whole by
# ctest's conformance.exec_numpy_example.quick.
def test_correct_sampler(sampcert):
    report = sampcert.certify(CorrectSampler, dtypes=["f32"]).assert_conformant()
    assert report.conformant and not report.failures


def test_top_p_drops_the_crossing_token(sampcert):
    # Fails here, by design: assert_conformant raises with the root causes.
    report = sampcert.certify(TopPBugSampler, dtypes=["f32"]).assert_conformant()
    assert report.conformant

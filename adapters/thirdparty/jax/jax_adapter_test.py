"""Tests of the JAX protocol server and of the helper's arrays="jax", in-process (the ctests
conformance.thirdparty.jax*.quick certify the server through sampcert). Run with the
third-party venv's python (ctest python.thirdparty_jax_probes):

    /opt/sampcert-thirdparty/venv/bin/python -m unittest discover \
        -s adapters/thirdparty/jax -p '*_test.py'
"""

import os
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "python"))
import jax_sampler  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from sampcert import protocol as sp  # noqa: E402


def jax_batch(dtype, *rows):
    """A batch as the server gets it: decoded from bit patterns, then handed over as JAX arrays
    (the helper's arrays="jax")."""
    out = []
    for logits, kw in rows:
        x = np.asarray(logits, np.float32)
        bits = x.view(np.uint32) if dtype == "f32" else \
            (x.view(np.uint32) >> 16).astype(np.uint16) if dtype == "bf16" else \
            x.astype(np.float16).view(np.uint16)
        mask = kw.get("mask")
        out.append(sp.Row(sp.decode_logits(bits, dtype), bits,
                          None if mask is None else np.asarray(mask, bool),
                          float(np.float32(kw.get("t", 1.0))), kw.get("top_k", 0), 1.0, 0.0,
                          kw.get("row_id", 0)))
    return sp._jax_batch(sp.Batch(dtype, len(rows[0][0]), out))


class JaxArraysTest(unittest.TestCase):
    def test_rows_are_jax_arrays_in_float32_and_the_rows_own_dtype(self):
        for dtype, native in (("f32", jnp.float32), ("f16", jnp.float16),
                              ("bf16", jnp.bfloat16)):
            b = jax_batch(dtype, ([1.5, -2.0, float("inf")], {"mask": [1, 0, 1]}))
            row = b.rows[0]
            self.assertEqual(row.logits.dtype, jnp.float32)
            self.assertEqual(row.native.dtype, native)
            self.assertEqual(row.mask.dtype, jnp.bool_)
            np.testing.assert_array_equal(np.asarray(row.native.astype(jnp.float32)),
                                          [1.5, -2.0, np.inf])


class JaxSamplerTest(unittest.TestCase):
    def test_draws_are_random_access(self):
        s = jax_sampler.JaxSampler("f32")
        b = jax_batch("f32", ([0.0, 1.0, 2.0, 3.0], {"row_id": 5}))
        whole = s.sample(b, 7, 0, 300)[0]
        np.testing.assert_array_equal(s.sample(b, 7, 100, 50)[0], whole[100:150])
        self.assertFalse(np.array_equal(s.sample(b, 8, 0, 300)[0], whole))

    def test_top_k_maps_back_and_masked_tokens_are_never_drawn(self):
        s = jax_sampler.JaxSampler("f32")
        b = jax_batch("f32", ([3.0, 0.0, 2.9, 1.0, 2.8], {"top_k": 2}),
                      ([3.0, 0.0, 2.9, 1.0, 2.8], {"mask": [0, 1, 0, 1, 1]}))
        out = s.sample(b, 1, 0, 2000)
        self.assertEqual(set(out[0].tolist()), {0, 2})
        self.assertEqual(set(out[1].tolist()), {1, 3, 4})

    def test_draws_follow_the_softmax(self):
        s = jax_sampler.JaxSampler("f32")
        x = np.array([0.0, 1.0, 2.0, 3.0])
        n = 20000
        counts = np.bincount(s.sample(jax_batch("f32", (x, {"t": 2.0})), 3, 0, n)[0], minlength=4)
        p = np.exp(x / 2) / np.exp(x / 2).sum()
        z = (counts - n * p) / np.sqrt(n * p * (1 - p))
        self.assertLess(np.abs(z).max(), 5.0, (counts, n * p))

    def test_the_high_mode_variant_draws_categorical_with_mode_high(self):
        # Draw j is categorical(fold_in(stream key, j), x / T, mode="high"): the variant's own
        # name and cost, and its draws differ from the default mode's on the same keys.
        import jax
        info = jax_sampler.make_info("f32", "high")
        self.assertEqual(info.name, "jax_categorical_high")
        self.assertEqual(info.draw_cost_ns_per_token, jax_sampler.DRAW_COST_NS["high"])
        self.assertEqual(jax_sampler.make_info("f32").name, "jax_categorical")
        x = np.random.default_rng(1).normal(size=40).astype(np.float32)
        b = jax_batch("f32", (x, {"row_id": 9}))
        high = jax_sampler.JaxSampler("f32", "high").sample(b, 4, 0, 64)[0]
        key = jax_sampler.stream_key(4, 9)
        want = [int(jax.random.categorical(jax.random.fold_in(key, j), jnp.asarray(x),
                                           mode="high")) for j in range(64)]
        np.testing.assert_array_equal(high, want)
        low = jax_sampler.JaxSampler("f32").sample(b, 4, 0, 64)[0]
        self.assertFalse(np.array_equal(low, high))


if __name__ == "__main__":
    unittest.main()

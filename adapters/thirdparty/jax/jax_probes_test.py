"""Direct probes of JAX, outside sampcert: each mechanism that findings.json (and so the
expectations files and README) names for jax.random.categorical is pinned here by calling JAX
itself. Run with the third-party venv's python (ctest python.thirdparty_jax_probes):

    /opt/sampcert-thirdparty/venv/bin/python -m unittest discover \
        -s adapters/thirdparty/jax -p '*_test.py'
"""

import os
import unittest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

INF = float("inf")


def draws(logits, n=2000, dtype=jnp.float32, seed=0):
    x = jnp.asarray(logits, dtype=dtype)
    return np.asarray(jax.random.categorical(jax.random.key(seed), x, shape=(n,)))


class JaxProbes(unittest.TestCase):
    def test_pos_inf_logits_always_draw_the_lowest_index_one(self):
        # SPEC SEM-4: uniform over the +inf tokens. inf + noise is inf, and argmax returns the
        # first maximal index: token 1 every time, tokens 3 and 4 never.
        self.assertEqual(set(draws([1.0, INF, 3.0, INF, INF]).tolist()), {1})

    def test_an_empty_support_returns_token_0(self):
        # All -inf (every token masked): -inf + noise is -inf everywhere, argmax returns 0.
        self.assertEqual(set(draws([-INF] * 4).tolist()), {0})

    def test_a_nan_logit_is_drawn(self):
        # argmax treats NaN as the maximum: the NaN token is returned, no error.
        self.assertEqual(set(draws([0.0, float("nan"), 5.0]).tolist()), {1})

    def test_division_by_a_tiny_temperature_overflows_and_the_first_inf_wins(self):
        # x / T is computed before any maximum is subtracted: at T = 1e-45 both logits become
        # +inf and token 0 wins, though the exact limit (T -> 0) is token 1, the larger logit.
        x = jnp.asarray([0.5, 1.0], jnp.float32) / jnp.float32(1e-45)
        self.assertTrue(bool(jnp.isinf(x).all()))
        self.assertEqual(set(draws(x).tolist()), {0})

    def test_the_noise_is_drawn_in_the_logits_dtype(self):
        # jax.random.gumbel(key, shape, logits.dtype): -log(-log(u)) with u uniform in bfloat16
        # (8 significant bits) takes 128 values, all in [-4.5, 4.9], so a token 10 below the
        # maximum can never win, though its probability is e^-10 = 4.5e-5 (18 of 400000
        # draws expected). In float32 the same row draws it.
        noise = np.asarray(jax.random.gumbel(jax.random.key(0), (100_000,), jnp.bfloat16))
        self.assertLessEqual(len(np.unique(noise)), 128)
        self.assertLess(float(noise.astype(np.float32).max()) -
                        float(noise.astype(np.float32).min()), 10.0)
        n = 400_000
        self.assertEqual(int((draws([10.0, 0.0], n=n, dtype=jnp.bfloat16) == 1).sum()), 0)
        self.assertGreater(int((draws([10.0, 0.0], n=n, dtype=jnp.float32) == 1).sum()), 5)


if __name__ == "__main__":
    unittest.main()

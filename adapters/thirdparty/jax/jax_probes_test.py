"""Direct probes of JAX, outside sampcert: each mechanism that findings.json (and so the
expectations files and README) names for jax.random.categorical is pinned here by calling JAX
itself. Run with the third-party venv's python (ctest python.thirdparty_jax_probes):

    /opt/sampcert-thirdparty/venv/bin/python -m unittest discover \
        -s adapters/thirdparty/jax -p '*_test.py'
"""

import json
import os
import struct
import tempfile
import unittest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

# Beside this file: unittest discover -s puts its folder on the path.
import jax_row_probe  # noqa: E402

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

    def test_row_probe_names_each_mechanism_on_its_row_only(self):
        # jax_row_probe.py, the predicate of four findings (findings.json), on row files as
        # sampcert writes them: each field is 1 on the row that shows its mechanism and 0 on a
        # plain row (V = 3, T = 1).
        def bits(x):
            return struct.unpack("<I", struct.pack("<f", x))[0]

        rows = {"plain": ([0.0, 1.0, 2.0], 1.0, None),
                "neg_t": ([0.0, 1.0, 2.0], -0.5, None),
                "nan": ([0.0, float("nan"), 2.0], 1.0, None),
                "empty": ([0.0, 1.0, 2.0], 1.0, [0, 0, 0]),
                "pos_inf": ([1.0, INF, INF], 1.0, None),
                "tiny_t": ([0.5, 1.0, -1.0], 1e-45, None),
                # Two masked tokens at T < 0: -inf / T is +inf, but they are not allowed.
                "masked_neg_t": ([0.0, 1.0, 2.0], -1.0, [0, 0, 1])}
        seen = {}
        with tempfile.TemporaryDirectory() as d:
            for name, (x, t, mask) in rows.items():
                path = os.path.join(d, name + ".json")
                row = {"format": "sampcert-row/1", "dtype": "f32",
                       "logit_bits": [bits(v) for v in x], "temperature_bits": bits(t)}
                if mask is not None:
                    row["mask"] = mask
                with open(path, "w") as f:
                    json.dump(row, f)
                seen[name] = jax_row_probe.probe(path, "f32")
        fields = {"neg_t": "invalid_temperature_drawn", "nan": "nan_drawn",
                  "empty": "empty_support_token_0", "pos_inf": "pos_inf_lowest",
                  "tiny_t": "inf_quotients"}
        for name, field in fields.items():
            self.assertGreaterEqual(seen[name][field], 1, f"{field} on {name}: {seen[name]}")
            self.assertEqual(seen["plain"][field], 0, f"{field} on the plain row")
        # Each mechanism's field only: nan_drawn and pos_inf_lowest are 0 on the other rows
        # (tiny_t's two positive logits overflow to +inf and the first always wins: that row
        # is pos_inf_lowest's too, as tiny-temperature-overflow says).
        self.assertEqual(seen["tiny_t"]["pos_inf_lowest"], 1)
        for name in ("neg_t", "empty", "tiny_t", "masked_neg_t"):
            self.assertEqual(seen[name]["nan_drawn"], 0, f"nan_drawn on {name}")
            if name != "tiny_t":
                self.assertEqual(seen[name]["pos_inf_lowest"], 0, f"pos_inf_lowest on {name}")
        self.assertEqual(seen["masked_neg_t"]["inf_quotients"], 0)
        # x / 1e-45 overflows for each nonzero logit (XLA's CPU also flushes the subnormal T
        # to 0, which gives the same infinities).
        self.assertEqual(seen["tiny_t"]["inf_quotients"], 3)

    def test_row_probe_sees_temperature_rounding_flushing_and_the_noise_grid(self):
        # jax_row_probe.py's fields for bf16-temperature, subnormal-flush and
        # low-mode-noise-ceiling (findings.json), each 1 or more on its row and 0 on a plain
        # one: T = 1e-45 is 0 in bf16 (and nonzero in float32); a subnormal T flushed to 0
        # makes 0 / T NaN (and 2 / T inf); exp(-17) and exp(-25) are below 1e-7 of the maximum.
        def bits(x):
            return struct.unpack("<I", struct.pack("<f", x))[0]

        rows = {"plain": ([0.0, 1.0, 2.0], 1.0, "f32"),
                "plain_bf16": ([0.0, 1.0, 2.0], 1.0, "bf16"),
                "tiny_t_bf16": ([0.5, 1.0, -1.0], 1e-45, "bf16"),
                "tiny_t_f32": ([0.5, 1.0, -1.0], 1e-30, "f32"),
                "subnormal_t": ([0.0, 2.0], 1e-40, "f32"),
                "deep_tail": ([0.0, -17.0, -25.0], 1.0, "f32")}
        seen = {}
        with tempfile.TemporaryDirectory() as d:
            for name, (x, t, compute) in rows.items():
                path = os.path.join(d, name + ".json")
                with open(path, "w") as f:
                    json.dump({"format": "sampcert-row/1", "dtype": "f32",
                               "logit_bits": [bits(v) for v in x], "temperature_bits": bits(t)},
                              f)
                seen[name] = jax_row_probe.probe(path, compute)
        self.assertEqual(seen["tiny_t_bf16"]["temperature_rounded_away"], 1, seen)
        self.assertEqual(seen["tiny_t_f32"]["temperature_rounded_away"], 0, seen)
        self.assertEqual(seen["subnormal_t"]["flushed_nan"], 1, seen)
        self.assertEqual(seen["deep_tail"]["below_noise_grid"], 2, seen)
        for name in ("plain", "plain_bf16"):
            for field in ("temperature_rounded_away", "flushed_nan", "below_noise_grid"):
                self.assertEqual(seen[name][field], 0, f"{field} on {name}")

    def test_division_by_a_tiny_temperature_overflows_and_the_first_inf_wins(self):
        # x / T is computed before any maximum is subtracted: at T = 1e-45 both logits become
        # +inf and token 0 wins, though the exact limit (T -> 0) is token 1, the larger logit.
        x = jnp.asarray([0.5, 1.0], jnp.float32) / jnp.float32(1e-45)
        self.assertTrue(bool(jnp.isinf(x).all()))
        self.assertEqual(set(draws(x).tolist()), {0})

    def test_division_by_a_tiny_temperature_makes_a_masked_token_0_win(self):
        # The mask sets token 0 to -inf; at T = 1e-45 the allowed token's negative logit
        # overflows to -inf too, so every quotient is -inf and argmax returns the masked token 0.
        x = jnp.asarray([-INF, -1.7550577], jnp.float32) / jnp.float32(1e-45)
        self.assertTrue(bool(jnp.isneginf(x).all()))
        self.assertEqual(set(draws(x).tolist()), {0})

    def test_invalid_temperatures_return_tokens(self):
        # Nothing checks T: x / NaN is NaN everywhere and argmax returns index 0; T < 0 inverts
        # the distribution; T = inf makes every quotient 0 (uniform).
        x = jnp.asarray([0.0, 5.0, -3.0], jnp.float32)
        self.assertEqual(set(draws(x / jnp.float32("nan")).tolist()), {0})
        self.assertGreater(int((draws(x / -1.0) == 2).sum()), 1800)
        self.assertEqual(set(draws(x / jnp.float32("inf")).tolist()), {0, 1, 2})

    def test_noise_added_to_large_quotients_is_rounded_to_their_spacing(self):
        # categorical adds the Gumbel noise to x / T as given, without subtracting the maximum:
        # where the quotients are large (2^22 = 4194304 at T = 2^-20 for logits near 4), float32's
        # spacing is 0.5, so logit + noise is rounded to a multiple of 0.5 and equal sums go to
        # the lower index. [2^22, 2^22 + 0.5] should draw token 1 with probability 0.622; it
        # draws it 0.571 of the time, while [0, 0.5] (the same distribution) draws it 0.622.
        n = 40_000
        big = draws([4194304.0, 4194304.5], n=n)
        small = draws([0.0, 0.5], n=n)
        p1 = 1 / (1 + np.exp(-0.5))
        sd = np.sqrt(p1 * (1 - p1) / n)
        self.assertLess(float((big == 1).mean()), p1 - 10 * sd)
        self.assertLess(abs(float((small == 1).mean()) - p1), 5 * sd)

    def test_ties_over_the_smallest_normal_temperature_draw_the_lowest_index(self):
        # 1.5 / 2^-126 = 1.28e38, where float32's spacing is about 1e31: the Gumbel noise is
        # absorbed, every tied token has the same sum and argmax returns the first one.
        x = jnp.asarray([1.5] * 4, jnp.float32) / jnp.float32(1.1754944e-38)
        self.assertEqual(set(draws(x, n=4000).tolist()), {0})

    def test_subnormals_are_flushed_so_x_over_t_is_nan(self):
        # XLA on the CPU flushes subnormal operands to zero: 3e-45 / 4e-45 is 0 / 0 = NaN (the
        # exact quotient is 0.75), and argmax returns index 0 for a row of NaNs: tied tokens
        # are not drawn uniformly.
        x = jax.jit(lambda a, t: a / t)(jnp.asarray([3e-45, 3e-45], jnp.float32),
                                        jnp.float32(4e-45))
        self.assertTrue(bool(jnp.isnan(x).all()))
        self.assertEqual(set(draws(x).tolist()), {0})

    def test_bf16_rounds_the_temperature_itself(self):
        # x / T keeps the logits' dtype (T is a weakly typed scalar): in bf16, T = 1e-45 rounds
        # to 0 and T = 3.4028235e38 to inf, so x / T is +-inf, 0/0 or -inf/inf = NaN, and
        # argmax returns a must-drop or masked token.
        x = jnp.asarray([0.8125, 2.484375], jnp.bfloat16)
        self.assertTrue(bool(jnp.isinf(x / 1e-45).all()))
        self.assertEqual(set(draws(x / 1e-45, dtype=jnp.bfloat16).tolist()), {0})
        masked = jnp.asarray([-jnp.inf, -2112.0], jnp.bfloat16) / 3.4028235e38
        self.assertTrue(bool(jnp.isnan(masked[0])))
        self.assertEqual(set(draws(masked, dtype=jnp.bfloat16).tolist()), {0})

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

    def test_low_mode_float32_noise_never_exceeds_the_largest_23_bit_uniform(self):
        # JAX's default mode ("low") draws each Gumbel value as -log(-log(u)), u one float32
        # uniform on a grid of 2^-23 in [tiny, 1): no value exceeds -log(-log(1 - 2^-23)) =
        # 15.94 or falls below -log(-log(tiny)) = -4.47, so a token more than 20.41 below the
        # maximum can never be drawn and one more than about 15.9 below it (p below about
        # 1e-7) is drawn too rarely: computed over the 2^23 noise values, a token at 8e-8 of
        # the maximum is drawn at 0.43 of its rate and one at 1e-8 at 1e-4 of it
        # (deep_tail_V180001's bands). mode="high" combines two uniforms: its noise passes the
        # bound (18.29 in these 2^24 values, where low's largest is the bound itself).
        key = jax.random.key(0)
        bound = np.float32(-np.log(-np.log(np.float32(1 - 2.0**-23))))
        low = np.asarray(jax.random.gumbel(key, (1 << 24,), jnp.float32))
        high = np.asarray(jax.random.gumbel(key, (1 << 24,), jnp.float32, mode="high"))
        self.assertEqual(float(low.max()), float(bound))
        self.assertGreaterEqual(float(low.min()), -4.47)
        self.assertGreater(float(high.max()), 18.0)
        # categorical is argmax(logits + that noise), in either mode: the same key gives the
        # same token.
        x = jnp.asarray(np.random.default_rng(0).normal(size=64).astype(np.float32))
        for mode in ("low", "high"):
            for k in jax.random.split(jax.random.key(3), 20):
                want = int(jnp.argmax(x + jax.random.gumbel(k, x.shape, jnp.float32, mode=mode)))
                self.assertEqual(int(jax.random.categorical(k, x, mode=mode)), want)
        self.assertEqual(int(jax.random.categorical(jax.random.key(5), x)),
                         int(jax.random.categorical(jax.random.key(5), x, mode="low")))


if __name__ == "__main__":
    unittest.main()

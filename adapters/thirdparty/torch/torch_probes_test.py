"""Direct probes of PyTorch, outside sampcert: each mechanism that findings.json (and so the
expectations files and README) names for torch.softmax + torch.multinomial is pinned here by
calling torch itself on the smallest input that shows it. Run with the third-party venv's
python (ctest python.thirdparty_adapters):

    /opt/sampcert-thirdparty/venv/bin/python -m unittest discover \
        -s adapters/thirdparty/torch -p '*_test.py'
"""

import json
import os
import struct
import tempfile
import unittest

import torch

import torch_row_probe  # beside this file: unittest discover -s puts its folder on the path

# multinomial(p, n, replacement=True) says "invalid multinomial distribution (encountering
# probability entry < 0)"; multinomial(p, 1) says "probability tensor contains either inf, nan or
# element < 0".
MULTINOMIAL_ERROR = "invalid multinomial distribution|probability tensor contains either"


def sample(probs, n=8, seed=1):
    g = torch.Generator()
    g.manual_seed(seed)
    return torch.multinomial(probs, n, replacement=True, generator=g)


class TorchProbes(unittest.TestCase):
    def test_pos_inf_logit_makes_softmax_nan_and_multinomial_raise(self):
        # SPEC SEM-4: uniform over the +inf tokens. softmax subtracts the maximum (inf): inf -
        # inf is NaN, and multinomial refuses the NaN row.
        p = torch.softmax(torch.tensor([1.0, float("inf"), 3.0, float("inf"), float("inf")]), 0)
        self.assertTrue(torch.isnan(p).all())
        with self.assertRaisesRegex(RuntimeError, MULTINOMIAL_ERROR):
            sample(p)

    def test_division_by_tiny_temperature_overflows_before_the_maximum_is_subtracted(self):
        # x / T is computed first: at T = 1e-45 every quotient of [0.2, 0.2] is inf, the row is
        # NaN after softmax (inf - inf), although the exact distribution is uniform.
        x = torch.tensor([0.20182738, 0.20182738, 0.1])
        p = torch.softmax(x / 1e-45, 0)
        self.assertTrue(torch.isnan(p).all())
        with self.assertRaisesRegex(RuntimeError, MULTINOMIAL_ERROR):
            sample(p)

    def test_fp16_logits_divided_by_a_small_temperature_overflow(self):
        # The classic half-precision failure: 30000 / 0.1 = 3e5 > 65504, the largest float16.
        x = torch.tensor([30000.0, -5.0, 20.0, 100.0], dtype=torch.float16)
        z = x / 0.1
        self.assertEqual(z[0].item(), float("inf"))
        with self.assertRaisesRegex(RuntimeError, MULTINOMIAL_ERROR):
            sample(torch.softmax(z, 0))
        # In float32 the same row is fine: token 0 has all the mass.
        self.assertTrue((sample(torch.softmax(x.float() / 0.1, 0)) == 0).all())

    def test_one_error_for_empty_support_nan_and_overflow(self):
        # An empty support (all -inf: softmax is 0/0) and a NaN logit give the same
        # RuntimeError as an overflow: the caller cannot tell them apart.
        # So does multinomial(p, 1), generate's call, with its own message.
        for draw in (sample, lambda p: torch.multinomial(p.reshape(1, -1), 1)):
            messages = set()
            for x in ([float("-inf")] * 3, [0.0, float("nan"), 1.0]):
                with self.assertRaises(RuntimeError) as e:
                    draw(torch.softmax(torch.tensor(x), 0))
                messages.add(str(e.exception))
            self.assertEqual(len(messages), 1)
            self.assertRegex(messages.pop(), MULTINOMIAL_ERROR)

    def test_invalid_temperatures_are_not_refused(self):
        # Nothing checks T: T < 0 inverts the distribution, T = inf makes every quotient 0
        # (uniform), and both return tokens.
        d = sample(torch.softmax(torch.tensor([0.0, 5.0]) / -1.0, 0), n=100)
        self.assertGreater(int((d == 0).sum()), 90)
        p = torch.softmax(torch.tensor([0.0, 5.0, -3.0]) / float("inf"), 0)
        self.assertTrue(torch.equal(p, torch.full((3,), 1 / 3)))

    def test_row_probe_sees_a_token_drawn_at_an_invalid_temperature(self):
        # torch_row_probe.py, the predicate of temperature-unchecked and one-error
        # (findings.json), on row files as sampcert writes them: a token at T = -0.5 and at
        # T = inf, none at T = 1 (a valid temperature), NaN probabilities at T = NaN.
        def bits(x):
            return struct.unpack("<I", struct.pack("<f", x))[0]

        seen = {}
        with tempfile.TemporaryDirectory() as d:
            for name, t in (("neg", -0.5), ("inf", float("inf")), ("one", 1.0),
                            ("nan", float("nan"))):
                path = os.path.join(d, name + ".json")
                with open(path, "w") as f:
                    json.dump({"format": "sampcert-row/1", "dtype": "f32",
                               "logit_bits": [bits(v) for v in (0.0, 5.0, -3.0)],
                               "temperature_bits": bits(t)}, f)
                seen[name] = torch_row_probe.probe(path, "f32")
        self.assertEqual([seen[n]["drawn_at_invalid_temperature"] for n in ("neg", "inf", "one")],
                         [1, 1, 0])
        self.assertEqual(seen["nan"]["drawn_at_invalid_temperature"], 0)
        self.assertEqual(seen["nan"]["nan"], 3)
        self.assertEqual(seen["one"]["nan"], 0)

    def test_row_probe_measures_quotient_rounding_against_the_tolerance(self):
        # torch_row_probe.py's quotient_rounding, the predicate of quotient-rounding (torch's
        # and transformers' findings.json): three adjacent float32 logits at T = 2.7e-7 (their
        # quotients about 1e7, float32's spacing 1) move by percents, far past TOL-3's bound of
        # about 1e-6 for the fp32 class at V = 3; at T = 1 float32's own rounding of the
        # quotients stays inside it, and a masked or infinite logit is not counted.
        def bits(x):
            return struct.unpack("<I", struct.pack("<f", x))[0]

        near = [2.7078185, 2.7078187, 2.707819]
        rows = {"small_t": (near, 2.7078187e-07, None), "one": (near, 1.0, None),
                "wide": ([0.1, -7.3, 3.3], 0.7, None),
                "masked": ([near[0], float("inf"), near[2]], 1.0, [1, 0, 1]),
                "greedy": (near, 0.0, None)}
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
                seen[name] = torch_row_probe.probe(path, "f32")["quotient_rounding"]
        self.assertGreaterEqual(seen["small_t"], 2, seen)
        self.assertEqual([seen[n] for n in ("one", "wide", "masked", "greedy")], [0, 0, 0, 0])

    def test_small_temperature_rounds_the_quotients_before_the_softmax(self):
        # x / T is rounded to float32 before the maximum is subtracted: at T = 2.7078187e-07
        # the quotients are about 1e7, where float32's spacing is 1, so two logits one float32
        # step apart (their exact quotients 0.88 apart) come out 0 or 1 apart, and softmax
        # gives the smaller a probability off by several percent.
        x = torch.tensor([2.7078185, 2.7078187], dtype=torch.float32)
        t = 2.7078187e-07
        p = torch.softmax(x / t, 0).double()
        xd = x.double() / torch.tensor(t, dtype=torch.float32).double()
        exact = torch.softmax(xd, 0)
        self.assertGreater(float(abs(p[0] - exact[0]) / exact[0]), 0.01)

    def test_small_temperature_moves_near_tie_probabilities_by_up_to_96_percent(self):
        # The magnitude findings.json states: three adjacent float32 logits at the same T. Their
        # quotients (about 1e7, exact values 0.88 apart) round to 0, 0 and 1 apart, so torch
        # gives the first two 0.212 each where the exact softmax gives 0.108 and 0.261: the
        # first is off by 96% of its value (a scan of the 16 triples starting within 8 float32
        # steps of 2.7078185: 17% on most, 62% and 96% on two).
        x = torch.tensor([2.707818031311035, 2.7078182697296143, 2.7078185081481934],
                         dtype=torch.float32)
        for a, b in zip(x[:-1], x[1:]):  # adjacent floats: no float32 lies between
            self.assertEqual(float(torch.nextafter(a, torch.tensor(3.0))), float(b))
        t = torch.tensor(2.7078187e-07, dtype=torch.float32)
        p = torch.softmax(x / t, 0).double()
        exact = torch.softmax(x.double() / t.double(), 0)
        self.assertEqual(float(p[0]), float(p[1]))  # the first two quotients merged
        self.assertAlmostEqual(float(p[0]), 0.2119, places=3)
        self.assertAlmostEqual(float(exact[0]), 0.1083, places=3)
        self.assertGreater(float(abs(p[0] - exact[0]) / exact[0]), 0.95)

    def test_float16_multinomial_one_draws_zero_probability_tokens(self):
        # multinomial(p, 1) is argmax(p / q), q ~ Exp(1) drawn in p's dtype. In float16 every
        # exponential below 2^-25 rounds to 0 (about 3e-8 of them): a zero-probability token's
        # 0 / 0 is then NaN, and argmax takes NaN as the maximum.
        p = torch.tensor([0.0, 1.0], dtype=torch.float16)
        q = torch.tensor([0.0, 0.5], dtype=torch.float16)
        self.assertEqual(int(torch.argmax(p / q)), 0)
        # With torch's own exponentials: a 4096-token row with one allowed token, 32,768 draws
        # (generator seed 0; expected about 4095 x 32,768 x 2^-25 = 4): three draws are
        # zero-probability tokens in float16, none in float32.
        def zero_probability_draws(dtype):
            row = torch.zeros(4096, dtype=dtype)
            row[4095] = 1.0
            g = torch.Generator()
            g.manual_seed(0)
            rows = row.reshape(1, -1).expand(4096, 4096).contiguous()
            return sum(int((torch.multinomial(rows, 1, generator=g) != 4095).sum())
                       for _ in range(8))
        self.assertEqual(zero_probability_draws(torch.float16), 3)
        self.assertEqual(zero_probability_draws(torch.float32), 0)

    def test_cumulative_sum_rounds_each_token_to_the_running_sums_ulp(self):
        # CPU multinomial(replacement=True) inverts a cumulative sum kept in float32: a token
        # placed after a dominant one adds its mass to a running sum near 1, whose half ulp is
        # 2^-25, so a probability below that adds nothing and the token is never drawn. The
        # same row with the dominant token last is drawn as it should be.
        n_tail, p_tail = 100_000, 2.5e-8  # half ulp of 0.9975 is 2^-25 = 2.98e-8
        p = torch.full((n_tail + 1,), p_tail, dtype=torch.float32)
        p[0] = 1 - n_tail * p_tail
        draws = 400_000  # tail mass 0.0025: about 1000 expected tail draws
        first = sample(p, draws)
        self.assertEqual(int((first > 0).sum()), 0)
        last = sample(torch.flip(p, [0]), draws)
        self.assertGreater(int((last < n_tail).sum()), 800)

    def test_half_softmax_rounds_quotients_and_probabilities(self):
        # In float16, x / T is rounded to 11 significant bits before the maximum is subtracted,
        # and every probability to float16: one below 2^-24 (its smallest subnormal, 6e-8) comes
        # out 0 or 2^-24, and a mid-size one is off by ~0.1% where float32 is off by ~1e-7.
        p = torch.softmax(torch.tensor([0.0, -17.1], dtype=torch.float16), 0)
        self.assertIn(p[1].item(), (0.0, 2 ** -24))
        x = torch.tensor([1.9667969, 4.1679688, 7.65625], dtype=torch.float16)
        t = 0.17782794
        half = torch.softmax(x / t, 0).double()
        exact = torch.softmax(x.double() / t, 0)
        self.assertGreater(float((abs(half - exact) / exact).max()), 1e-3)

    def test_half_softmax_of_a_wide_flat_row_does_not_sum_to_one(self):
        # 229,376 equal logits (a 262,144-token row with its last 8th masked): each probability,
        # 1 / 229376 = 4.36e-6, is a float16 subnormal (below 2^-14) and rounds to 73 * 2^-24,
        # so the row sums to 0.998046875, off by 2e-3 where half precision promises ~1e-3.
        p = torch.softmax(torch.zeros(229376, dtype=torch.float16), 0)
        self.assertEqual(p[0].item(), 73 * 2 ** -24)
        self.assertEqual(p.double().sum().item(), 0.998046875)

    def test_bf16_division_merges_distinct_logits(self):
        # bf16 keeps 8 significant bits: 29824 / 0.0257 and 29696 / 0.0257 round to the same
        # bf16 value, so two tokens the reference separates by e^-4980 get equal probability.
        t = torch.tensor(0.025703957, dtype=torch.bfloat16)
        a = torch.tensor(29824.0, dtype=torch.bfloat16) / t
        b = torch.tensor(29696.0, dtype=torch.bfloat16) / t
        self.assertEqual(a.item(), b.item())


if __name__ == "__main__":
    unittest.main()

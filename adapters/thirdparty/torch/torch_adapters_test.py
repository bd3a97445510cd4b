"""Tests of the PyTorch and transformers protocol servers, in-process (the ctests
thirdparty.* certify them through sampcert). They need torch (and transformers for the HF
part); run with the third-party virtual environment's python:

    /opt/sampcert-thirdparty/venv/bin/python -m unittest discover \
        -s adapters/thirdparty/torch -p '*_test.py'
"""

import os
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "transformers"))
import sampcert_protocol as sp  # noqa: E402
import torch  # noqa: E402
import torch_sampler  # noqa: E402
import torch_streams  # noqa: E402

try:
    import hf_sampler  # noqa: E402
except ImportError as e:  # transformers missing: its tests are skipped, torch's still run
    hf_sampler = None
    HF_MISSING = str(e)


def row(logits, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, mask=None, row_id=0,
        dtype="f32"):
    x = np.asarray(logits, np.float32)
    if dtype == "f32":
        bits = x.view(np.uint32)
    else:  # bf16: the upper half of the (exactly representable) binary32
        bits = (x.view(np.uint32) >> 16).astype(np.uint16)
    m = None if mask is None else np.asarray(mask, bool)
    return sp.Row(sp.decode_logits(bits, dtype), bits, m, float(np.float32(temperature)),
                  int(top_k), float(np.float32(top_p)), float(np.float32(min_p)), row_id)


def batch(*rows, dtype="f32"):
    return sp.Batch(dtype, len(rows[0].logits), list(rows))


class StreamTest(unittest.TestCase):
    def test_draws_do_not_depend_on_how_they_are_split(self):
        p = torch.softmax(torch.linspace(0, 3, 1000), 0)
        whole = torch_streams.Streams().draw(p, 7, 3, 0, 4000)
        s = torch_streams.Streams()
        parts, first = [], 0
        for n in (1, 1, 2, 1, 500, 1, 3494):
            parts.append(s.draw(p, 7, 3, first, n))
            first += n
        np.testing.assert_array_equal(whole, np.concatenate(parts))
        self.assertEqual(s.repositioned, 0)

    def test_random_access_by_reseeding_and_skipping(self):
        p = torch.softmax(torch.linspace(0, 3, 50001), 0)
        whole = torch_streams.Streams().draw(p, 1, 2, 0, 3000)
        s = torch_streams.Streams()
        np.testing.assert_array_equal(s.draw(p, 1, 2, 2500, 500), whole[2500:])
        np.testing.assert_array_equal(s.draw(p, 1, 2, 10, 1), whole[10:11])  # backwards
        np.testing.assert_array_equal(s.draw(p, 1, 2, 11, 2), whole[11:13])  # continues
        self.assertEqual(s.repositioned, 2)

    def test_per_step_draws_are_generates_call_and_replay(self):
        p = torch.softmax(torch.linspace(0, 3, 100), 0)
        g = torch.Generator()
        g.manual_seed(torch_streams.stream_seed(4, 5))
        want = [int(torch.multinomial(p.reshape(1, -1), 1, generator=g)) for _ in range(30)]
        s = torch_streams.Streams()
        got = np.concatenate([s.draw_per_step(p, 4, 5, 0, 10), s.draw_per_step(p, 4, 5, 10, 20)])
        self.assertEqual(got.tolist(), want)
        np.testing.assert_array_equal(s.draw_per_step(p, 4, 5, 5, 3), want[5:8])  # replayed

    def test_per_step_draws_in_bulk_are_the_calls_one_at_a_time(self):
        # multinomial(P, 1) on B copies of a row fills P's exponentials row after row from the
        # generator: the same draws as B calls one at a time, whatever the dtype, the
        # vocabulary and the chunk size.
        for v, dtype in ((3, torch.float32), (1000, torch.float16), (50001, torch.bfloat16)):
            p = torch.softmax(torch.linspace(0, 3, v), 0).to(dtype)
            g = torch.Generator()
            g.manual_seed(torch_streams.stream_seed(2, 9))
            want = [int(torch.multinomial(p.reshape(1, -1), 1, generator=g)) for _ in range(70)]
            s = torch_streams.Streams()
            s.STEP_CHUNK_ELEMENTS = 16 * v  # chunks of 16 draws
            got = np.concatenate([s.draw_per_step(p, 2, 9, 0, 1), s.draw_per_step(p, 2, 9, 1, 40),
                                  s.draw_per_step(p, 2, 9, 41, 29)])
            self.assertEqual(got.tolist(), want, (v, dtype))
            skipped = torch_streams.Streams().draw_per_step(p, 2, 9, 33, 37)
            self.assertEqual(skipped.tolist(), want[33:], (v, dtype))

    def test_seed_and_row_id_both_key_the_stream(self):
        p = torch.full((64,), 1 / 64)
        a = torch_streams.Streams().draw(p, 1, 2, 0, 64)
        self.assertFalse((a == torch_streams.Streams().draw(p, 2, 2, 0, 64)).all())
        self.assertFalse((a == torch_streams.Streams().draw(p, 1, 3, 0, 64)).all())
        self.assertNotEqual(torch_streams.stream_seed(1, 2), torch_streams.stream_seed(2, 1))


class TorchSamplerTest(unittest.TestCase):
    def test_masked_and_minus_inf_tokens_are_never_drawn(self):
        s = torch_sampler.TorchSampler("f32")
        out = s.sample(batch(row([0, 5, 1, float("-inf")], mask=[1, 0, 1, 1])), 1, 0, 2000)
        self.assertEqual(set(out[0].tolist()), {0, 2})

    def test_probabilities_are_the_softmax(self):
        s = torch_sampler.TorchSampler("f32")
        p = s.probabilities(batch(row([0, 1, 2], temperature=2)))[0]
        want = np.exp(np.array([0, 0.5, 1])) / np.exp(np.array([0, 0.5, 1])).sum()
        np.testing.assert_allclose(p, want, rtol=1e-6)

    def test_bf16_variant_computes_in_bf16(self):
        s = torch_sampler.TorchSampler("bf16")
        p = s.probabilities(batch(row([0, 1, 2], dtype="bf16"), dtype="bf16"))[0]
        # Every probability is a bf16 value: 8 significant bits.
        bits = torch.from_numpy(p).float().view(torch.int32).numpy()
        self.assertTrue(((bits & 0xFFFF) == 0).all(), p)

    def test_nan_is_torchs_generic_error(self):
        s = torch_sampler.TorchSampler("f32")
        with self.assertRaises(sp.SamplerError) as e:
            s.sample(batch(row([0, float("nan")])), 1, 0, 3)
        self.assertEqual(e.exception.code, sp.NUMERICAL_FAILURE)
        self.assertIn("row 0: torch.multinomial", e.exception.message)

    def test_declarations(self):
        info = torch_sampler.make_info("bf16")
        self.assertEqual(info.accuracy, "bf16")
        self.assertEqual(info.draws, "sequential")
        self.assertNotIn("f16", info.capabilities)


@unittest.skipIf(hf_sampler is None, "transformers not importable")
class HfSamplerTest(unittest.TestCase):
    def test_the_chain_is_transformers_own_in_generate_order(self):
        from transformers import (MinPLogitsWarper, TemperatureLogitsWarper, TopKLogitsWarper,
                                  TopPLogitsWarper)
        greedy, procs = hf_sampler.logits_processors(
            row([0, 1, 2], temperature=0.5, top_k=2, top_p=0.9, min_p=0.1), 3)
        self.assertFalse(greedy)
        self.assertEqual([type(p) for p in procs], [TemperatureLogitsWarper, TopKLogitsWarper,
                                                    TopPLogitsWarper, MinPLogitsWarper])

    def test_top_k_keeps_ties_top_p_cuts_them(self):
        s = hf_sampler.HfSampler("f32")
        p = s.probabilities(batch(row([3, 3, 3, 0], top_k=1)))[0]
        np.testing.assert_allclose(p, [1 / 3, 1 / 3, 1 / 3, 0], rtol=1e-6)
        p = s.probabilities(batch(row([3, 3, 3, 0], top_p=0.3)))[0]
        self.assertEqual(int((p > 0).sum()), 1, p)  # exactly one of the tied three

    def test_mask_is_prefix_allowed_tokens(self):
        s = hf_sampler.HfSampler("f32")
        out = s.sample(batch(row([0, 9, 1, 2], mask=[1, 0, 1, 1], top_k=2)), 3, 0, 1000)
        self.assertEqual(set(out[0].tolist()), {2, 3})

    def test_per_step_config_and_unknown_config(self):
        s = hf_sampler.HfSampler("f32")
        s.create("draws=per-step")
        self.assertEqual(s.draw, s.streams.draw_per_step)
        with self.assertRaises(sp.SamplerError) as e:
            hf_sampler.HfSampler("f32").create("dtype=bf16")
        self.assertIn("unknown config 'dtype=bf16'", e.exception.message)

    def test_greedy_is_argmax_lowest_index(self):
        s = hf_sampler.HfSampler("f32")
        out = s.sample(batch(row([1, 4, 4, 0], temperature=0)), 3, 0, 5)
        self.assertEqual(out[0].tolist(), [1] * 5)

    def test_declarations(self):
        info = hf_sampler.make_info("f32")
        self.assertEqual((info.top_k_tie_rule, info.top_p_tie_rule, info.draws),
                         ("keep-all", "exact-any", "sequential"))
        self.assertEqual(info.greedy_tie_break, "lowest-index")
        self.assertEqual(list(info.truncation_order), ["top-k", "top-p", "min-p"])
        self.assertGreater(len(info.encode()), 0)

    def test_transformers_value_errors_get_the_parameters_code(self):
        s = hf_sampler.HfSampler("f32")
        for r, code in [(row([0, 1], temperature=-1), sp.INVALID_TEMPERATURE),
                        (row([0, 1], top_k=-1), sp.INVALID_TOP_K),
                        (row([0, 1], top_p=-0.5), sp.INVALID_TOP_P),
                        (row([0, 1], min_p=1.5), sp.INVALID_MIN_P),
                        (row([0, 1], mask=[0, 0]), sp.EMPTY_SUPPORT)]:
            with self.assertRaises(sp.SamplerError) as e:
                s.sample(batch(r), 1, 0, 1)
            self.assertEqual(e.exception.code, code, e.exception.message)
            self.assertIn("row 0: transformers: ", e.exception.message)

    def test_what_transformers_ignores_is_ignored(self):
        # generate adds no TopPLogitsWarper unless top_p < 1: top_p = 1.5 draws silently.
        s = hf_sampler.HfSampler("f32")
        out = s.sample(batch(row([0, 1], top_p=1.5)), 1, 0, 3)
        self.assertEqual(out.shape, (1, 3))


if __name__ == "__main__":
    unittest.main()

"""Direct probes of Hugging Face transformers' sampling path, outside sampcert: each mechanism
that findings.json (and so the expectations files and docs/thirdparty.md) names for transformers is pinned
here by calling transformers itself (its warpers, its processors, generate on a model whose
logits are fixed). Run with the third-party venv's python (ctest
python.thirdparty_verifier_probes):

    /opt/sampcert-thirdparty/venv/bin/python -m unittest discover \
        -s adapters/thirdparty/transformers -p '*_test.py'
"""

import json
import math
import os
import struct
import tempfile
import unittest

os.environ["HF_HUB_OFFLINE"] = "1"

import torch  # noqa: E402
from transformers import (GenerationMixin, MinPLogitsWarper, PretrainedConfig,  # noqa: E402
                          PreTrainedModel, TemperatureLogitsWarper, TopKLogitsWarper,
                          TopPLogitsWarper)
from transformers.generation.logits_process import PrefixConstrainedLogitsProcessor  # noqa
from transformers.generation.logits_process import (  # noqa: E402
    MinNewTokensLengthLogitsProcessor, NoBadWordsLogitsProcessor, RepetitionPenaltyLogitsProcessor,
    SequenceBiasLogitsProcessor)
from transformers.modeling_outputs import CausalLMOutputWithPast  # noqa: E402

# Beside this file: unittest discover -s puts its folder on the path.
import hf_row_probe  # noqa: E402

MULTINOMIAL_ERROR = "probability tensor contains either"
IDS = torch.zeros((1, 1), dtype=torch.long)


class FixedLogits(PreTrainedModel, GenerationMixin):
    """A causal LM whose next-token logits are always `row` (a parameter, so .half() casts it):
    generate() runs its real sampling loop on exactly these logits."""
    config_class = PretrainedConfig

    def __init__(self, row):
        super().__init__(PretrainedConfig(vocab_size=len(row), is_decoder=True))
        self.row = torch.nn.Parameter(torch.tensor(row))

    def forward(self, input_ids=None, **kwargs):
        b, n = input_ids.shape
        return CausalLMOutputWithPast(logits=self.row.expand(b, n, -1))


class TransformersProbes(unittest.TestCase):
    def test_generate_upcasts_half_logits_so_a_small_temperature_does_not_overflow(self):
        # The classic failure (a .half() model, do_sample=True, temperature=0.1: "probability
        # tensor contains either inf, nan or element < 0") is gone from generate: _sample
        # copies the logits to float32 before the processors. The warpers alone on the same
        # float16 scores still overflow: 30000 / 0.1 > 65504.
        model = FixedLogits([30000.0, -5.0, 20.0, 100.0]).half()
        self.assertEqual(model.row.dtype, torch.float16)
        torch.manual_seed(0)
        out = model.generate(IDS, do_sample=True, temperature=0.1, top_k=0, max_new_tokens=4,
                             pad_token_id=0, use_cache=False)
        self.assertEqual(out[0, 1:].tolist(), [0, 0, 0, 0])
        scores = TemperatureLogitsWarper(0.1)(IDS, model.row.detach().reshape(1, -1))
        self.assertEqual(scores.dtype, torch.float16)
        self.assertEqual(scores[0, 0].item(), float("inf"))
        with self.assertRaisesRegex(RuntimeError, MULTINOMIAL_ERROR):
            torch.multinomial(torch.softmax(scores, -1), 1)

    def test_mask_added_as_minus_inf_makes_a_masked_pos_inf_logit_nan_and_argmax_picks_it(self):
        # PrefixConstrainedLogitsProcessor adds a -inf mask (scores + mask): a masked +inf
        # logit becomes inf + -inf = NaN, and torch.argmax (greedy, T = 0) returns the NaN.
        proc = PrefixConstrainedLogitsProcessor(lambda b, ids: [0, 2], 1)
        scores = proc(IDS, torch.tensor([[0.0, float("inf"), 1.0]]))
        self.assertTrue(torch.isnan(scores[0, 1]))
        self.assertEqual(int(torch.argmax(scores, -1)), 1)

    def test_a_masked_nan_logit_stays_nan_and_multinomial_raises(self):
        # T > 0: the -inf mask leaves a masked NaN logit NaN (NaN + -inf), so softmax of a row
        # whose support [0, 2] holds no NaN is NaN everywhere, and multinomial refuses it.
        proc = PrefixConstrainedLogitsProcessor(lambda b, ids: [0, 2], 1)
        scores = proc(IDS, torch.tensor([[0.0, float("nan"), 1.0]]))
        self.assertTrue(torch.isnan(scores[0, 1]))
        probs = torch.softmax(TemperatureLogitsWarper(0.7)(IDS, scores), dim=-1)
        self.assertTrue(torch.isnan(probs).all())
        # The message depends on the call: num_samples=1 checks for inf / nan first; the
        # adapter's draws (replacement=True, many) say "invalid multinomial distribution".
        with self.assertRaisesRegex(RuntimeError, "nan"):
            torch.multinomial(probs, 1)
        with self.assertRaisesRegex(RuntimeError, "invalid multinomial distribution"):
            torch.multinomial(probs, 8, replacement=True)

    def test_argmax_returns_a_nan_logits_index(self):
        # Greedy (T = 0) is torch.argmax of the scores, which treats NaN as the maximum: a NaN
        # logit in the support returns a token instead of an error; a masked NaN (NaN + -inf)
        # is drawn outside the support.
        self.assertEqual(int(torch.argmax(torch.tensor([[0.0, 5.0, float("nan")]]), -1)), 2)
        proc = PrefixConstrainedLogitsProcessor(lambda b, ids: [0, 1], 1)
        scores = proc(IDS, torch.tensor([[0.0, 5.0, float("nan")]]))
        self.assertEqual(int(torch.argmax(scores, -1)), 2)

    def test_an_empty_support_is_made_uniform_over_the_allowed_tokens(self):
        # When every allowed token's score is already -inf (an empty support: SPEC wants an
        # error), PrefixConstrainedLogitsProcessor "forces them with a score of 0 so the
        # constraint holds": the row becomes uniform over the allowed tokens and is sampled.
        proc = PrefixConstrainedLogitsProcessor(lambda b, ids: [1, 2], 1)
        scores = proc(IDS, torch.full((1, 4), float("-inf")))
        self.assertEqual(scores.tolist(), [[float("-inf"), 0.0, 0.0, float("-inf")]])

    def test_greedy_generate_never_validates_the_sampling_parameters(self):
        # do_sample=False (T = 0) builds no warper, so top_k < 0, min_p >= 1 and top_p outside
        # (0, 1] are never checked: generate returns the arg-max.
        model = FixedLogits([12.0, -3.0, 1.0])
        out = model.generate(IDS, do_sample=False, top_k=-2, min_p=1.0, top_p=1.5,
                             max_new_tokens=2, pad_token_id=0, use_cache=False)
        self.assertEqual(out[0, 1:].tolist(), [0, 0])

    def test_row_probe_names_each_mechanism_on_its_row_only(self):
        # hf_row_probe.py, the predicate of fourteen findings (findings.json), on row files as
        # sampcert writes them: each field is 1 (or more) on the row that shows its mechanism
        # and 0 on a plain row (V = 3, T = 1).
        def bits(x):
            return struct.unpack("<I", struct.pack("<f", x))[0]

        inf, nan = float("inf"), float("nan")
        rows = {  # name: logits, T, mask, other fields
            "plain": ([0.0, 1.0, 2.0], 1.0, None, {}),
            "top_p_nan": ([0.0, 1.0, 2.0], 1.0, None, {"top_p_bits": bits(nan)}),
            "top_p_zero": ([0.0, 1.0, 2.0], 1.0, None, {"top_p_bits": bits(0.0)}),
            "t_inf": ([0.0, 1.0, 2.0], inf, None, {}),
            "min_p_one": ([0.0, 1.0, 2.0], 1.0, None, {"min_p_bits": bits(1.0)}),
            "greedy_top_k": ([0.0, 1.0, 2.0], 0.0, None, {"top_k": -2}),
            "sampled_top_k": ([0.0, 1.0, 2.0], 1.0, None, {"top_k": -2}),
            "empty": ([-inf, -inf, 2.0], 1.0, [1, 1, 0], {}),
            "greedy_masked_inf": ([0.0, 1.0, inf], 0.0, [1, 1, 0], {}),
            "nan": ([0.0, nan, 2.0], 1.0, None, {}),
            # The request's own fields (SPEC sections 16 and 18), at T = 1.
            "pen_overflow": ([3e38, 2.9e38, 0.0], 1.0, None,
                             {"repetition_penalty_bits": bits(0.5), "output_tokens": [0, 1]}),
            "history_past_v": ([0.0, 1.0, 2.0], 1.0, None,
                               {"repetition_penalty_bits": bits(1.3), "output_tokens": [1, 3]}),
            "nan_bias": ([0.0, 1.0, 2.0], 1.0, None,
                         {"bias_tokens": [1], "bias_bits": [bits(nan)]}),
            "repeated_bias": ([0.0, 1.0, 2.0], 1.0, None,
                              {"bias_tokens": [2, 2], "bias_bits": [bits(1.0), bits(-1.0)]}),
            "eos_past_v": ([0.0, 1.0, 2.0], 1.0, None, {"min_tokens": 2, "eos_token_id": 3,
                                                        "output_tokens": [1]})}
        seen = {}
        with tempfile.TemporaryDirectory() as d:
            for name, (x, t, mask, extra) in rows.items():
                path = os.path.join(d, name + ".json")
                row = {"format": "sampcert-row/1", "dtype": "f32",
                       "logit_bits": [bits(v) for v in x], "temperature_bits": bits(t), **extra}
                if mask is not None:
                    row["mask"] = mask
                with open(path, "w") as f:
                    json.dump(row, f)
                seen[name] = hf_row_probe.probe(path, "f32")
        fields = {"top_p_nan": "top_p_unchecked", "top_p_zero": "top_p_unchecked",
                  "t_inf": "temperature_inf_accepted", "min_p_one": "sampling_parameter_unchecked",
                  "greedy_top_k": "sampling_parameter_unchecked", "empty": "forced_allowed",
                  "greedy_masked_inf": "greedy_nan", "nan": "nan", "sampled_top_k": "refused",
                  "pen_overflow": "overflowed",
                  "history_past_v": "history_past_vocabulary_accepted",
                  "nan_bias": "nan_bias_accepted", "repeated_bias": "repeated_bias_accepted",
                  "eos_past_v": "eos_past_vocabulary_accepted"}
        for name, field in fields.items():
            self.assertGreaterEqual(seen[name][field], 1, f"{field} on {name}: {seen[name]}")
            self.assertEqual(seen["plain"][field], 0, f"{field} on the plain row")
        # Both allowed tokens of the empty support were forced to a finite score.
        self.assertEqual(seen["empty"]["forced_allowed"], 2)
        # A refused row shows no mechanism; T = 0 is min-p-one's, never top-p-unchecked's.
        self.assertEqual(sum(v for k, v in seen["sampled_top_k"].items() if k != "row"), 1)
        self.assertEqual(seen["greedy_top_k"]["top_p_unchecked"], 0)
        self.assertEqual(seen["top_p_zero"]["sampling_parameter_unchecked"], 0)
        # r = 0.5 divides the two seen positive logits: 6e38 and 5.8e38 overflow to +inf.
        self.assertEqual(seen["pen_overflow"]["overflowed"], 2)
        self.assertEqual(seen["nan_bias"]["overflowed"], 0)

    def test_one_bad_row_fails_the_whole_batch(self):
        # _sample draws the whole batch with one torch.multinomial(probs, 1): a row whose
        # probabilities are NaN (a +inf logit) raises for every row, the valid ones included.
        scores = torch.tensor([[0.0, 1.0, 2.0], [0.0, float("inf"), 1.0]])
        with self.assertRaisesRegex(RuntimeError, MULTINOMIAL_ERROR):
            torch.multinomial(torch.softmax(scores, -1), 1)

    def test_top_p_above_one_or_nan_is_ignored_and_zero_is_accepted(self):
        # generate adds TopPLogitsWarper only when top_p < 1: 1.5 and NaN never reach its
        # check; TopPLogitsWarper itself accepts 0 (it refuses only < 0 or > 1).
        model = FixedLogits([0.0, 1.0, 2.0])
        for bad in (1.5, float("nan")):
            torch.manual_seed(0)
            out = model.generate(IDS, do_sample=True, top_p=bad, top_k=0, max_new_tokens=60,
                                 pad_token_id=0, use_cache=False)
            self.assertEqual(set(out[0, 1:].tolist()), {0, 1, 2})  # no cut, no error
        with self.assertRaises(ValueError):
            TopPLogitsWarper(1.5)
        kept = TopPLogitsWarper(0.0)(IDS, torch.tensor([[0.0, 1.0, 2.0]]))
        self.assertEqual(int(torch.isfinite(kept).sum()), 1)

    def test_infinite_temperature_is_accepted(self):
        # TemperatureLogitsWarper wants T > 0: inf passes, and every finite score becomes 0.
        scores = TemperatureLogitsWarper(float("inf"))(IDS, torch.tensor([[0.0, 5.0, -3.0]]))
        self.assertEqual(scores.tolist(), [[0.0, 0.0, -0.0]])

    def test_negative_parameters_are_refused_with_clear_messages(self):
        # ... and min_p = 1 is not: MinPLogitsWarper allows [0, 1] (SPEC wants [0, 1)).
        MinPLogitsWarper(1.0)
        for make, text in ((lambda: TemperatureLogitsWarper(-1.0), "temperature"),
                           (lambda: TopKLogitsWarper(-1), "top_k"),
                           (lambda: TopPLogitsWarper(-0.5), "top_p"),
                           (lambda: MinPLogitsWarper(1.5), "min_p")):
            with self.assertRaisesRegex(ValueError, text):
                make()

    def test_division_rounds_near_ties_into_must_drop_tokens(self):
        # At T = 7.24e-8 the scores / T are about -1e7, where float32's spacing is 1: logits
        # one float32 step apart (the reference separates them by a factor e^-1) become equal
        # or one apart after the division, so top-k / top-p cut by value keep a token the exact
        # cut drops.
        x = torch.tensor([-0.724004, -0.7240039, -0.72400385], dtype=torch.float32)
        z = TemperatureLogitsWarper(7.24004e-08)(IDS, x.reshape(1, -1))[0]
        self.assertTrue(bool((z == torch.round(z)).all()))
        self.assertEqual(int(z[2] - z[1]), 1)

    # --- Penalties (SPEC section 16): RepetitionPenaltyLogitsProcessor, as generate builds it.

    def test_repetition_penalty_follows_the_sign_rule_once_per_token(self):
        # PEN-2 as transformers does it: a seen positive logit divided, a negative one
        # multiplied, once however often the token occurs (scatter writes the same value).
        scores = torch.tensor([[1.8, -1.5, 0.7, 2.0]])
        out = RepetitionPenaltyLogitsProcessor(1.5)(torch.tensor([[0, 1, 1, 1]]), scores.clone())
        self.assertTrue(torch.allclose(out, torch.tensor([[1.2, -2.25, 0.7, 2.0]])))

    def test_repetition_penalty_ignores_history_ids_past_the_vocabulary(self):
        # An id >= V is clamped to V and dropped on purpose ("the embedding vocab may be larger
        # than the lm_head output"): never refused, the row is sampled (INV-8 wants
        # InvalidPenalty). A negative id reaches torch.gather, which raises.
        scores = torch.tensor([[1.9, -1.3, 0.7, -0.45, 1.6, -2.2, 0.35, 1.15]])
        out = RepetitionPenaltyLogitsProcessor(1.3)(torch.tensor([[2, 1, 8]]), scores.clone())
        seen = RepetitionPenaltyLogitsProcessor(1.3)(torch.tensor([[2, 1]]), scores.clone())
        self.assertTrue(torch.equal(out, seen))
        with self.assertRaisesRegex(RuntimeError, "index -1 is out of bounds"):
            RepetitionPenaltyLogitsProcessor(1.3)(torch.tensor([[-1, 1]]), scores.clone())

    def test_repetition_penalty_overflows_in_the_scores_dtype(self):
        # x / r is computed in the scores' dtype: float32 in generate (it upcasts the logits),
        # so 3e38 and 2.9e38 seen with r = 0.5 both become +inf (exactly 6e38 and 5.8e38, token 0
        # ahead by 2e37): softmax is NaN (inf - inf) and multinomial raises on a valid row. In
        # float16 scores (the f16 variant) 60000 / 0.5 overflows the same way.
        for dtype, big, second, top in ((torch.float32, 3e38, 2.9e38, 3.3e38),
                                        (torch.float16, 6e4, 5e4, 6.5e4)):
            scores = torch.tensor([[big, second, top, 0.4, -1.1, 2.5, float("-inf"), 1.3]],
                                  dtype=dtype)
            out = RepetitionPenaltyLogitsProcessor(0.5)(torch.tensor([[0, 1]]), scores)
            self.assertEqual(out.dtype, dtype)
            self.assertEqual(out[0, :2].tolist(), [float("inf")] * 2)
            probs = torch.softmax(out.float(), -1)
            self.assertTrue(torch.isnan(probs).all())
            with self.assertRaisesRegex(RuntimeError, MULTINOMIAL_ERROR):
                torch.multinomial(probs, 1)

    def test_repetition_penalty_refuses_nan_and_accepts_inf(self):
        # `penalty > 0` is the whole check: NaN and 0 are refused with a clear message, +inf is
        # accepted (INV-8 refuses it): a seen positive logit becomes 0, a negative one -inf.
        for bad in (float("nan"), 0.0, -1.0):
            with self.assertRaisesRegex(ValueError, "`penalty` has to be a strictly positive"):
                RepetitionPenaltyLogitsProcessor(bad)
        out = RepetitionPenaltyLogitsProcessor(float("inf"))(torch.tensor([[0, 1]]),
                                                             torch.tensor([[1.9, -1.3, 0.7]]))
        self.assertEqual(out[0].tolist()[:2], [0.0, float("-inf")])

    # --- Logit bias, bans and a minimum length (SPEC section 18), as generate builds them.

    def test_bias_and_bans_are_added_so_infinities_make_nan(self):
        # SequenceBiasLogitsProcessor adds the bias (scores + bias), and NoBadWordsLogitsProcessor
        # is the same processor with -inf biases: a banned +inf logit becomes NaN (inf - inf),
        # and a +inf bias makes its token +inf, whose softmax is NaN. multinomial then raises on
        # valid rows (SPEC BIAS-2: the ban wins, the +inf token is drawn).
        scores = torch.tensor([[float("inf"), 2.0, 1.0]])
        self.assertTrue(math.isnan(NoBadWordsLogitsProcessor([[0]])(IDS, scores)[0, 0].item()))
        out = SequenceBiasLogitsProcessor([[[1], float("inf")]])(IDS, torch.tensor([[0.5, 2.0, 1.0]]))
        self.assertEqual(out[0, 1].item(), float("inf"))
        probs = torch.softmax(out, -1)
        self.assertTrue(torch.isnan(probs).any())
        with self.assertRaisesRegex(RuntimeError, MULTINOMIAL_ERROR):
            torch.multinomial(probs, 1)

    def test_bias_sum_overflows_in_the_scores_dtype(self):
        # x + b in the scores' dtype: 3e38 + 3e38 is +inf in float32 (SPEC BIAS-3 wants the
        # exact 6e38); in float16 50000 + 40000 is +inf.
        out = SequenceBiasLogitsProcessor([[[0], 3e38]])(IDS, torch.tensor([[3e38, 2.0, 1.0]]))
        self.assertEqual(out[0, 0].item(), float("inf"))
        half = SequenceBiasLogitsProcessor([[[0], 40000.0]])(
            IDS, torch.tensor([[50000.0, 2.0, 1.0]], dtype=torch.float16))
        self.assertEqual(half.dtype, torch.float16)
        self.assertEqual(half[0, 0].item(), float("inf"))

    def test_a_nan_bias_is_accepted(self):
        # The check is isinstance(bias, float), which NaN passes: the token's score is NaN and
        # the error is multinomial's, not one about the bias (SPEC INV-9 wants InvalidLogitBias).
        out = SequenceBiasLogitsProcessor([[[1], float("nan")]])(IDS, torch.tensor([[0.5, 2.0, 1.0]]))
        self.assertTrue(math.isnan(out[0, 1].item()))
        with self.assertRaisesRegex(RuntimeError, MULTINOMIAL_ERROR):
            torch.multinomial(torch.softmax(out, -1), 1)

    def test_a_repeated_bias_id_keeps_its_last_bias(self):
        # The list is made a dict: a token given two biases silently keeps the last one.
        p = SequenceBiasLogitsProcessor([[[1], 1.0], [[2], 0.5], [[1], -3.0]])
        out = p(IDS, torch.tensor([[0.5, 2.0, 1.0]]))
        self.assertEqual(out[0].tolist(), [0.5, -1.0, 1.5])

    def test_an_eos_id_past_the_vocabulary_bans_nothing(self):
        # MinNewTokensLengthLogitsProcessor bans torch.isin(arange(V), eos): an id >= V matches
        # no token, so nothing is banned and nothing is refused (SPEC INV-9).
        scores = torch.tensor([[0.5, 2.0, 1.0]])
        out = MinNewTokensLengthLogitsProcessor(0, 3, 8)(IDS, scores)
        self.assertTrue(torch.equal(out, scores))
        banned = MinNewTokensLengthLogitsProcessor(0, 3, 1)(IDS, scores)
        self.assertEqual(banned[0, 1].item(), float("-inf"))


if __name__ == "__main__":
    unittest.main()

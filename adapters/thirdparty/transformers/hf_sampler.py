#!/usr/bin/env python3
"""Hugging Face transformers' own sampling path as a sampcert protocol server.

    sampcert run --sampler exec:'/opt/sampcert-thirdparty/venv/bin/python \
        adapters/thirdparty/transformers/hf_sampler.py [--dtype bf16|f16]' --profile quick

For each row this builds the logits-processor list with transformers' REAL
GenerationMixin._get_logits_processor (transformers 5.24.0, generation/utils.py, the
"Processors previously known as LogitsWarpers" block), from a GenerationConfig(do_sample=True,
temperature=T, top_k=k, top_p=p, min_p=m) completed with transformers' global defaults as
generate's _prepare_generation_config completes it (num_beams 1, ...): in that code's order
TemperatureLogitsWarper (when T != 1), TopKLogitsWarper (k != 0), TopPLogitsWarper (p < 1),
MinPLogitsWarper (min_p not None),
each constructed, validated and applied by transformers itself. A mask is passed as HF's
prefix_allowed_tokens_fn (the allowed token ids), so transformers' PrefixConstrainedLogitsProcessor
adds -inf to the masked scores (`scores + mask`), as generate does. Then, as GenerationMixin._sample
does: probs = nn.functional.softmax(scores, dim=-1) and torch.multinomial(probs) with a
torch.Generator (one per (seed, row_id) stream, torch_streams.py).

Penalties (SPEC section 16): a row's repetition penalty r goes into the same GenerationConfig
(repetition_penalty=r), so _get_logits_processor puts transformers' RepetitionPenaltyLogitsProcessor
where generate puts it, before the warpers; its input_ids are the row's prompt followed by its
output, as a decoder-only model's input_ids are at that step (repetition_history
"prompt-and-output"). torch.gather raises on a history id outside [0, V) (its message "index ... is
out of bounds"): that refusal is INVALID_PENALTY. transformers has no presence or frequency
penalty (additive_history "none", PEN-POL-1): the host never sends a valid row asking for one,
and one that is not finite (INV-8) is refused here as INVALID_PENALTY, anything else as
UNSUPPORTED. An empty history (generate always has one token at least) asks for nothing: the
penalty is left out, as it has no token to rewrite. The ABI's repetition penalty 0 (off,
PEN-IN-2) is transformers' off, 1.0 (no processor).

Logit bias and a minimum length (SPEC section 18), as a user of generate passes them: each
finite or +inf bias as a single-token sequence_bias ([[t], b]), each -inf bias (a ban) as
bad_words_ids ([[t]]), min_tokens as min_new_tokens with the row's eos_token_id as the EOS; so
_get_logits_processor builds transformers' SequenceBiasLogitsProcessor (first, before the
repetition penalty: SPEC's order), NoBadWordsLogitsProcessor and MinNewTokensLengthLogitsProcessor,
the last with the prompt's length as the length to skip, so that the new tokens are the row's
output. transformers' ValueErrors naming the bias (an id >= V: "the following tokens were being
biased"; a negative id) are INVALID_LOGIT_BIAS. The row's eos_token_id is read only while
min_tokens > 0 (as SPEC says), so no EOS is set otherwise.

T = 0: TemperatureLogitsWarper refuses it ("If you're looking for greedy decoding strategies,
set `do_sample=False`"), so T = 0 is what that message says: do_sample=False, i.e. the same
processor list without the warpers, then torch.argmax(scores, dim=-1) as _sample does
(the first maximal index: greedy lowest-index).

--dtype f32 (default): logits upcast to float32 first, as _sample does
    (`outputs.logits[:, -1].to(copy=True, dtype=torch.float32, ...)`): generate's own path for
    a model of any dtype; declares f32, f16, bf16 at accuracy fp32.
--dtype bf16 / --dtype f16: the warpers, softmax and multinomial run on bf16 / float16 scores
    (what a caller of the warpers on a half model's logits gets, outside generate); declares
    that dtype only, accuracy bf16 / fp16.
The variant is a command-line option because it changes the declarations, which the host reads
before create gets --sampler-config.

--sampler-config: none or "" (draws by torch.multinomial(probs, n, replacement=True): one double
    a draw, fast), or "draws=per-step": every draw is its own torch.multinomial(probs,
    num_samples=1) call, exactly generate's (V random numbers a draw: for single items and
    small rows, e.g. --item f32/llm_like_V1000; a standard run would take days). Anything
    else is refused.

Errors: transformers' ValueErrors keep their message and get the code of the parameter they
name (`temperature` -> INVALID_TEMPERATURE, `top_k`, `top_p`, `min_p`; an empty
prefix_allowed_tokens_fn list -> EMPTY_SUPPORT); torch's RuntimeErrors (multinomial's
"probability tensor contains either inf, nan or element < 0") are NUMERICAL_FAILURE.
Parameters transformers ignores (top_p >= 1 or NaN: no TopPLogitsWarper) are ignored here too.
"""

import argparse
import os
import sys
import types
import warnings

os.environ["HF_HUB_OFFLINE"] = "1"  # no network at run time: nothing here downloads
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "torch"))
import sampcert_protocol as sp  # noqa: E402
sp.delegate_to_fork_server()  # a fork server's child serves, where one runs (tests)
import torch  # noqa: E402
import torch_streams  # noqa: E402
import transformers  # noqa: E402
from transformers import GenerationConfig, LogitsProcessorList  # noqa: E402
from transformers.generation.utils import GenerationMixin  # noqa: E402

# Which SamplerError code a transformers ValueError gets, by the parameter its message names.
VALUE_ERROR_CODES = [("`temperature`", sp.INVALID_TEMPERATURE), ("`top_k`", sp.INVALID_TOP_K),
                     ("`top_p`", sp.INVALID_TOP_P), ("`min_p`", sp.INVALID_MIN_P),
                     ("`penalty`", sp.INVALID_PENALTY),
                     ("were being biased", sp.INVALID_LOGIT_BIAS),
                     ("`sequence_bias`", sp.INVALID_LOGIT_BIAS),
                     ("`bad_words_ids`", sp.INVALID_LOGIT_BIAS),
                     ("`min_new_tokens`", sp.INVALID_LOGIT_BIAS),
                     ("returned an empty list", sp.EMPTY_SUPPORT)]


class _Model(GenerationMixin):
    """Just enough of a model for GenerationMixin._get_logits_processor: it reads
    self.config only for processors the configs here never ask for (watermarking, ...)."""

    def __init__(self, vocab):
        self.config = types.SimpleNamespace(vocab_size=vocab, is_encoder_decoder=False)


def history(row):
    """The input_ids a decoder-only model has at this step: the prompt, then the output."""
    ids = np.concatenate([np.asarray(row.prompt_tokens, np.int64),
                          np.asarray(row.output_tokens, np.int64)])
    return torch.from_numpy(ids).reshape(1, -1)


def repetition_penalty(row, r):
    """The row's repetition penalty as generate takes it; the others, which transformers does
    not have, refused (the host sends none it could certify: additive_history none)."""
    for name in ("presence_penalty", "frequency_penalty"):
        v = getattr(row, name)
        if not np.isfinite(v):
            raise sp.SamplerError(sp.INVALID_PENALTY, f"row {r}: {name} is {v} (transformers has "
                                  "no presence or frequency penalty; a finite 0 is off)", r)
        if v != 0:
            raise sp.SamplerError(sp.UNSUPPORTED, f"row {r}: {name} {v}: transformers has no "
                                  "presence or frequency penalty (declared none)", r)
    penalty = row.repetition_penalty
    if penalty == 0 or (len(row.prompt_tokens) == 0 and len(row.output_tokens) == 0):
        return 1.0  # off (PEN-IN-2), or nothing to rewrite
    return float(penalty)


def bias_config(row):
    """The row's bias as generate's parameters: sequence_bias for the biases, bad_words_ids for
    the bans (-inf), min_new_tokens; {} for a row with neither."""
    out = {}
    ids = [int(t) for t in row.bias_tokens]
    values = [float(b) for b in row.bias_values]
    biased = [[[t], b] for t, b in zip(ids, values) if b != float("-inf")]
    banned = [[t] for t, b in zip(ids, values) if b == float("-inf")]
    if biased:
        out["sequence_bias"] = biased
    if banned:
        out["bad_words_ids"] = banned
    if row.min_tokens != 0:
        out["min_new_tokens"] = int(row.min_tokens)
    return out


def logits_processors(row, vocab, r=0, prompt_length=1):
    """transformers' own processor list for this row (do_sample=False at T = 0)."""
    greedy = row.temperature == 0
    gc = GenerationConfig(do_sample=not greedy, temperature=row.temperature, top_k=row.top_k,
                          top_p=row.top_p, min_p=row.min_p,
                          repetition_penalty=repetition_penalty(row, r), **bias_config(row))
    gc.update(**gc._get_default_generation_params(), defaults_only=True)
    # Set by generate's _prepare_special_tokens from the model's EOS; here the row's, read only
    # while min_tokens > 0 (SPEC MINLEN-1).
    gc._eos_token_tensor = (torch.tensor([int(row.eos_token_id)]) if row.min_tokens > 0
                            else None)
    allowed = None
    if row.mask is not None:
        ids = np.flatnonzero(row.mask).tolist()
        allowed = lambda batch_id, input_ids: ids  # noqa: E731
    return greedy, _Model(vocab)._get_logits_processor(
        generation_config=gc, input_ids_seq_length=prompt_length,
        encoder_input_ids=torch.zeros((1, 1), dtype=torch.long),
        prefix_allowed_tokens_fn=allowed, logits_processor=LogitsProcessorList(), device="cpu")


def make_info(compute: str) -> sp.Info:
    return sp.Info(
        name="hf_transformers" + ("" if compute == "f32" else "_" + compute),
        version=f"transformers {transformers.__version__}, torch {torch.__version__}",
        capabilities=(["f32", "f16", "bf16"] if compute == "f32" else [compute]) +
        ["mask", "top-k", "top-p", "min-p", "temperature-0", "probabilities", "batch",
         "penalties", "logit-bias", "min-tokens"],
        greedy_tie_break="lowest-index",  # torch.argmax: the first maximal index
        # TopKLogitsWarper removes `scores < topk(scores, k)[0][..., -1]`: ties at the k-th
        # value are kept. TopPLogitsWarper cuts in torch.sort's order: exactly as many as the
        # mass needs, the tied ones in sort order (exact, any).
        tie_rule="keep-all", top_k_tie_rule="keep-all", top_p_tie_rule="exact-any",
        pipeline_order="temperature-first",  # TemperatureLogitsWarper first
        truncation_order=("top-k", "top-p", "min-p"),  # _get_logits_processor's order
        nan_policy="error",
        determinism="same-seed",
        accuracy=sp.DTYPE_ACCURACY[compute],
        draws="sequential",  # a torch.Generator per stream (torch_streams.py)
        # RepetitionPenaltyLogitsProcessor reads generate's input_ids, the prompt included;
        # transformers has no presence or frequency penalty.
        repetition_history="prompt-and-output",
        additive_history="none",
    )


class HfSampler:
    def __init__(self, compute: str):
        self.compute = compute
        self.streams = torch_streams.Streams()
        self.draw = self.streams.draw

    def create(self, config):
        if config == "draws=per-step":
            self.draw = self.streams.draw_per_step
        elif config not in (None, ""):
            raise sp.SamplerError(sp.INVALID_ARGUMENT, f"unknown config '{config}': this "
                                  "sampler takes none, \"\" or \"draws=per-step\" (the dtype "
                                  "variant is the command's --dtype)")

    def _scores(self, batch, r, row):
        """(greedy, processed scores [1, V]) or a SamplerError."""
        try:
            input_ids, prompt_length = history(row), len(row.prompt_tokens)
            if input_ids.shape[1] == 0:  # PrefixConstrainedLogitsProcessor reshapes by length
                input_ids, prompt_length = torch.zeros((1, 1), dtype=torch.long), 1
            greedy, processors = logits_processors(row, batch.vocab, r, prompt_length)
            scores = torch_streams.logits_tensor(row, batch.dtype, self.compute).reshape(1, -1)
            return greedy, processors(input_ids, scores)
        except ValueError as e:
            code = next((c for key, c in VALUE_ERROR_CODES if key in str(e)),
                        sp.INVALID_ARGUMENT)
            raise sp.SamplerError(code, f"row {r}: transformers: {e}", r)
        except RuntimeError as e:
            if "out of bounds" in str(e):  # torch.gather on a history id outside [0, V)
                raise sp.SamplerError(sp.INVALID_PENALTY, f"row {r}: torch: {e}", r)
            raise sp.SamplerError(sp.NUMERICAL_FAILURE, f"row {r}: torch: {e}", r)

    def _probs(self, greedy, scores):
        if greedy:
            p = torch.zeros_like(scores, dtype=torch.float64)
            p[0, torch.argmax(scores, dim=-1)] = 1
            return p
        return torch.nn.functional.softmax(scores, dim=-1)

    def sample(self, batch, seed, first_draw, draws_per_row):
        rows = [self._scores(batch, r, row) for r, row in enumerate(batch.rows)]
        out = np.empty((len(batch.rows), draws_per_row), np.int64)
        for r, (row, (greedy, scores)) in enumerate(zip(batch.rows, rows)):
            if greedy:
                out[r] = int(torch.argmax(scores, dim=-1)[0])
                continue
            try:
                out[r] = self.draw(self._probs(False, scores)[0], seed, row.row_id,
                                   first_draw, draws_per_row)
            except RuntimeError as e:
                raise sp.SamplerError(sp.NUMERICAL_FAILURE, f"row {r}: torch.multinomial: "
                                      f"{e}", r)
        return out

    def probabilities(self, batch):
        out = []
        for r, row in enumerate(batch.rows):
            greedy, scores = self._scores(batch, r, row)
            out.append(self._probs(greedy, scores)[0].double().numpy())
        return np.stack(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", choices=["f32", "bf16", "f16"], default="f32")
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # GenerationConfig's advice about unused parameters
    s = HfSampler(args.dtype)
    sp.serve(s.sample, make_info(args.dtype), probabilities_fn=s.probabilities,
             create_fn=s.create)


if __name__ == "__main__":
    main()

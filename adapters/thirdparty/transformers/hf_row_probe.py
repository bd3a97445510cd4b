"""A direct probe of transformers on report rows, outside sampcert: what generate's own logits
processors do with each row file (sampcert-row/1), in the compute dtype of the certified variant.

    /opt/sampcert-thirdparty/venv/bin/python hf_row_probe.py --dtype f32|f16|bf16 ROW_FILE...

For each row it asks transformers for the processor list generate would build
(GenerationMixin._get_logits_processor on a GenerationConfig of the row's temperature, top_k,
top_p and min_p, do_sample=False at T = 0, the mask as prefix_allowed_tokens_fn), applies it to
the row's logits (built from their bit patterns by ../torch/torch_row_probe.py: float32 for
--dtype f32, the row's half type otherwise) and looks at the result: plain transformers, torch
and numpy, no sampcert code. Prints one JSON line per row:

  "refused": 1 when transformers raised building or applying the list, else 0;
  "top_p_unchecked": 1 when the row samples (T != 0), its top_p is invalid (SPEC INV-3: NaN or
      outside (0, 1]) and transformers neither refused it nor built a TopPLogitsWarper that
      removes anything (top_p >= 1 or NaN: no warper; 0: a warper that keeps one token);
  "temperature_inf_accepted": 1 when T = +inf and the list was built and applied;
  "sampling_parameter_unchecked": 1 when the list was built and applied although min_p is
      invalid (INV-4: NaN or outside [0, 1)), or T = 0 and top_k < 0, top_p or min_p invalid
      (generate builds no warper at T = 0, so none is checked);
  "forced_allowed": how many allowed tokens have a -inf logit but a finite processed score, on a
      masked row whose every allowed logit is -inf (an empty support);
  "greedy_nan": 1 when T = 0 and torch.argmax of the processed scores picks a NaN score or a
      masked token;
  "nan": NaN probabilities in softmax of the processed scores (T != 0);
  "overflowed": tokens whose finite logit has an infinite processed score;
  "nan_bias_accepted": 1 when a NaN bias was taken (not refused) and its token's score is NaN;
  "repeated_bias_accepted", "eos_past_vocabulary_accepted", "history_past_vocabulary_accepted":
      1 when the list was built and applied for a row that biases a token twice, that asks for
      min_tokens with an EOS id outside [0, V), or whose penalized history holds an id >= V
      (SPEC INV-8, INV-9: each is an invalid request).

The row's bias, bans, minimum length and repetition penalty go in as a user passes them to
generate (sequence_bias, bad_words_ids, min_new_tokens with the row's EOS, repetition_penalty),
with the prompt and then the output as input_ids.

adapters/thirdparty/findings.py runs it as the predicate of a transformers finding on the
failing rows the finding claims (findings.json).
"""
import argparse
import json
import math
import os
import sys
import types

import numpy as np
import torch
from transformers import GenerationConfig, LogitsProcessorList, TopPLogitsWarper
from transformers.generation.utils import GenerationMixin

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
from torch_row_probe import logits  # noqa: E402  (the row's logits from its bit patterns)


class _Model(GenerationMixin):
    """Just enough of a model for _get_logits_processor, which reads self.config only for
    processors these configs never ask for."""

    def __init__(self, vocab):
        self.config = types.SimpleNamespace(vocab_size=vocab, is_encoder_decoder=False)


def f32(bits):
    return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])


def request(row):
    """The rest of the row as a user passes it to generate: each finite or +inf bias as a
    single-token sequence_bias, each -inf bias as bad_words_ids, min_tokens as min_new_tokens,
    the repetition penalty (0 is off, as is an empty history); and the input_ids, the prompt
    then the output."""
    ids = list(row.get("prompt_tokens", [])) + list(row.get("output_tokens", []))
    kw = {}
    biases = [(int(t), f32(b))
              for t, b in zip(row.get("bias_tokens", []), row.get("bias_bits", []))]
    biased = [[[t], b] for t, b in biases if b != -math.inf]
    banned = [[t] for t, b in biases if b == -math.inf]
    if biased:
        kw["sequence_bias"] = biased
    if banned:
        kw["bad_words_ids"] = banned
    if row.get("min_tokens", 0):
        kw["min_new_tokens"] = int(row["min_tokens"])
    r = f32(row.get("repetition_penalty_bits", 0))
    if r != 0 and ids:
        kw["repetition_penalty"] = r
    return kw, ids


def processors(row, t, top_p, min_p, kw, prompt_length):
    greedy = t == 0
    gc = GenerationConfig(do_sample=not greedy, temperature=t, top_k=int(row.get("top_k", 0)),
                          top_p=top_p, min_p=min_p, **kw)
    gc.update(**gc._get_default_generation_params(), defaults_only=True)
    gc._eos_token_tensor = (torch.tensor([int(row["eos_token_id"])]) if row.get("min_tokens", 0)
                            else None)
    allowed = None
    if row.get("mask"):
        ids = np.flatnonzero(row["mask"]).tolist()
        allowed = lambda batch_id, input_ids: ids  # noqa: E731
    return _Model(len(row["logit_bits"]))._get_logits_processor(
        generation_config=gc, input_ids_seq_length=prompt_length,
        encoder_input_ids=torch.zeros((1, 1), dtype=torch.long),
        prefix_allowed_tokens_fn=allowed, logits_processor=LogitsProcessorList(), device="cpu")


def probe(path, compute):
    with open(path) as f:
        row = json.load(f)
    if row.get("format") != "sampcert-row/1":
        raise SystemExit(f"{path}: not a sampcert-row/1 file")
    # A field a row file leaves out is off (top_p 1, min_p 0, top_k 0: SPEC IN-4).
    t, top_p, min_p = (f32(row.get(k, off)) for k, off in
                       (("temperature_bits", 0x3F800000), ("top_p_bits", 0x3F800000),
                        ("min_p_bits", 0)))
    x = logits(row, compute).reshape(1, -1)
    mask = (torch.tensor(row["mask"], dtype=torch.bool) if row.get("mask")
            else torch.ones(x.shape[1], dtype=torch.bool))
    out = {"row": path, "refused": 0, "top_p_unchecked": 0, "temperature_inf_accepted": 0,
           "sampling_parameter_unchecked": 0, "forced_allowed": 0, "greedy_nan": 0, "nan": 0,
           "overflowed": 0, "nan_bias_accepted": 0, "repeated_bias_accepted": 0,
           "eos_past_vocabulary_accepted": 0, "history_past_vocabulary_accepted": 0}
    kw, ids = request(row)
    # generate always has a token of history: with none, one token and no penalty (above).
    input_ids = torch.tensor([ids if ids else [0]], dtype=torch.long)
    try:
        plist = processors(row, t, top_p, min_p, kw, len(row.get("prompt_tokens", [])) or 1)
        scores = plist(input_ids, x.clone())
    except (ValueError, RuntimeError):  # transformers' checks; torch.gather past V
        out["refused"] = 1
        return out
    v = x.shape[1]
    bias_tokens = [int(b) for b in row.get("bias_tokens", [])]
    out["overflowed"] = int((torch.isinf(scores) & torch.isfinite(x)).sum())
    out["nan_bias_accepted"] = int(any(
        math.isnan(f32(b)) and 0 <= tok < v and bool(torch.isnan(scores[0, tok]))
        for tok, b in zip(bias_tokens, row.get("bias_bits", []))))
    out["repeated_bias_accepted"] = int(len(set(bias_tokens)) < len(bias_tokens))
    out["eos_past_vocabulary_accepted"] = int(
        row.get("min_tokens", 0) > 0 and not 0 <= int(row.get("eos_token_id", 0)) < v)
    out["history_past_vocabulary_accepted"] = int(
        "repetition_penalty" in kw and any(i >= v for i in ids))
    bad_top_p = math.isnan(top_p) or not 0 < top_p <= 1
    bad_min_p = math.isnan(min_p) or not 0 <= min_p < 1
    if t != 0 and bad_top_p:
        warpers = [p for p in plist if isinstance(p, TopPLogitsWarper)]
        out["top_p_unchecked"] = int(not warpers or all(
            int(torch.isfinite(p(None, x.clone().float())).sum()) <= 1 for p in warpers))
    out["temperature_inf_accepted"] = int(t == math.inf)
    out["sampling_parameter_unchecked"] = int(bad_min_p or (t == 0 and (
        int(row.get("top_k", 0)) < 0 or bad_top_p)))
    if row.get("mask") and not bool(torch.isfinite(x[0][mask]).any()):
        out["forced_allowed"] = int((torch.isfinite(scores[0]) & mask &
                                     torch.isneginf(x[0])).sum())
    if t == 0:
        i = int(torch.argmax(scores, dim=-1)[0])
        out["greedy_nan"] = int(bool(torch.isnan(scores[0, i])) or not bool(mask[i]))
    else:
        out["nan"] = int(torch.isnan(torch.softmax(scores.float(), dim=-1)).sum())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="f32")
    ap.add_argument("rows", nargs="+")
    args = ap.parse_args()
    for path in args.rows:
        print(json.dumps(probe(path, args.dtype)))


if __name__ == "__main__":
    main()

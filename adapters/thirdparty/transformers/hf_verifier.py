#!/usr/bin/env python3
"""Hugging Face transformers' speculative-decoding verifier as a sampcert protocol server.

    sampcert run --sampler exec:'/opt/sampcert-thirdparty/venv/bin/python \
        adapters/thirdparty/transformers/hf_verifier.py' --profile quick --item f32/verify

hf_sampler.py's sampler (transformers' own warpers, softmax and torch.multinomial), declaring
`verify` too (SPEC section 15). Each chain is verified as assisted generation verifies it
(transformers 4.47.1, generation/utils.py, GenerationMixin._assisted_decoding):

- the target rows' scores are the target model's logits after its logits processors, built by
  transformers' own _get_logits_processor from each row's GenerationConfig (hf_sampler.py's
  logits_processors: TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper,
  MinPLogitsWarper, a mask as PrefixConstrainedLogitsProcessor), stacked into `new_logits`
  [1, k + 1, V] in float32, as generate does;
- the draft rows are the assistant's distributions after its own warpers. Given as
  probabilities q: `candidate_logits` = log q (float32; log 0 = -inf), so transformers'
  `candidate_logits.softmax(-1)` gives back q (to float32 rounding). Given as draft logits
  (verify-draft-logits, ABI MINOR 3): `candidate_logits` are the draft rows' scores after the
  same warpers, built from each draft row's own parameters as for a target row, which is what
  the assistant's generate hands back as its scores;
- do_sample=True: the REAL transformers.generation.utils._speculative_sampling(
  candidate_input_ids, candidate_logits, candidate_length=k, new_logits), its
  assistant_ensemble_weight left None (the lossless default), whose torch.rand_like and
  torch.multinomial draw from torch's default CPU generator, seeded per chain from (seed, row_id,
  draw), so the same chain gives the same result (VER-DET-1);
- T = 0 (do_sample=False): _assisted_decoding's greedy branch, transcribed (it is inline code,
  not a function): `selected_tokens = new_logits.argmax(dim=-1)`, the drafts accepted while they
  equal it, then the next selected token.

Draft validation (VER-INV-1) is the helper's check_chains: _speculative_sampling takes its
inputs as generate builds them and checks nothing (a drafted token with q = 0 gives p / q = inf).
"""

import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hf_sampler  # noqa: E402  (sets HF_HUB_OFFLINE and the helper's path first)
from hf_sampler import sp, torch  # noqa: E402
from transformers.generation.utils import _speculative_sampling  # noqa: E402

MASK64 = (1 << 64) - 1


def chain_seed(seed: int, row_id: int, draw: int) -> int:
    """A 63-bit torch seed from (seed, row_id, draw): splitmix64 steps, so nearby draws differ."""
    x = 0
    for v in (seed, row_id, draw):
        x = (x ^ v) & MASK64
        x = (x + 0x9E3779B97F4A7C15) & MASK64
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
        x ^= x >> 31
    return x & ((1 << 63) - 1)


class HfVerifier(hf_sampler.HfSampler):
    def verify(self, chains, seed):
        sp.check_chains(chains)
        # id(row) -> (greedy, processed scores [V]), every target row before any token. The
        # scores are float32 from the exact logits (hf_sampler's f32 compute: the row's dtype
        # does not enter).
        scores = {}
        for c, chain in enumerate(chains):
            for row in chain.targets:
                if id(row) in scores:
                    continue
                batch = sp.Batch("f32", row.logits.size, [row])
                try:
                    greedy, s = self._scores(batch, 0, row)
                except sp.SamplerError as e:
                    raise sp.SamplerError(e.code, f"chain {c}: {e.message}", c)
                scores[id(row)] = (greedy, s.float().reshape(-1))
        logq = {}  # id(draft row) -> log q as float32
        out = []
        for c, chain in enumerate(chains):
            k = len(chain.drafts)
            greedy = [scores[id(r)][0] for r in chain.targets]
            new_logits = torch.stack([scores[id(r)][1] for r in chain.targets])[None]
            drafts = torch.tensor(np.asarray(chain.drafts, np.int64))[None]
            if all(greedy):
                selected = new_logits.argmax(dim=-1)[0]
                n = 0
                while n < k and int(drafts[0, n]) == int(selected[n]):
                    n += 1
                out.append([int(t) for t in drafts[0, :n]] + [int(selected[n])])
                continue
            if any(greedy):
                raise sp.SamplerError(sp.UNSUPPORTED, f"chain {c}: target rows mix T = 0 and "
                                      "T > 0 (generate has one do_sample per call)", c)
            if chain.draft_rows is not None:
                for j, row in enumerate(chain.draft_rows):
                    if id(row) in logq:
                        continue
                    batch = sp.Batch(chain.draft_dtype, row.logits.size, [row])
                    try:
                        draft_greedy, s = self._scores(batch, 0, row)
                    except sp.SamplerError as e:
                        raise sp.SamplerError(e.code, f"chain {c}, draft row {j + 1}: "
                                              f"{e.message}", c)
                    if draft_greedy:  # an assistant at T = 0 drafts greedily: no q to verify
                        raise sp.SamplerError(sp.UNSUPPORTED, f"chain {c}: draft row {j + 1} "
                                              "at T = 0", c)
                    logq[id(row)] = s.float().reshape(-1)
                candidate_logits = torch.stack([logq[id(r)] for r in chain.draft_rows])[None]
                for j in range(k):  # VER-INV-1: a token the warped draft row cannot draw
                    if candidate_logits[0, j, int(drafts[0, j])] == -float("inf"):
                        raise sp.SamplerError(sp.INVALID_DRAFT, f"chain {c}, draft {j + 1}: "
                                              f"drafted token {int(drafts[0, j])} has draft "
                                              "probability 0 under its warped draft row", c)
            else:
                for q in chain.q:
                    if id(q) not in logq:
                        with np.errstate(divide="ignore"):
                            logq[id(q)] = torch.from_numpy(np.log(q).astype(np.float32))
                candidate_logits = torch.stack([logq[id(q)] for q in chain.q])[None]
            candidate_input_ids = torch.cat([torch.zeros((1, 1), dtype=torch.long), drafts], -1)
            # The CPU generator the function draws from (torch.manual_seed would also seed every
            # accelerator backend: 2.2 ms a call in the CUDA build, against 1.3 us).
            torch.random.default_generator.manual_seed(chain_seed(seed, chain.row_id, chain.draw))
            try:
                tokens, n = _speculative_sampling(candidate_input_ids, candidate_logits, k,
                                                  new_logits)
            except RuntimeError as e:
                raise sp.SamplerError(sp.NUMERICAL_FAILURE, f"chain {c}: transformers "
                                      f"_speculative_sampling: {e}", c)
            out.append([int(t) for t in tokens.reshape(-1)])
            if len(out[-1]) != int(n) + 1:
                raise sp.SamplerError(sp.INTERNAL, f"chain {c}: {len(out[-1])} tokens for "
                                      f"{int(n)} matches", c)
        return out


def main():
    warnings.simplefilter("ignore")
    v = HfVerifier("f32")
    info = hf_sampler.make_info("f32")
    info.name = "hf_transformers_verifier"
    info.capabilities = list(info.capabilities) + ["verify", "verify-draft-logits"]

    sp.serve(v.sample, info, probabilities_fn=v.probabilities, create_fn=v.create,
             verify_fn=v.verify)


if __name__ == "__main__":
    main()

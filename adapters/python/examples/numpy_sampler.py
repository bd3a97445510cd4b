#!/usr/bin/env python3
"""A complete, correct sampler in numpy, certified through the process protocol:

    sampcert run --sampler exec:'python3 adapters/python/examples/numpy_sampler.py' --profile quick

SPEC section 3 in float64 on the exact logit values: support, temperature (greedy at T = 0,
uniform over +inf tokens), top-k / top-p / min-p on the tempered distribution with
renormalization between steps and tied tokens kept at a cut, then the canonical draw (SPEC
section 9: Philox4x32-10 keyed by (seed, row_id), counter by draw index, inverse CDF in index
order), so draw j of a row never depends on the batch or on which draws were asked before
(random access). f32, f16 and bf16 rows, masks, batches and probabilities are declared, and
speculative-decoding verification (SPEC section 15): accept a drafted token with probability
min(1, p / q), else draw from the residual (p - q)+, with the bonus token from the last row, its
uniforms the canonical draw's at (seed, row_id, 64 x draw + slot) like stable_cpu's.
Penalties over the row's token history (SPEC section 16, protocol 1.5: the repetition penalty
over the prompt and the output, presence and frequency over the output, before temperature)
and per-request seeds (section 17: a row's own seed, or unseeded) are declared too, and so are
the logit bias and the minimum length (section 18, protocol 1.6: a bias added to the exact
logit before the penalties, -inf banning its token as a mask does; the end-of-sequence id
banned while the output is shorter than min_tokens). Log-probabilities (section 20, protocol
1.7) in the three modes: raw (the logits as given), scaled (before truncation) and processed
(the distribution drawn from), with each row's top n. Packed masks (section 19, protocol 1.8):
a row's mask may come as uint32 words, bit t % 32 of word t // 32 for token t (xgrammar's and
llguidance's layout), unpacked here with numpy's unpackbits.

--sampler-config: none, "" or "check-config=TEXT" (create refuses anything else; TEXT is
printed to stderr, which is how the tests see that the config arrived).
"""

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sampcert_protocol as sp  # noqa: E402

INFO = sp.Info(
    name="numpy_example",
    version="1.0",
    capabilities=["f32", "f16", "bf16", "mask", "top-k", "top-p", "min-p", "temperature-0",
                  "probabilities", "batch", "verify", "verify-draft-logits", "verify-acceptance",
                  "penalties", "seeds", "logit-bias", "min-tokens", "logprobs-raw",
                  "logprobs-scaled", "logprobs-processed", "packed-mask"],
    greedy_tie_break="uniform",
    tie_rule="keep-all",
    pipeline_order="temperature-first",
    truncation_order=("top-k", "top-p", "min-p"),
    nan_policy="error",
    determinism="same-seed",
    accuracy="fp32",
    repetition_history="prompt-and-output",
    additive_history="output-only",
)

M32 = np.uint64(0xFFFFFFFF)


def allowed_tokens(row, vocab):
    """The row's mask as one bool per token: its bytes, or its packed words (protocol 1.8), whose
    bits are read little-end first: bit t % 32 of word t // 32 is token t."""
    if row.packed_mask is not None:
        bits = np.unpackbits(row.packed_mask.astype("<u4").view(np.uint8), bitorder="little")
        return bits[:vocab].astype(bool)
    return np.ones(vocab, bool) if row.mask is None else row.mask.copy()


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Random123's philox4x32_R(10, ...) on uint64 arrays holding 32-bit words."""
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64) for c in (c0, c1, c2, c3))
    k0, k1 = np.uint64(k0), np.uint64(k1)
    for r in range(10):
        if r > 0:
            k0 = (k0 + np.uint64(0x9E3779B9)) & M32
            k1 = (k1 + np.uint64(0xBB67AE85)) & M32
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & M32,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & M32)
    return c0, c1


def uniforms_at(seed, row_ids, draws):
    """DRAW-1/2: u = (2m + 1) / 2^53 at each (row id, draw index) pair (uint64 arrays)."""
    row_ids, j = np.asarray(row_ids, np.uint64), np.asarray(draws, np.uint64)
    r0, r1 = philox4x32_10(row_ids & M32, row_ids >> np.uint64(32), j & M32, j >> np.uint64(32),
                           seed & 0xFFFFFFFF, seed >> 32)
    m = ((r0 << np.uint64(32)) | r1) >> np.uint64(12)
    return (2.0 * m.astype(np.float64) + 1.0) / 2.0**53


def uniforms(seed, row_id, first_draw, n):
    """The uniforms of draws first_draw .. first_draw + n - 1 of one row."""
    j = np.arange(n, dtype=np.uint64) + np.uint64(first_draw)
    return uniforms_at(seed, np.full(n, row_id, np.uint64), j)


def validate(r, row):
    """SPEC section 5, in its order; the message names the row, the value and the range."""
    t = row.temperature
    if math.isnan(t) or t < 0 or math.isinf(t):
        raise sp.SamplerError(sp.INVALID_TEMPERATURE,
                              f"row {r}: temperature is {t} (must be finite and >= 0)", r)
    if row.top_k < 0:
        raise sp.SamplerError(sp.INVALID_TOP_K, f"row {r}: top_k is {row.top_k} (must be >= 0; "
                              "0 turns it off)", r)
    if math.isnan(row.top_p) or not 0 < row.top_p <= 1:
        raise sp.SamplerError(sp.INVALID_TOP_P, f"row {r}: top_p is {row.top_p} (must be in "
                              "(0, 1]; 1 turns it off)", r)
    if math.isnan(row.min_p) or not 0 <= row.min_p < 1:
        raise sp.SamplerError(sp.INVALID_MIN_P, f"row {r}: min_p is {row.min_p} (must be in "
                              "[0, 1); 0 turns it off)", r)
    if not (math.isfinite(row.repetition_penalty) and row.repetition_penalty >= 0):
        raise sp.SamplerError(sp.INVALID_PENALTY, f"row {r}: repetition_penalty is "
                              f"{row.repetition_penalty} (must be finite and > 0; 1 or 0 turns "
                              "it off)", r)
    for name in ("presence_penalty", "frequency_penalty"):
        if not math.isfinite(getattr(row, name)):
            raise sp.SamplerError(sp.INVALID_PENALTY, f"row {r}: {name} is "
                                  f"{getattr(row, name)} (must be finite; 0 turns it off)", r)
    if row.seed_mode not in (0, 1, 2):
        raise sp.SamplerError(sp.INVALID_ARGUMENT, f"row {r}: seed_mode is {row.seed_mode} (must "
                              "be 0 (the call's seed), 1 (the row's seed) or 2 (unseeded))", r)
    if row.min_tokens < 0:
        raise sp.SamplerError(sp.INVALID_LOGIT_BIAS, f"row {r}: min_tokens is {row.min_tokens} "
                              "(must be >= 0; 0 turns it off)", r)
    vocab = row.logits.size
    for name in ("prompt_tokens", "output_tokens"):
        ids = getattr(row, name)
        bad = np.flatnonzero((ids < 0) | (ids >= vocab))
        if bad.size:
            j = int(bad[0])
            raise sp.SamplerError(sp.INVALID_PENALTY, f"row {r}: {name}[{j}] is {int(ids[j])} "
                                  f"(must be a token id in [0, {vocab}))", r)
    ids, bias = row.bias_tokens, row.bias_values
    bad = np.flatnonzero((ids < 0) | (ids >= vocab) | np.isnan(bias))
    if bad.size:
        j = int(bad[0])
        raise sp.SamplerError(sp.INVALID_LOGIT_BIAS, f"row {r}: bias {j} (token {int(ids[j])}, "
                              f"bias {float(bias[j])}): a token id must be in [0, {vocab}) and "
                              "a bias not NaN", r)
    if np.unique(ids).size != ids.size:
        raise sp.SamplerError(sp.INVALID_LOGIT_BIAS, f"row {r}: a token has two biases", r)
    if row.min_tokens > 0 and not 0 <= row.eos_token_id < vocab:
        raise sp.SamplerError(sp.INVALID_LOGIT_BIAS, f"row {r}: eos_token_id is "
                              f"{row.eos_token_id} (must be a token id in [0, {vocab}) while "
                              f"min_tokens is {row.min_tokens})", r)
    x = row.logits.astype(np.float64)
    allowed = allowed_tokens(row, x.size)
    allowed[ids[bias == -np.inf]] = False  # BIAS-2: a -inf bias bans as a mask does
    if row.output_tokens.size < row.min_tokens:
        allowed[row.eos_token_id] = False  # MINLEN-1
    nan = np.isnan(x)
    if (nan & allowed).any():
        i = int(np.flatnonzero(nan & allowed)[0])
        raise sp.SamplerError(sp.NAN_LOGIT, f"row {r}: logit {i} is NaN (the NaN policy is "
                              "error)", r)
    support = allowed & ~nan & (x != -np.inf)
    if not support.any():
        raise sp.SamplerError(sp.EMPTY_SUPPORT, f"row {r}: empty support: of {x.size} tokens, "
                              f"{int((~allowed).sum())} masked, "
                              f"{int((allowed & (x == -np.inf)).sum())} -inf, 0 NaN treated as "
                              "masked", r)
    return x, support


def add_bias(row, x):
    """BIAS-1, BIAS-3: the bias added to each finite logit in float64 (never an overflow; a
    +inf bias makes its token +inf); a non-finite logit and a banned token are left as they
    are."""
    ids, bias = row.bias_tokens, row.bias_values.astype(np.float64)
    hit = np.isfinite(x[ids]) & (bias != -np.inf)
    x[ids[hit]] += bias[hit]
    return x


def penalize(row, x):
    """PEN-2 and PEN-3 in float64 on the finite logits of the tokens in the history: the
    repetition penalty divides a positive logit and multiplies a negative one (over the prompt
    and the output), then x - frequency * count - presence (over the output alone)."""
    rep, alpha, beta = row.repetition_penalty, row.frequency_penalty, row.presence_penalty
    if rep not in (0.0, 1.0):
        seen = np.zeros(x.size, bool)
        seen[row.prompt_tokens] = True
        seen[row.output_tokens] = True
        hit = seen & np.isfinite(x)
        x[hit] = np.where(x[hit] > 0, x[hit] / rep, x[hit] * rep)
    if alpha != 0 or beta != 0:
        count = np.bincount(row.output_tokens, minlength=x.size).astype(np.float64)
        hit = (count > 0) & np.isfinite(x)
        x[hit] = x[hit] - alpha * count[hit] - beta
    return x


def distribution(r, row):
    """SEM-1..SEM-7: the final distribution over the vocabulary, float64."""
    x, support = validate(r, row)
    x = penalize(row, add_bias(row, x))  # BIAS-1, PEN-1: these logits replace x below
    m = x[support].max()
    if row.temperature == 0 or m == np.inf:
        # The limits (SEM-3, SEM-4): uniform over the winners; a cut with tied tokens kept never
        # removes a winner, so truncation changes nothing.
        w = (support & (x == m)).astype(np.float64)
        return w / w.sum()
    w = np.zeros(x.size)
    w[support] = np.exp((x[support] - m) / row.temperature)
    kept = support.copy()
    for step in INFO.truncation_order:
        idx = np.flatnonzero(kept)
        if step == "top-k" and 0 < row.top_k < idx.size:
            cut = np.sort(x[idx])[::-1][row.top_k - 1]
            kept &= x >= cut  # ties at the k-th value kept (keep-all)
        elif step == "top-p" and row.top_p < 1:
            order = idx[np.argsort(-x[idx], kind="stable")]
            q = w[order] / w[order].sum()
            before = np.cumsum(q) - q
            last = order[np.flatnonzero(before < row.top_p)[-1]]
            kept &= x >= x[last]
        elif step == "min-p" and row.min_p > 0:
            kept &= w >= row.min_p * w[idx].max()
    p = np.where(kept, w, 0.0)
    return p / p.sum()


def logprobs_of(r, row, mode):
    """SPEC section 20: each token's log-probability in `mode`, float64, -inf outside the
    mode's support."""
    if mode == "raw":  # the logits as given: no mask, bias, penalty or temperature
        x = row.logits.astype(np.float64)
        m = x.max()
        return x - m - np.log(np.exp(x - m).sum())
    if mode == "processed":  # the distribution drawn from
        with np.errstate(divide="ignore"):
            return np.log(distribution(r, row))
    x, support = validate(r, row)  # scaled: SEM-1..SEM-4 before truncation
    x = penalize(row, add_bias(row, x))
    m = x[support].max()
    out = np.full(x.size, -np.inf)
    if row.temperature == 0 or m == np.inf:
        winners = support & (x == m)
        out[winners] = -np.log(winners.sum())
        return out
    z = (x[support] - m) / row.temperature
    out[support] = z - np.log(np.exp(z).sum())
    return out


def probabilities(batch):
    return np.stack([distribution(r, row) for r, row in enumerate(batch.rows)])


def sample(batch, seed, first_draw, draws_per_row, logprobs=None):
    dists = [distribution(r, row) for r, row in enumerate(batch.rows)]  # every row valid first
    out = np.empty((len(batch.rows), draws_per_row), np.int64)
    for r, (row, p) in enumerate(zip(batch.rows, dists)):
        c = np.cumsum(p)
        if row.seed_mode == 2:  # unseeded: the engine's own generator (SEED-3)
            u = np.random.default_rng().random(draws_per_row)
        else:  # the row's own seed (SEED-1) or the call's
            u = uniforms(row.seed if row.seed_mode == 1 else seed, row.row_id, first_draw,
                         draws_per_row)
        tok = np.searchsorted(c, u, side="right")  # the smallest i with u < C_i (DRAW-3)
        out[r] = np.minimum(tok, np.flatnonzero(p > 0)[-1])  # rounding past C_last
    if logprobs is None:
        return out
    # SPEC section 20: each draw's log-probability and each row's top n, most probable first.
    lps = np.stack([logprobs_of(r, row, logprobs.mode) for r, row in enumerate(batch.rows)])
    top = np.argsort(-lps, axis=1, kind="stable")[:, :logprobs.top_n]
    return (out, np.take_along_axis(lps, out, 1), top, np.take_along_axis(lps, top, 1))


def _cdf(w):
    """The running sums of weights w, their total and the last token of positive weight."""
    c = np.cumsum(w)
    positive = np.flatnonzero(w > 0)
    return c, float(c[-1]), int(positive[-1]) if positive.size else -1


def _draw(cdf, u):
    """DRAW-3's inverse CDF: the smallest i with u * total < C_i, the last positive at the end."""
    c, total, last = cdf
    return min(int(np.searchsorted(c, u * total, side="right")), last)


def verify(chains, seed):
    """SPEC section 15 on this sampler's own distributions; rows and draft rows are shared by
    the chains of a request, so each distribution and residual is computed once. Drafts given
    as rows of logits (chain.draft_rows) are this sampler's distributions too. Returns, per
    chain, (emitted tokens, acceptance probabilities min(1, p / q) of the decided positions):
    INFO declares verify-acceptance."""
    sp.check_chains(chains)
    for c, chain in enumerate(chains):
        if len(chain.drafts) > 31:  # slots 0..63 of a draw: 2k + 2 of them
            raise sp.SamplerError(sp.UNSUPPORTED, f"chain {c}: at most 31 drafted tokens, not "
                                  f"{len(chain.drafts)}", c)
    dists, residuals, out = {}, {}, []
    for c, chain in enumerate(chains):
        for row in chain.targets:  # every target row valid before any token (VER-INV-1)
            if id(row) not in dists:
                try:
                    p = distribution(c, row)
                except sp.SamplerError as e:
                    raise sp.SamplerError(e.code, f"chain {c}: {e.message}", c)
                dists[id(row)] = (p.tolist(), p, _cdf(p))
    drafts = {}  # the draft rows' distributions, by row object
    for c, chain in enumerate(chains):
        if chain.draft_rows is None:
            continue
        qs = []
        for j, row in enumerate(chain.draft_rows):
            if id(row) not in drafts:
                try:
                    drafts[id(row)] = distribution(c, row)
                except sp.SamplerError as e:
                    raise sp.SamplerError(e.code, f"chain {c}, draft row {j + 1}: {e.message}", c)
            q = drafts[id(row)]
            if not q[int(chain.drafts[j])] > 0:
                raise sp.SamplerError(sp.INVALID_DRAFT, f"chain {c}, draft {j + 1}: drafted "
                                      f"token {int(chain.drafts[j])} has draft probability 0 "
                                      "under its draft row", c)
            qs.append(q)
        chain.q = qs
    # Every chain's uniforms in one vectorized call: slot s of chain c at 64 x draw + s.
    slots = 2 * max(len(chain.drafts) for chain in chains) + 2
    ids = np.array([chain.row_id for chain in chains], np.uint64)
    base = np.array([64 * chain.draw for chain in chains], np.uint64)
    offsets = np.arange(slots, dtype=np.uint64)
    all_u = uniforms_at(seed, np.repeat(ids, slots),
                        (base[:, None] + offsets[None, :]).reshape(-1)).reshape(-1, slots)
    for chain, u in zip(chains, all_u.tolist()):
        k = len(chain.drafts)
        emitted, acceptance = [], []
        for j in range(k):
            p_list, p, p_cdf = dists[id(chain.targets[j])]
            q, d = chain.q[j], int(chain.drafts[j])
            acceptance.append(min(1.0, p_list[d] / float(q[d])))
            if u[2 * j] * float(q[d]) < p_list[d]:  # accept with probability min(1, p / q)
                emitted.append(d)
                continue
            key = (id(chain.targets[j]), id(q))
            if key not in residuals:
                r = np.maximum(p - q, 0.0)
                # p = q to the last bit leaves the residual empty: the target itself.
                residuals[key] = _cdf(r) if r.sum() > 0 else p_cdf
            emitted.append(_draw(residuals[key], u[2 * j + 1]))
            break
        else:
            emitted.append(_draw(dists[id(chain.targets[k])][2], u[2 * k + 1]))
        out.append((emitted, acceptance))
    return out


def create(config):
    if config is None or config == "":
        return
    if config.startswith("check-config="):
        print(f"numpy_example: config {config[len('check-config='):]!r}", file=sys.stderr)
        return
    raise sp.SamplerError(sp.INVALID_ARGUMENT, f"unknown config '{config}' (known: "
                          "check-config=TEXT)")


if __name__ == "__main__":
    sp.serve(sample, INFO, probabilities_fn=probabilities, create_fn=create, verify_fn=verify)

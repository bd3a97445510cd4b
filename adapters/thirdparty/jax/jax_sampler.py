#!/usr/bin/env python3
"""JAX's sampler as a sampcert protocol server: `jax.random.categorical(key, logits / T)`, with
top-k as the JAX stacks apply it (`jax.lax.top_k`, then categorical over the k kept logits, the
drawn position mapped back through the indices top_k returned), nothing else.

    sampcert run --sampler exec:'/opt/sampcert-thirdparty/venv/bin/python \
        adapters/thirdparty/jax/jax_sampler.py [--dtype bf16|f16]' --profile quick

jax.random.categorical is the Gumbel-max trick: argmax(logits + Gumbel noise), the noise drawn
in the logits' own dtype, V random numbers a draw.

--dtype f32 (default) / bf16 / f16: the variant's dtype, the only one it declares: rows of that
    dtype are computed in it (the division, the noise and the argmax in float32, bf16 or float16,
    as a JAX model's logits of that dtype give them), accuracy fp32 / bf16 / fp16. (Half rows
    upcast to float32 would add nothing to the f32 variant: every half value is exact in float32.)
--mode low (default) / high: categorical's `mode`, the Gumbel noise's precision. JAX's default
    ("low", unless the config use_high_dynamic_range_gumbel is set) makes each noise value from
    one uniform of the dtype's mantissa bits, so float32 noise never exceeds
    -log(-log(1 - 2^-23)) = 15.94 and events below about 1e-7 are drawn at the wrong rate (JAX's
    own docstring says so); "high" combines two uniforms (about 1e-14, twice the cost). The high
    variant's name ends in _high.

Masked tokens are set to -inf (`jnp.where(mask, x, -inf)`) before the division. Draws are
random access (SPEC DRAW-1): draw j of stream (seed, row_id) uses the key
fold_in(fold_in(fold_in(fold_in(key(seed low 32 bits), seed high), row_id low), row_id high), j)
(for j >= 2^32: j's high word folded in before its low word)
(JAX's PRNG is counter-based, so any range of draws can be asked for in any order). Not
declared: temperature 0 (x / 0 is not a distribution; JAX stacks take an argmax branch of their
own), top-p and min-p (the stacks' own code, not JAX's), probabilities (categorical computes
none). JAX raises nothing on NaN, inf or an empty support: argmax returns an index whatever
the noise gives, which is what the suite sees.
"""

import argparse
import functools
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# One server per sampcert worker (--jobs): XLA's Eigen thread pool would oversubscribe the cores.
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
# Every forked worker starts its own server: compiled draws are shared through JAX's persistent
# compilation cache (speed only: a draw is the same function of its key and row either way).
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", "/tmp/sampcert-jax-compilation-cache")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import sampcert_protocol as sp  # noqa: E402
sp.delegate_to_fork_server()  # a fork server's child serves, where one runs (tests)
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

# At most this many noise values (draws x kept tokens) in one call of the compiled function.
CHUNK_ELEMENTS = 1 << 22


def padded(v: int) -> int:
    """The row length the compiled function is traced for: v rounded up to 2^e x {1, 1.25, 1.5,
    1.75} (at most 25% more), so a run compiles a few dozen shapes, not one per vocabulary
    size. The padding is -inf after the division by T (_draws): exp(-inf) = 0 and -inf + noise
    never wins the arg-max unless every entry is -inf, where arg-max returns index 0 either way;
    padded entries come after the row's own, so a NaN's first index is unchanged. The draws are
    distributed as categorical over the row alone (not the same noise values: the noise vector
    is longer)."""
    if v <= 8:
        return 8
    e = (v - 1).bit_length() - 3
    step = 1 << e
    return (v + step - 1) // step * step


def make_info(compute: str, mode: str = "low") -> sp.Info:
    return sp.Info(
        name="jax_categorical" + ("" if compute == "f32" else "_" + compute) +
        ("" if mode == "low" else "_" + mode),
        version=f"jax {jax.__version__}, jaxlib {jax.lib.__version__}",
        capabilities=[compute] +
        ["mask", "top-k", "batch"],
        # jax.lax.top_k keeps exactly k; among equal values the lower index comes first.
        tie_rule="exact-lowest-index", top_k_tie_rule="exact-lowest-index",
        pipeline_order="truncation-first",  # top_k on the logits, then categorical(x / T)
        truncation_order=("top-k", "top-p", "min-p"),
        nan_policy="error",
        determinism="same-seed",
        accuracy=sp.DTYPE_ACCURACY[compute],
        draws="random-access",
        # Gumbel-max: V noise values a draw (threefry bits, two logs, an argmax), 30-65 ns of
        # CPU each on this machine class in mode low, about twice that in mode high or in a half
        # dtype (README.md here), which lets the plan cap the cost of big rows (SPEC STAT-4b).
        draw_cost_ns_per_token=DRAW_COST_NS[mode] * (1.0 if compute == "f32" else 2.0),
    )


# The declared draw cost per token of float32 rows, by mode (README.md here: measured 30-65 ns
# in mode low); bf16 and float16 rows declare twice it (their noise, computed in the half dtype,
# measured 108 and 90 ns per token against float32's 67 at V = 32768, 2026-12-07).
DRAW_COST_NS = {"low": 50.0, "high": 100.0}


def stream_key(seed: int, row_id: int):
    k = jax.random.key(seed & 0xFFFFFFFF)
    for word in (seed >> 32, row_id & 0xFFFFFFFF, row_id >> 32):
        k = jax.random.fold_in(k, word)
    return k


@functools.partial(jax.jit, static_argnames="mode")
def _draws(key, x, v, temperature, indices, mode=None):
    """categorical(fold_in(key, j), x[:v] / T, mode=mode) for each j of indices: x is the row
    padded to a compiled length; the padding is set to -inf after the division, whatever T is.
    mode None is JAX's default (categorical's own choice, "low" unless configured)."""
    z = jnp.where(jnp.arange(x.shape[0]) < v, x / temperature.astype(x.dtype), -jnp.inf)
    lo, hi = indices
    return jax.vmap(lambda a, b: jax.random.categorical(draw_key(key, a, b), z, mode=mode))(lo, hi)


def draw_key(key, lo, hi):
    """Draw j's key: fold_in(key, j) for j < 2^32, fold_in(fold_in(key, j >> 32), j mod 2^32)
    beyond (fold_in takes 32 bits: folding j alone repeated draw 0 at draw 2^32, DRAW-1)."""
    return jnp.where(hi == 0, jax.random.fold_in(key, lo),
                     jax.random.fold_in(jax.random.fold_in(key, hi), lo))


class JaxSampler:
    def __init__(self, compute: str, mode: str = "low"):
        self.compute = compute
        # "low" is JAX's default: the call made without mode=, as users make it.
        self.mode = None if mode == "low" else mode

    def create(self, config):
        if config not in (None, ""):
            raise sp.SamplerError(sp.INVALID_ARGUMENT, f"unknown config '{config}': this "
                                  "sampler takes none (the variant is the command's --dtype)")

    def _logits(self, row):
        """The row in the computation's dtype: the helper hands JAX arrays (arrays="jax"),
        row.logits in float32 and row.native in the row's own dtype."""
        x = row.logits if self.compute == "f32" else row.native
        if row.mask is not None:
            x = jnp.where(row.mask, x, jnp.array(-jnp.inf, x.dtype))
        return x

    def _row(self, r, row, seed, first_draw, n) -> np.ndarray:
        x = self._logits(row)
        keep = None
        if row.top_k != 0 and row.top_k < x.shape[0]:  # 0 is off, k >= V keeps all (SPEC)
            try:
                x, keep = jax.lax.top_k(x, int(row.top_k))
            except ValueError as e:  # JAX's own check: "k argument to top_k must be ..."
                raise sp.SamplerError(sp.INVALID_TOP_K, f"row {r}: jax.lax.top_k: {e}", r)
        v = x.shape[0]
        x = jnp.pad(x, (0, padded(v) - v))
        key = stream_key(seed, row.row_id)
        t = jnp.float32(row.temperature)
        # Draw counts in powers of two (fewer shapes to compile), cut to what was asked.
        per_chunk = max(1, CHUNK_ELEMENTS // max(1, x.shape[0]))
        out = []
        j = first_draw
        while j < first_draw + n:
            m = min(per_chunk, first_draw + n - j)
            size = 1 << (m - 1).bit_length()
            idx = np.arange(j, j + size, dtype=np.uint64)
            halves = (jnp.asarray((idx & 0xFFFFFFFF).astype(np.uint32)),
                      jnp.asarray((idx >> np.uint64(32)).astype(np.uint32)))
            out.append(np.asarray(_draws(key, x, v, t, halves, mode=self.mode))[:m])
            j += m
        tokens = np.concatenate(out) if out else np.empty(0, np.int64)
        if keep is not None:
            tokens = np.asarray(keep)[tokens]
        return tokens.astype(np.int64)

    def sample(self, batch, seed, first_draw, draws_per_row):
        out = np.empty((len(batch.rows), draws_per_row), np.int64)
        for r, row in enumerate(batch.rows):
            out[r] = self._row(r, row, seed, first_draw, draws_per_row)
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", choices=["f32", "bf16", "f16"], default="f32")
    ap.add_argument("--mode", choices=["low", "high"], default="low")
    args = ap.parse_args()
    s = JaxSampler(args.dtype, args.mode)
    sp.serve(s.sample, make_info(args.dtype, args.mode), create_fn=s.create, arrays="jax")


if __name__ == "__main__":
    main()

"""A direct probe of JAX on report rows, outside sampcert: what jax.random.categorical(key,
logits / T) does on each row file (sampcert-row/1), in the compute dtype of the certified
variant.

    /opt/sampcert-thirdparty/venv/bin/python jax_row_probe.py --dtype f32|bf16|f16 ROW_FILE...

Builds the logits from the row's bit patterns (float32 exactly for --dtype f32; the row's own
half type otherwise, as jax_sampler.py's variants do), sets masked tokens to -inf, keeps the
top_k largest with jax.lax.top_k where the row asks for top-k, divides by T in that dtype and
draws 32 tokens with jax.random.categorical (keys fold_in(key(0), j)): plain JAX and numpy, no
sampcert code. Prints one JSON line per row:

  "invalid_temperature_drawn"  1 when T is no valid temperature (T < 0, T = +inf or NaN;
                               SPEC IN-2) and categorical returns a token for each of the 32
                               draws (it raises nothing on any input JAX accepts), else 0
  "nan_drawn"                  1 when an allowed logit is NaN and categorical returns its index
  "empty_support_token_0"      1 when the support is empty (every allowed logit is -inf, or
                               nothing is allowed) and every draw returns token 0
  "pos_inf_lowest"             1 when two or more allowed quotients are +inf and every draw is
                               the lowest-index one
  "inf_quotients"              the allowed finite logits whose quotient logit / T is infinite
  "temperature_rounded_away"   1 when T is finite and > 0 but the compute dtype's T (the
                               variant's x / T divides in the logits' dtype) is 0 or inf
  "flushed_nan"                the allowed finite logits whose quotient is NaN at a finite
                               T > 0 (XLA's CPU flushes a subnormal T or logit to 0: 0 / 0)
  "below_noise_grid"           the allowed tokens whose weight exp((x_i - x_max) / T) (float64,
                               from the compute dtype's quotients) is below 1e-7 of the
                               largest: under mode "low" the float32 Gumbel noise comes from a
                               2^-23 grid of uniforms and never exceeds -log(-log(1 - 2^-23)) =
                               15.94 (checked here with JAX), so such tokens are drawn too
                               rarely or never

adapters/thirdparty/findings.py runs it as the predicate of a JAX finding on the failing rows
the finding claims (findings.json).
"""
import argparse
import json
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

HALF = {"f16": jnp.float16, "bf16": jnp.bfloat16}
DRAWS = 32
# The largest Gumbel value mode "low" can give: -log(-log(u)) at the largest float32 uniform
# below 1 that jax.random.uniform makes (1 - 2^-23), computed by JAX as categorical computes it.
NOISE_CEILING = float(-jnp.log(-jnp.log(jnp.float32(1) - jnp.float32(2.0**-23))))


def logits(row, compute):
    dtype, bits = row["dtype"], row["logit_bits"]
    if dtype == "f32":
        x = np.array(bits, dtype=np.uint32).view(np.float32)
        return jnp.asarray(x) if compute == "f32" else jnp.asarray(x).astype(HALF[compute])
    half = jnp.asarray(np.array(bits, dtype=np.uint16)).view(HALF[dtype])
    return half.astype(jnp.float32) if compute == "f32" else half


def probe(path, compute):
    with open(path) as f:
        row = json.load(f)
    if row.get("format") != "sampcert-row/1":
        raise SystemExit(f"{path}: not a sampcert-row/1 file")
    x = logits(row, compute)
    allowed = np.ones(x.shape[0], dtype=bool)
    if row.get("mask"):
        allowed = np.array(row["mask"], dtype=bool)
        x = jnp.where(jnp.asarray(allowed), x, jnp.array(-jnp.inf, x.dtype))
    index = np.arange(x.shape[0])
    k = int(row.get("top_k", 0))
    if 0 < k < x.shape[0]:
        x, kept = jax.lax.top_k(x, k)
        index = np.asarray(kept)
    t = float(np.array([row["temperature_bits"]], dtype=np.uint32).view(np.float32)[0])
    z = x / jnp.float32(t).astype(x.dtype)
    try:
        draws = [int(index[int(jax.random.categorical(jax.random.fold_in(jax.random.key(0), j),
                                                      z))]) for j in range(DRAWS)]
    except Exception:  # noqa: BLE001  no token: every field that needs one is 0
        draws = []
    xs, zs = np.asarray(x, dtype=np.float32), np.asarray(z, dtype=np.float32)
    kept_allowed = allowed[index]
    nan_tokens = set(index[np.isnan(xs)].tolist())  # masked tokens are -inf by now
    pos_inf = index[(zs == np.inf) & kept_allowed]  # -inf / T < 0 is +inf too: not allowed
    invalid_t = t < 0 or t == float("inf") or t != t
    t_in_dtype = float(jnp.float32(t).astype(x.dtype))
    finite_t = 0 < t < float("inf")
    allowed_finite = np.isfinite(xs) & kept_allowed
    below = 0
    if finite_t and bool(np.isfinite(zs[allowed_finite]).all()) and allowed_finite.any():
        zf = zs[allowed_finite].astype(np.float64)
        below = int(np.sum(np.exp(zf - zf.max()) < 1e-7))
    return {"row": path,
            "invalid_temperature_drawn": int(invalid_t and len(draws) == DRAWS),
            "nan_drawn": int(any(d in nan_tokens for d in draws)),
            "empty_support_token_0": int(bool(np.all(xs == -np.inf)) and len(draws) == DRAWS
                                         and all(d == 0 for d in draws)),
            "pos_inf_lowest": int(pos_inf.size >= 2 and len(draws) == DRAWS
                                  and all(d == pos_inf.min() for d in draws)),
            "inf_quotients": int(np.sum(np.isfinite(xs) & np.isinf(zs) & kept_allowed)),
            "temperature_rounded_away": int(finite_t and t_in_dtype in (0.0, float("inf"))),
            "flushed_nan": int(finite_t and np.sum(allowed_finite & np.isnan(zs))),
            "below_noise_grid": below if NOISE_CEILING < 16 else 0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", choices=["f32", "bf16", "f16"], default="f32")
    ap.add_argument("rows", nargs="+")
    args = ap.parse_args()
    for path in args.rows:
        print(json.dumps(probe(path, args.dtype)))


if __name__ == "__main__":
    main()

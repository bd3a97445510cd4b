#!/usr/bin/env python3
"""PyTorch's own primitives as a sampcert protocol server: torch.softmax(logits / T) then
torch.multinomial with a torch.Generator, nothing else (no validation, no truncation), so
what the suite finds is what these two calls do.

    sampcert run --sampler exec:'/opt/sampcert-thirdparty/venv/bin/python \
        adapters/thirdparty/torch/torch_sampler.py [--dtype bf16|f16] [--draws step]' \
        --profile quick

--dtype f32 (default): every row (f32, f16 or bf16 logits) is upcast to float32 exactly and
    computed in float32; declares f32, f16, bf16 at accuracy fp32.
--dtype bf16 / --dtype f16: rows of that dtype stay in it (division, softmax and multinomial
    in bf16 or float16, as a caller of torch on a half model's logits gets); declares that
    dtype only, accuracy bf16 / fp16. (torch 2.x has CPU kernels for both.)
--draws replacement (default): a row's n draws are one torch.multinomial(p, n,
    replacement=True) call (the inverse-CDF path over a float32 cumulative sum, one double a
    draw).
--draws step: each draw is what one torch.multinomial(p, 1) call makes, as transformers'
    generate calls it once per token (the exponential-trick path: V exponentials in p's dtype,
    then the arg-max of p / q), made in bulk with the same draws (torch_streams.py); it
    declares its cost (V random numbers a draw). Its variants' names end in _step, and each
    declares its own dtype only (--dtype f32 too: half rows upcast to float32 would repeat the
    float32 rows' draws at three times the cost).
The variants are command-line options, not --sampler-config, because they change the
declarations (capabilities, accuracy), which the host reads (info) before create gets the
config. --sampler-config accepts nothing but "" (create refuses anything else, naming it).

Masked tokens are set to -inf (logits.masked_fill(~mask, -inf)) before the division. A
torch error (multinomial: "probability tensor contains either inf, nan or element < 0", ...)
is returned as NUMERICAL_FAILURE with torch's message: torch has one error for NaN logits,
empty support and overflow alike.
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
import sampcert_protocol as sp  # noqa: E402
sp.delegate_to_fork_server()  # a fork server's child serves, where one runs (tests)
import torch  # noqa: E402
import torch_streams  # noqa: E402


# The declared draw cost per vocabulary token of --draws step (the replacement path declares
# none: one double a draw). Measured 2026-12-07 with torch 2.15 on this machine class, one
# thread, V = 32768: 36 ns float32, 41 float16, 40 bf16 of CPU per token.
STEP_DRAW_COST_NS = 40.0


def make_info(compute: str, draws: str = "replacement") -> sp.Info:
    fields = dict(
        name="torch_softmax_multinomial" + ("" if compute == "f32" else "_" + compute) +
        ("_step" if draws == "step" else ""),
        version=f"torch {torch.__version__}",
        capabilities=(["f32", "f16", "bf16"] if compute == "f32" and draws != "step"
                      else [compute]) +
        ["mask", "probabilities", "batch"],
        greedy_tie_break="uniform",  # not declared (no temperature-0): unused
        tie_rule="keep-all",  # no truncation: unused
        pipeline_order="temperature-first",
        nan_policy="error",
        determinism="same-seed",
        accuracy=sp.DTYPE_ACCURACY[compute],
        draws="sequential",  # a torch.Generator per stream (torch_streams.py)
    )
    if draws == "step":
        fields["draw_cost_ns_per_token"] = STEP_DRAW_COST_NS
    return sp.Info(**fields)


class TorchSampler:
    def __init__(self, compute: str, draws: str = "replacement"):
        self.compute = compute
        self.streams = torch_streams.Streams()
        self.draw = self.streams.draw_per_step if draws == "step" else self.streams.draw

    def create(self, config):
        if config not in (None, ""):
            raise sp.SamplerError(sp.INVALID_ARGUMENT, f"unknown config '{config}': this "
                                  "sampler takes none (the variant is the command's --dtype "
                                  "and --draws)")

    def _probs(self, batch, r, row) -> torch.Tensor:
        x = torch_streams.logits_tensor(row, batch.dtype, self.compute)
        if row.mask is not None:
            x = x.masked_fill(torch.from_numpy(~row.mask), float("-inf"))
        try:
            return torch.softmax(x / row.temperature, dim=-1)
        except RuntimeError as e:
            raise sp.SamplerError(sp.NUMERICAL_FAILURE, f"row {r}: torch.softmax: {e}", r)

    def sample(self, batch, seed, first_draw, draws_per_row):
        probs = [self._probs(batch, r, row) for r, row in enumerate(batch.rows)]
        out = np.empty((len(batch.rows), draws_per_row), np.int64)
        for r, (row, p) in enumerate(zip(batch.rows, probs)):
            try:
                out[r] = self.draw(p, seed, row.row_id, first_draw, draws_per_row)
            except RuntimeError as e:
                raise sp.SamplerError(sp.NUMERICAL_FAILURE, f"row {r}: torch.multinomial: "
                                      f"{e}", r)
        return out

    def probabilities(self, batch):
        return np.stack([self._probs(batch, r, row).double().numpy()
                         for r, row in enumerate(batch.rows)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", choices=["f32", "bf16", "f16"], default="f32")
    ap.add_argument("--draws", choices=["replacement", "step"], default="replacement")
    args = ap.parse_args()
    s = TorchSampler(args.dtype, args.draws)
    sp.serve(s.sample, make_info(args.dtype, args.draws), probabilities_fn=s.probabilities,
             create_fn=s.create)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""PyTorch's own primitives as a sampcert protocol server: torch.softmax(logits / T) then
torch.multinomial with a torch.Generator, nothing else (no validation, no truncation), so
what the suite finds is what these two calls do.

    sampcert run --sampler exec:'/opt/sampcert-thirdparty/venv/bin/python \
        adapters/thirdparty/torch/torch_sampler.py [--dtype bf16|f16]' --profile quick

--dtype f32 (default): every row (f32, f16 or bf16 logits) is upcast to float32 exactly and
    computed in float32; declares f32, f16, bf16 at accuracy fp32.
--dtype bf16 / --dtype f16: rows of that dtype stay in it (division, softmax and multinomial
    in bf16 or float16, as a caller of torch on a half model's logits gets); declares that
    dtype only, accuracy bf16 / fp16. (torch 2.x has CPU kernels for both.)
The variant is a command-line option, not --sampler-config, because it changes the
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


def make_info(compute: str) -> sp.Info:
    fields = dict(
        name="torch_softmax_multinomial" + ("" if compute == "f32" else "_" + compute),
        version=f"torch {torch.__version__}",
        capabilities=(["f32", "f16", "bf16"] if compute == "f32" else [compute]) +
        ["mask", "probabilities", "batch"],
        greedy_tie_break="uniform",  # not declared (no temperature-0): unused
        tie_rule="keep-all",  # no truncation: unused
        pipeline_order="temperature-first",
        nan_policy="error",
        determinism="same-seed",
        accuracy=sp.DTYPE_ACCURACY[compute],
        draws="sequential",  # a torch.Generator per stream (torch_streams.py)
    )
    return sp.Info(**fields)


class TorchSampler:
    def __init__(self, compute: str):
        self.compute = compute
        self.streams = torch_streams.Streams()

    def create(self, config):
        if config not in (None, ""):
            raise sp.SamplerError(sp.INVALID_ARGUMENT, f"unknown config '{config}': this "
                                  "sampler takes none (the variant is the command's --dtype)")

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
                out[r] = self.streams.draw(p, seed, row.row_id, first_draw, draws_per_row)
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
    args = ap.parse_args()
    s = TorchSampler(args.dtype)
    sp.serve(s.sample, make_info(args.dtype), probabilities_fn=s.probabilities,
             create_fn=s.create)


if __name__ == "__main__":
    main()

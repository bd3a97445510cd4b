"""Per-stream torch.Generator draws for the sampcert protocol servers over PyTorch.

torch's Generator is stateful: a draw is the next value of a stream, not a function of a draw
index. The servers declare sequential draws (ABI MINOR 1: the host asks each (seed, row_id)
stream for draws 0, 1, 2, ... in order on a handle) and keep one Generator per stream here,
seeded from both seed and row_id.

Two facts of torch's CPU torch.multinomial(p, n, replacement=True) (1.13 and 2.15 alike) make a
stream's draw j independent of how the draws are split into calls (checked by
torch_adapters_test.py):
- with n >= 2 it takes one double from the generator per draw (inverse CDF on the cumulative
  distribution), whatever the vocabulary size;
- with n == 1 it takes another path (the exponential trick: V exponentials, then argmax), so a
  single draw is made as the first of two and the generator is then put back and advanced by
  exactly one double (torch.rand(1, dtype=float64) takes one).
As a consequence the stream can also be positioned at any draw by re-seeding and skipping
doubles, which this module does when a request does not continue its stream (a host older than
ABI MINOR 1, or a replay): cheap, and it keeps DRAW-1 without relying on the host.
"""

import collections

import numpy as np
import torch

MASK64 = (1 << 64) - 1

# sampcert starts one server per worker (--jobs): one intra-op thread each. torch's default (a
# thread per core in every process) oversubscribes the cores, and its thread hand-off then costs
# more than a small row's softmax (measured: 590 us against 16 us for a [1, 3, 64] softmax on
# two loaded cores). One thread also fixes the order of every reduction whatever the machine.
torch.set_num_threads(1)


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def stream_seed(seed: int, row_id: int) -> int:
    """A 64-bit torch seed from (seed, row_id): both matter, neither alone."""
    return _splitmix64(seed ^ _splitmix64(row_id))


class Streams:
    """One torch.Generator per (seed, row_id), with the next draw index it will produce."""

    SKIP_CHUNK = 1 << 20

    def __init__(self, capacity: int = 4096):
        # Least recently used streams are dropped past `capacity`; one asked for again is
        # re-created and skipped ahead, so dropping only costs time.
        self._streams = collections.OrderedDict()
        self._capacity = capacity
        self.repositioned = 0  # requests that did not continue their stream (for tests)

    def _entry(self, seed: int, row_id: int, first_draw: int) -> list:
        """The stream's [generator, next draw index], re-seeded at 0 when it is new or already
        past first_draw (a stream only moves forward); counts a request that does not continue
        it."""
        key = (seed, row_id)
        entry = self._streams.get(key)
        if entry is None or entry[1] > first_draw:
            g = torch.Generator()
            g.manual_seed(stream_seed(seed, row_id))
            entry = [g, 0]
            self._streams[key] = entry
        self._streams.move_to_end(key)
        while len(self._streams) > self._capacity:
            self._streams.popitem(last=False)
        if entry[1] != first_draw:
            self.repositioned += 1
        return entry

    def _generator_at(self, seed: int, row_id: int, first_draw: int) -> torch.Generator:
        entry = self._entry(seed, row_id, first_draw)
        g, pos = entry
        while pos < first_draw:  # one double per skipped draw
            k = min(first_draw - pos, self.SKIP_CHUNK)
            torch.rand(k, dtype=torch.float64, generator=g)
            pos += k
        entry[1] = pos
        return g

    # Per-step draws are made this many noise values (draws x V) at a time at most.
    STEP_CHUNK_ELEMENTS = 1 << 22

    def draw_per_step(self, probs: torch.Tensor, seed: int, row_id: int, first_draw: int,
                      n: int) -> np.ndarray:
        """Like draw, but each draw is what one torch.multinomial(probs, 1) call makes, exactly
        what transformers' generate does per token (the exponential-trick path: V exponentials
        a draw, then an arg-max). The draws are made in bulk, as one multinomial(P, 1) call on
        a matrix P of B copies of the row (B x V at most STEP_CHUNK_ELEMENTS): torch's CPU
        kernel fills P's exponentials row after row from the one generator, so the draws are
        the same as B calls one at a time and do not depend on how they are split (torch 2.15,
        one thread, float32, float16 and bf16: torch_adapters_test.py checks it). Such a stream
        cannot skip cheaply: one that does not continue is re-seeded and its earlier draws
        are made again."""
        entry = self._entry(seed, row_id, first_draw)
        g = entry[0]
        p = probs.reshape(1, -1)
        per_chunk = max(1, self.STEP_CHUNK_ELEMENTS // max(1, p.shape[1]))

        def steps(k):
            out = []
            while k > 0:
                m = min(k, per_chunk)
                out.append(torch.multinomial(p.expand(m, -1).contiguous(), 1, generator=g))
                k -= m
            return torch.cat(out).reshape(-1).numpy().astype(np.int64) if out else \
                np.empty(0, np.int64)

        steps(first_draw - entry[1])
        out = steps(n)
        entry[1] = first_draw + n
        return out

    def draw(self, probs: torch.Tensor, seed: int, row_id: int, first_draw: int,
             n: int) -> np.ndarray:
        """Draws first_draw .. first_draw + n - 1 of the stream from `probs` (1-D, the
        distribution torch.multinomial gets, in its dtype). torch's errors propagate."""
        g = self._generator_at(seed, row_id, first_draw)
        p = probs.reshape(1, -1)
        if n == 0:
            out = torch.empty((1, 0), dtype=torch.long)
        elif n == 1:
            state = g.get_state()
            out = torch.multinomial(p, 2, replacement=True, generator=g)[:, :1]
            g.set_state(state)
            torch.rand(1, dtype=torch.float64, generator=g)
        else:
            out = torch.multinomial(p, n, replacement=True, generator=g)
        self._streams[(seed, row_id)][1] = first_draw + n
        return out.reshape(-1).numpy().astype(np.int64)


def logits_tensor(row, dtype: str, compute: str) -> torch.Tensor:
    """The row's logits as a 1-D tensor: in float32 (exact for every input dtype: what HF's
    generate does with `.float()`) when compute is "f32", else in the input's own half type,
    built from the bit patterns (NaN payloads and -0 unchanged)."""
    if compute == "f32" or dtype == "f32":
        return torch.from_numpy(np.array(row.logits, dtype=np.float32))
    bits = torch.from_numpy(np.array(row.bits, dtype=np.uint16).view(np.int16))
    return bits.view(torch.bfloat16 if dtype == "bf16" else torch.float16)


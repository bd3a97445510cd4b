"""Debugging a failure in this process: the failing row, its reference, the sampler called on it.

    import sampcert
    row = sampcert.load_row("report/row.top_p.f32.top_p_boundary.json")  # a report's row file
    print(sampcert.reference(row))             # what `sampcert reference --row FILE` prints
    sampcert.replay(my_sampler, row, draws=1000).assert_ok()   # my_sampler runs here

load_row returns the protocol.Batch a sampler receives (one row, protocol.Row's fields, decoded
by protocol.decode_logits), so a breakpoint in the sampler sees what it saw in the run.
reference runs the sampcert executable (`sampcert reference --row FILE`), the same exact
reference the suite checks against. replay calls the sampler in this process (no child, no
protocol) and checks its result with the suite's exact checks: an error for an invalid row, and
for a valid one tokens of the right shape, in range and never outside the reference's kept set
(must-drop or outside-support), and no must-keep token expected 30 times or more left undrawn
(by chance: at most e^-30); probabilities, when the sampler has them, finite, non-negative,
summing to 1, above 0 on every must-keep token and 0 outside the kept set. The statistical
checks of a certification need its planned draws: replay shows the counts beside the expected
ones, and `sampcert run` decides.
"""

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from . import protocol

_ROW_FORMAT = "sampcert-row/1"


def _f32(bits: int) -> float:
    return float(np.array([bits], dtype="<u4").view("<f4")[0])


def load_row(path: Union[str, Path]) -> protocol.Batch:
    """A row file (a report's row.*.json, SPEC section 11) as the one-row protocol.Batch a
    sampler's sample(batch, ...) receives: row.logits float32 (exact), row.bits the bit patterns,
    row.mask bool or None, and the row's parameters from their fp32 bit patterns. The batch
    remembers its file (batch.path) for reference()."""
    path = Path(path)
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or data.get("format") != _ROW_FORMAT:
        raise ValueError(f"{path}: not a sampcert row file (format {_ROW_FORMAT})")
    dtype = data["dtype"]
    if dtype not in ("f32", "f16", "bf16"):
        raise ValueError(f"{path}: dtype must be f32, f16 or bf16, not {dtype!r}")
    bits = np.array(data["logit_bits"], dtype="<u4" if dtype == "f32" else "<u2")
    mask = None
    if data.get("mask") is not None:
        mask = np.array(data["mask"], dtype=np.uint8) != 0
        if mask.size != bits.size:
            raise ValueError(f"{path}: mask has {mask.size} entries for {bits.size} logits")
    row = protocol.Row(logits=protocol.decode_logits(bits, dtype), bits=bits, mask=mask,
                       temperature=_f32(data["temperature_bits"]), top_k=int(data["top_k"]),
                       top_p=_f32(data["top_p_bits"]), min_p=_f32(data["min_p_bits"]),
                       row_id=int(data["row_id"]))
    batch = protocol.Batch(dtype, int(bits.size), [row])
    batch.path = path.resolve()
    batch.family = data.get("family", "")
    return batch


def _row_file_of(row) -> Path:
    """The row file for `row` (a path, or a Batch load_row read, or any one-row Batch, written
    to a temporary file in the row file format)."""
    if isinstance(row, (str, os.PathLike)):
        return Path(row)
    path = getattr(row, "path", None)
    if path is not None:
        return Path(path)
    if not isinstance(row, protocol.Batch) or len(row.rows) != 1:
        raise TypeError("a row is a row file's path or a one-row sampcert.protocol.Batch")
    r = row.rows[0]

    def bits(x):
        return int(np.array([x], dtype="<f4").view("<u4")[0])
    data = {"format": _ROW_FORMAT, "dtype": row.dtype, "vocab": row.vocab,
            "temperature_bits": bits(r.temperature), "top_k": int(r.top_k),
            "top_p_bits": bits(r.top_p), "min_p_bits": bits(r.min_p), "row_id": int(r.row_id),
            "logit_bits": [int(b) for b in np.asarray(r.bits)]}
    if r.mask is not None:
        data["mask"] = [int(m) for m in np.asarray(r.mask)]
    fd, name = tempfile.mkstemp(prefix="sampcert-row-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f)
    return Path(name)


class InvalidRow(ValueError):
    """The row is invalid input (SPEC section 3): a correct sampler returns an error for it.
    `code` is the error's name as `sampcert reference` prints it (e.g. InvalidTemperature)."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


@dataclasses.dataclass
class Reference:
    """The exact reference of one row, as `sampcert reference` prints it: the regime, the
    support and kept sizes, per token its logit, probability (float64 of the long double
    printed to 17 digits) and class (must-keep, may-keep, must-drop, outside-support), and
    `text` as printed."""
    regime: str
    support: int
    vocab: int
    kept: int
    logits: np.ndarray
    probabilities: np.ndarray
    classes: List[str]
    text: str

    def allowed(self) -> np.ndarray:
        """Tokens a correct draw may be: must-keep and may-keep (not must-drop, not
        outside-support)."""
        return np.array([c in ("must-keep", "may-keep") for c in self.classes], dtype=bool)

    def __str__(self) -> str:
        return self.text


_POLICY_OPTIONS = (("tie_rule", "--ties"), ("pipeline_order", "--order"),
                   ("nan_policy", "--nan"))


def reference(row, info: Optional[protocol.Info] = None) -> Reference:
    """The exact reference of `row` (a row file's path or a Batch from load_row), under the
    policies `info` declares (tie rule, pipeline order, NaN policy, greedy threshold; default
    SPEC's defaults). Runs `sampcert reference --row FILE`. Raises InvalidRow for invalid input
    (the sampler must then return an error)."""
    from .api import CertifyError, executable
    path = _row_file_of(row)
    argv = [executable(), "reference", "--row", str(path)]
    if info is not None:
        for member, option in _POLICY_OPTIONS:
            argv += [option, str(getattr(info, member))]
        if info.greedy_threshold:
            argv += ["--greedy-threshold", repr(float(info.greedy_threshold))]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode == 1 and proc.stderr.startswith("invalid row ("):
        code = proc.stderr[len("invalid row ("):].split(")", 1)[0]
        raise InvalidRow(proc.stderr.strip(), code)
    if proc.returncode != 0:
        raise CertifyError(f"sampcert reference exited {proc.returncode}: {proc.stderr.strip()}",
                           proc.returncode, proc.stderr)
    lines = proc.stdout.splitlines()
    # "regime: R; support S of V; kept K[; ...]"
    head = [part.strip() for part in lines[0].split(";")]
    regime = head[0].split(":", 1)[1].strip()
    support, _, vocab = head[1].split()[1:4]
    kept = head[2].split()[1]
    logits, probs, classes = [], [], []
    for line in lines[2:]:
        fields = line.split()
        if len(fields) != 4 or not fields[0].isdigit():
            continue  # the draws line
        logits.append(float(fields[1]))
        probs.append(float(fields[2]))
        classes.append(fields[3])
    return Reference(regime=regime, support=int(support), vocab=int(vocab), kept=int(kept),
                     logits=np.array(logits), probabilities=np.array(probs, dtype=np.float64),
                     classes=classes, text=proc.stdout)


@dataclasses.dataclass
class Replay:
    """What replay() saw: the tokens (rows x draws) or the error the sampler raised, the
    reference (None for an invalid row), per token the counts and the expected counts, and
    `problems`, empty when the result passed every exact check."""
    tokens: Optional[np.ndarray]
    error: Optional[BaseException]
    reference: Optional[Reference]
    invalid: Optional[InvalidRow]
    problems: List[str]
    probabilities: Optional[np.ndarray] = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def counts(self) -> np.ndarray:
        if self.tokens is None or self.reference is None:
            return np.zeros(0, dtype=np.int64)
        t = self.tokens.reshape(-1)
        t = t[(t >= 0) & (t < self.reference.vocab)]
        return np.bincount(t, minlength=self.reference.vocab)

    def describe(self, limit: int = 12) -> str:
        lines = ["replay: " + ("passed the exact checks" if self.ok else "FAILED")]
        lines += [f"  {p}" for p in self.problems]
        if self.invalid is not None:
            lines.append(f"  the row is invalid input: {self.invalid}")
        if self.tokens is not None and self.reference is not None:
            n = self.tokens.size
            c = self.counts()
            expected = self.reference.probabilities * n
            order = np.argsort(-(c + expected), kind="stable")[:limit]
            lines.append(f"  {'token':>8} {'drawn':>8} {'expected':>12}  class")
            for i in order:
                if c[i] == 0 and expected[i] == 0:
                    break
                lines.append(f"  {i:>8} {c[i]:>8} {expected[i]:>12.2f}  "
                             f"{self.reference.classes[i]}")
        return "\n".join(lines)

    def assert_ok(self) -> "Replay":
        """Raises AssertionError with describe() unless every exact check passed."""
        __tracebackhide__ = True
        if not self.ok:
            raise AssertionError(self.describe())
        return self

    def __str__(self) -> str:
        return self.describe()


def _functions(sampler):
    """(sample, probabilities or None, create or None, info or None) of a function, a class
    (instantiated with no arguments, as the suite does) or an instance."""
    if isinstance(sampler, type):
        sampler = sampler()
    if hasattr(sampler, "sample") and callable(sampler.sample):
        return (sampler.sample, getattr(sampler, "probabilities", None),
                getattr(sampler, "create", None), getattr(sampler, "info", None))
    if not callable(sampler):
        raise TypeError(f"a sampler is a function or a class with sample(), not "
                        f"{type(sampler).__name__}")
    return sampler, None, None, getattr(sampler, "info", None)


def replay(sampler, row, draws: int = 1000, seed: int = 1, first_draw: int = 0, *,
           info: Optional[protocol.Info] = None, arrays: str = "numpy",
           config: Optional[str] = None) -> Replay:
    """Calls `sampler` (a function f(batch, seed, first_draw, draws_per_row), a class or an
    instance with sample()) in this process on `row` (a row file's path or a Batch from
    load_row) for `draws` draws, and checks the result as the suite's exact checks do. A
    sampler that raises on a valid row raises here (a debugger stops in it); on an invalid row
    it must raise (protocol.SamplerError is the way to return an error). arrays="torch" or
    "jax" hands it tensors as certify(arrays=...) does; config is passed to its create()."""
    batch = row if isinstance(row, protocol.Batch) else load_row(row)
    sample_fn, probabilities_fn, create_fn, own_info = _functions(sampler)
    info = info if info is not None else own_info
    try:
        ref, invalid = reference(batch, info), None
    except InvalidRow as e:
        ref, invalid = None, e
    if create_fn is not None:
        create_fn(config)
    if arrays not in protocol.ARRAYS:
        raise ValueError(f"arrays must be one of {', '.join(protocol.ARRAYS)}, not {arrays!r}")
    given = protocol._TO_ARRAYS[arrays](batch)
    problems: List[str] = []
    if invalid is not None:
        try:
            out = sample_fn(given, seed, first_draw, draws)
        except Exception as e:  # the expected outcome: an error for an invalid row
            return Replay(None, e, None, invalid, [])
        tokens = np.asarray(protocol._as_numpy(out)).reshape(-1)
        problems.append(f"returned {tokens.size} tokens for an invalid row, instead of an error "
                        f"({invalid.code})")
        return Replay(tokens, None, None, invalid, problems)
    out = sample_fn(given, seed, first_draw, draws)  # a bug here raises here
    raw = np.asarray(protocol._as_numpy(out))
    if raw.size != draws:
        problems.append(f"returned {raw.size} tokens, expected 1 x {draws}")
    if raw.dtype.kind not in "iu":
        problems.append(f"returned {raw.dtype} tokens, not integers")
    tokens = raw.astype(np.int64, copy=False).reshape(-1)
    outside = tokens[(tokens < 0) | (tokens >= ref.vocab)]
    if outside.size:
        problems.append(f"{outside.size} tokens outside [0, {ref.vocab}): first {outside[0]}")
    inside = tokens[(tokens >= 0) & (tokens < ref.vocab)]
    allowed = ref.allowed()
    bad = inside[~allowed[inside]]
    if bad.size:
        first = int(bad[0])
        problems.append(f"{bad.size} of {tokens.size} draws outside the reference's kept set: "
                        f"token {first} (logit {ref.logits[first]:g}, reference probability "
                        f"{ref.probabilities[first]:.17g}, {ref.classes[first]})")
    # A must-keep token expected at least 30 times and never drawn: by chance at most e^-30
    # (about 1e-13), so a dropped token, not noise.
    if inside.size == tokens.size and tokens.size:
        expected = ref.probabilities * tokens.size
        counts = np.bincount(inside, minlength=ref.vocab)
        never = np.flatnonzero((counts == 0) & (expected >= 30) &
                               np.array([c == "must-keep" for c in ref.classes]))
        if never.size:
            t = int(never[0])
            problems.append(f"token {t} must be kept (reference probability "
                            f"{ref.probabilities[t]:.6g}, {expected[t]:.1f} draws expected) but "
                            f"was never drawn in {tokens.size}")
    probs = None
    if probabilities_fn is not None:
        probs = np.asarray(protocol._as_numpy(probabilities_fn(given)),
                           dtype=np.float64).reshape(-1)
        if probs.size != ref.vocab:
            problems.append(f"probabilities: {probs.size} values for {ref.vocab} tokens")
        elif not np.all(np.isfinite(probs)) or np.any(probs < 0):
            problems.append("probabilities: a value is not a finite number >= 0")
        else:
            if abs(probs.sum() - 1.0) > 1e-5:
                problems.append(f"probabilities sum to {probs.sum():.9g}, not 1")
            must = np.array([c == "must-keep" for c in ref.classes], dtype=bool)
            lost = np.flatnonzero(must & (probs == 0))
            if lost.size:
                problems.append(f"probabilities: token {lost[0]} must be kept (reference "
                                f"probability {ref.probabilities[lost[0]]:.6g}) but has 0")
            dropped = np.flatnonzero((probs > 0) & ~allowed)
            if dropped.size:
                problems.append(f"probabilities: {dropped.size} tokens outside the kept set "
                                f"have probability > 0: first {dropped[0]} "
                                f"({probs[dropped[0]]:.9g})")
    return Replay(tokens.reshape(1, -1) if tokens.size == draws else tokens, None, ref, None,
                  problems, probs)


def load_sampler(target: str, path: Sequence[str] = ()):
    """The sampler a report names, as the suite's sampler process loads it: TARGET is
    `module:qualname` or `/abs/file.py:qualname` (a file that calls sampcert.certify at its
    top level is loaded up to that call). `path` folders go first on sys.path."""
    from . import api
    for p in reversed([os.fspath(p) for p in path]):
        if p not in sys.path:
            sys.path.insert(0, p)
    where, sep, qualname = target.rpartition(":")
    if not sep or not where or not qualname:
        raise ValueError(f"sampcert: TARGET must be module:qualname or file.py:qualname, not "
                         f"{target!r}")
    if where.endswith(".py") and os.path.isabs(where):
        name = "__sampcert_main__"
        folder = os.path.dirname(where)
        if folder not in sys.path:
            sys.path.insert(0, folder)  # its sibling modules, as when it ran as a script
        spec = importlib.util.spec_from_file_location(name, where)
    else:
        name = where
        spec = importlib.util.find_spec(where)
    if spec is None or spec.loader is None:
        raise ImportError(f"sampcert: cannot find {where} (sys.path: {sys.path})")
    module = sys.modules.get(name) if name != "__sampcert_main__" else None
    if module is None:
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        before = api._IN_SAMPLER_PROCESS
        api._IN_SAMPLER_PROCESS = True
        try:
            spec.loader.exec_module(module)
        except api._StopLoading:
            pass  # the file called sampcert.certify: everything above that call is defined
        finally:
            api._IN_SAMPLER_PROCESS = before
    obj: Any = module
    for part in qualname.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise AttributeError(
                f"sampcert: {where} defines no {qualname} where its loading stopped (a file "
                "that calls sampcert.certify at its top level is loaded up to its first such "
                "call: put several calls under `if __name__ == \"__main__\":`)") from None
    return obj

"""sampcert process protocol, version 1.1: serve a Python sampler to `sampcert --sampler exec:...`.

    import sampcert_protocol as sp

    def sample(batch, seed, first_draw, draws_per_row):
        # batch.rows[r].logits: float32 array (exact for f32/f16/bf16); .mask: bool array or None
        return tokens  # int array, shape (len(batch.rows), draws_per_row)

    sp.serve(sample, info=sp.Info(name="mine", version="1", capabilities=["f32"]))

The wire format is in PROTOCOL.md beside this file. Only numpy is needed. Requests arrive on
fd 3 and replies leave on fd 4 (SAMPCERT_PROTOCOL_FDS), so nothing written to stdout or stderr
can corrupt the protocol; sys.stdout is redirected to stderr as well, which the host keeps (the
last 64 KiB) and shows with failures.
"""

import dataclasses
import os
import struct
import sys
import traceback
from typing import Callable, List, Optional, Sequence, Union

import numpy as np

PROTOCOL_MAJOR = 1
PROTOCOL_MINOR = 1
MAGIC = 0x31504353  # b"SCP1"
INFO, CREATE, SAMPLE, PROBABILITIES, DESTROY = 1, 2, 3, 4, 5
REPLY_OK, REPLY_ERROR = 0, 1

# Status codes: the C ABI's SAMPCERT_STATUS_* (include/sampcert/sampler_abi.h).
INVALID_TEMPERATURE = 1
INVALID_TOP_K = 2
INVALID_TOP_P = 3
INVALID_MIN_P = 4
NAN_LOGIT = 5
EMPTY_SUPPORT = 6
EMPTY_VOCAB = 7
INVALID_ARGUMENT = 8
INTERNAL = 9
NUMERICAL_FAILURE = 10
UNSUPPORTED = 11
VERSION_MISMATCH = 12
OUT_OF_MEMORY = 13

CAPABILITIES = {
    "f32": 1 << 0, "f16": 1 << 1, "bf16": 1 << 2, "mask": 1 << 3, "top-k": 1 << 4,
    "top-p": 1 << 5, "min-p": 1 << 6, "temperature-0": 1 << 7, "probabilities": 1 << 8,
    "batch": 1 << 9,
}
GREEDY = {"uniform": 0, "lowest-index": 1, "any": 2}
TIES = {"keep-all": 0, "exact-lowest-index": 1, "exact-any": 2}
ORDER = {"temperature-first": 0, "truncation-first": 1}
STEPS = {"top-k": 0, "top-p": 1, "min-p": 2}
NAN = {"error": 0, "masked": 1}
DETERMINISM = {"none": 0, "same-seed": 1, "cross-device": 2}
ACCURACY = {"fp32": 0, "bf16": 1, "fp16": 2}
DTYPES = {0: "f32", 1: "f16", 2: "bf16"}

ROW_HEADER = np.dtype([("temperature", "<f4"), ("top_p", "<f4"), ("min_p", "<f4"),
                       ("flags", "<u4"), ("top_k", "<i8"), ("row_id", "<u8")])
ROW_HAS_LOGITS, ROW_HAS_MASK = 1, 2


class SamplerError(Exception):
    """Raise from a sampler function to return an ABI error (code, message naming the row)."""

    def __init__(self, code: int, message: str, row: int = -1):
        super().__init__(message)
        self.code, self.message, self.row = int(code), message, int(row)


class ProtocolError(Exception):
    """The host broke the protocol; the server stops."""


def step_ties(rule: Optional[str]) -> int:
    """SAMPCERT_STEP_TIES_*: 0 keeps tie_rule, else the TIES value plus one."""
    return 0 if rule is None else TIES[rule] + 1


@dataclasses.dataclass
class Info:
    """What the sampler declares: every field of sampcert_sampler_info (SPEC section 4)."""

    name: str
    version: str = "0"
    capabilities: Union[int, Sequence[str]] = ("f32",)
    greedy_tie_break: str = "uniform"
    tie_rule: str = "keep-all"
    pipeline_order: str = "temperature-first"
    truncation_order: Sequence[str] = ("top-k", "top-p", "min-p")
    nan_policy: str = "error"
    greedy_threshold: float = 0.0
    determinism: str = "same-seed"
    accuracy: str = "fp32"
    thread_safe: bool = False
    # Protocol / ABI MINOR 1. The tie rule of one truncation step (None: as tie_rule), e.g.
    # Hugging Face: top_k_tie_rule="keep-all", top_p_tie_rule="exact-any".
    top_k_tie_rule: Optional[str] = None
    top_p_tie_rule: Optional[str] = None
    # A stateful random stream per (seed, row_id): the host asks for each stream's draws in
    # order, from 0, without gaps, and starts a new process to start the streams again (POL-7).
    sequential: bool = False
    # The cost of one draw divided by the vocabulary size, in ns (0: not declared); the plan
    # caps a slow sampler's draws from it (SPEC STAT-6).
    draw_cost_ns_per_token: float = 0.0

    def capability_bits(self) -> int:
        if isinstance(self.capabilities, int):
            return self.capabilities
        return sum(CAPABILITIES[c] for c in set(self.capabilities))

    def encode(self) -> bytes:
        def s(text):
            b = text.encode("utf-8")
            return struct.pack("<I", len(b)) + b
        order = [STEPS[t] for t in self.truncation_order]
        return (struct.pack("<II", PROTOCOL_MAJOR, PROTOCOL_MINOR) + s(self.name) +
                s(self.version) +
                struct.pack("<Iiii3iifiii", self.capability_bits(),
                            GREEDY[self.greedy_tie_break], TIES[self.tie_rule],
                            ORDER[self.pipeline_order], *order, NAN[self.nan_policy],
                            self.greedy_threshold, DETERMINISM[self.determinism],
                            ACCURACY[self.accuracy], 1 if self.thread_safe else 0) +
                struct.pack("<iiIf", step_ties(self.top_k_tie_rule),
                            step_ties(self.top_p_tie_rule), 1 if self.sequential else 0,
                            self.draw_cost_ns_per_token))


@dataclasses.dataclass
class Row:
    """One row. `logits` holds the exact values as float32 (f16 and bf16 are exact in it);
    `bits` the raw bit patterns (uint32 for f32, uint16 otherwise)."""

    logits: np.ndarray
    bits: np.ndarray
    mask: Optional[np.ndarray]  # bool, True = allowed; None = all allowed
    temperature: float
    top_k: int
    top_p: float
    min_p: float
    row_id: int


@dataclasses.dataclass
class Batch:
    dtype: str  # "f32", "f16" or "bf16"
    vocab: int
    rows: List[Row]


def decode_logits(bits: np.ndarray, dtype: str) -> np.ndarray:
    """Bit patterns to exact float32 values."""
    if dtype == "f32":
        return bits.view("<f4").astype(np.float32)
    if dtype == "f16":
        return bits.view("<f2").astype(np.float32)
    return (bits.astype(np.uint32) << 16).view(np.float32)  # bf16: the upper half of a binary32


def decode_batch(payload: memoryview) -> Batch:
    if len(payload) < 24:
        raise ProtocolError("batch header truncated")
    code, _, vocab, num_rows = struct.unpack_from("<iIQQ", payload, 0)
    if code not in DTYPES:
        raise SamplerError(INVALID_ARGUMENT, f"unknown dtype {code} (0 = f32, 1 = f16, 2 = bf16)")
    dtype = DTYPES[code]
    off = 24
    need = num_rows * ROW_HEADER.itemsize
    if len(payload) < off + need:
        raise ProtocolError("row headers truncated")
    heads = np.frombuffer(payload, ROW_HEADER, num_rows, off)
    off += need
    esize = 4 if dtype == "f32" else 2
    rows = []
    bits_list = []
    for h in heads:
        if h["flags"] & ROW_HAS_LOGITS:
            n = vocab * esize
            bits_list.append(np.frombuffer(payload, "<u4" if esize == 4 else "<u2", vocab, off))
            off += n
        else:
            bits_list.append(None)
    for i, h in enumerate(heads):
        mask = None
        if h["flags"] & ROW_HAS_MASK:
            mask = np.frombuffer(payload, np.uint8, vocab, off) != 0
            off += vocab
        bits = bits_list[i]
        if vocab == 0 or bits is None:
            raise SamplerError(EMPTY_VOCAB, f"row {i}: no logits (vocab size {vocab}, "
                               f"{'no' if bits is None else 'a'} logits buffer)", i)
        rows.append(Row(decode_logits(bits, dtype), bits, mask, float(h["temperature"]),
                        int(h["top_k"]), float(h["top_p"]), float(h["min_p"]),
                        int(h["row_id"])))
    if off != len(payload):
        raise ProtocolError(f"batch is {len(payload)} bytes, expected {off}")
    return Batch(dtype, vocab, rows)


class _Connection:
    def __init__(self, rfd: int, wfd: int):
        self.rfd, self.wfd = rfd, wfd

    def read_exact(self, n: int) -> Optional[bytearray]:
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            k = os.readv(self.rfd, [view[got:]])
            if k == 0:
                if got == 0:
                    return None
                raise ProtocolError("the host closed the pipe in the middle of a request")
            got += k
        return buf

    def write(self, kind: int, payload: bytes) -> None:
        data = memoryview(struct.pack("<IIQ", MAGIC, kind, len(payload)) + bytes(payload))
        while data:
            data = data[os.write(self.wfd, data):]

    def error(self, code: int, message: str, row: int = -1) -> None:
        msg = message.encode("utf-8", "replace")[:60000]
        self.write(REPLY_ERROR, struct.pack("<iiqI", code, 0, row, len(msg)) + msg)


SampleFn = Callable[[Batch, int, int, int], "np.ndarray"]


def serve(sample_fn: SampleFn, info: Info,
          probabilities_fn: Optional[Callable[[Batch], "np.ndarray"]] = None,
          create_fn: Optional[Callable[[Optional[str]], None]] = None) -> None:
    """Answers the host's requests until it closes the pipe or sends DESTROY, then returns.

    sample_fn(batch, seed, first_draw, draws_per_row) returns the tokens, shape
    (rows, draws_per_row): entry [r, j] is row r's draw number first_draw + j under seed.
    probabilities_fn(batch) returns shape (rows, vocab) float64 (declare "probabilities").
    create_fn(config) receives --sampler-config (None when not given) once, before any sample.
    Raise SamplerError for an error value; any other exception is returned as INTERNAL with its
    traceback's last line (and printed in full to stderr, which the host shows).
    """
    fds = os.environ.get("SAMPCERT_PROTOCOL_FDS")
    if not fds:
        sys.stderr.write("this is a sampcert protocol server: run it as\n"
                         "  sampcert info --sampler exec:'python3 " + " ".join(sys.argv) + "'\n")
        sys.exit(2)
    rfd, wfd = (int(x) for x in fds.split(","))
    # Belt and braces: the host already sends stdout to the kept stderr pipe.
    sys.stdout = sys.stderr
    conn = _Connection(rfd, wfd)
    created = False
    while True:
        head = conn.read_exact(16)
        if head is None:
            return  # the host is gone or done
        magic, kind, length = struct.unpack("<IIQ", head)
        if magic != MAGIC:
            raise ProtocolError(f"bad magic {magic:#x}")
        payload = conn.read_exact(length) if length else bytearray()
        if payload is None:
            raise ProtocolError("the host closed the pipe in the middle of a request")
        view = memoryview(payload)
        try:
            if kind == INFO:
                major, _minor = struct.unpack_from("<II", view, 0)
                if major != PROTOCOL_MAJOR:
                    raise SamplerError(VERSION_MISMATCH,
                                       f"the host speaks protocol {major}; this helper speaks "
                                       f"{PROTOCOL_MAJOR}.{PROTOCOL_MINOR}")
                conn.write(REPLY_OK, info.encode())
            elif kind == CREATE:
                has, n = struct.unpack_from("<II", view, 0)
                config = bytes(view[8:8 + n]).decode("utf-8") if has else None
                if created:
                    raise SamplerError(INVALID_ARGUMENT, "create: one instance per process")
                if create_fn is not None:
                    create_fn(config)
                created = True
                conn.write(REPLY_OK, b"")
            elif kind == SAMPLE:
                seed, first, draws = struct.unpack_from("<QQQ", view, 0)
                batch = decode_batch(view[24:])
                out = np.asarray(sample_fn(batch, seed, first, draws))
                if out.size != len(batch.rows) * draws:
                    raise SamplerError(INTERNAL, f"sample_fn returned {out.size} tokens, "
                                       f"expected {len(batch.rows)} x {draws}")
                conn.write(REPLY_OK, np.ascontiguousarray(out, "<i8").tobytes())
            elif kind == PROBABILITIES:
                if probabilities_fn is None:
                    raise SamplerError(UNSUPPORTED,
                                       "probabilities: this sampler serves no probabilities_fn")
                batch = decode_batch(view)
                out = np.asarray(probabilities_fn(batch), dtype="<f8")
                if out.size != len(batch.rows) * batch.vocab:
                    raise SamplerError(INTERNAL, f"probabilities_fn returned {out.size} values, "
                                       f"expected {len(batch.rows)} x {batch.vocab}")
                conn.write(REPLY_OK, np.ascontiguousarray(out).tobytes())
            elif kind == DESTROY:
                conn.write(REPLY_OK, b"")
                return
            else:
                raise ProtocolError(f"unknown request kind {kind}")
        except SamplerError as e:
            conn.error(e.code, e.message, e.row)
        except ProtocolError:
            raise
        except MemoryError:
            conn.error(OUT_OF_MEMORY, "out of memory")
        except Exception as e:  # a bug in the sampler: an error value, never a dead protocol
            traceback.print_exc(file=sys.stderr)
            where = traceback.extract_tb(e.__traceback__)[-1]
            conn.error(INTERNAL, f"{type(e).__name__}: {e} (at {os.path.basename(where.filename)}"
                       f":{where.lineno})")

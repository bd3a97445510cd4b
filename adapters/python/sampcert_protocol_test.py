"""Tests of the Python protocol helper and the numpy example, speaking the protocol from Python
(the C++ host's side is tested by tests/exec_sampler_test.py).

Run: python3 -m unittest discover -s adapters/python -p '*_test.py'
(with SAMPCERT=path/to/sampcert, DeclarationsTest checks the helper against the C++ tables)
"""

import dataclasses
import json
import os
import struct
import subprocess
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "examples"))
import sampcert_protocol as sp  # noqa: E402
import numpy_sampler as ex  # noqa: E402

SERVER = r"""
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import sampcert_protocol as sp
seen = {}
def create(config):
    seen["config"] = config
def sample(batch, seed, first, draws):
    r = batch.rows[0]
    if r.temperature == 7:
        print("a stray print on stdout")
        raise sp.SamplerError(sp.INVALID_TOP_P, "row 0: top_p is 1.5 (must be in (0, 1])", 0)
    if r.temperature == 8:
        return 1 // 0
    if r.temperature == 9:
        return np.zeros(3)
    # Echo what arrived: the logits' values, the mask, the row fields, the config.
    out = [float(v) for v in r.logits] + [-1 if r.mask is None else int(r.mask.sum()),
           r.top_k, r.row_id, seed, first, draws, len(seen["config"] or "")]
    return np.array(out, dtype=np.int64)[None, :draws]
sp.serve(sample, sp.Info(name="echo", version="9", capabilities=["f32", "bf16", "mask"],
                         tie_rule="exact-any", truncation_order=("min-p", "top-k", "top-p"),
                         greedy_threshold=0.5, thread_safe=True, top_p_tie_rule="keep-all",
                         greedy_tie_break="any", draws="sequential",
                         draw_cost_ns_per_token=12.5), create_fn=create)
"""


class Host:
    """The host's side of the protocol, in Python."""

    def __init__(self, code):
        self.req_r, self.req_w = os.pipe()
        self.rep_r, self.rep_w = os.pipe()
        env = dict(os.environ, SAMPCERT_PROTOCOL_FDS=f"{self.req_r},{self.rep_w}")
        self.proc = subprocess.Popen([sys.executable, "-c", code, HERE], env=env,
                                     pass_fds=(self.req_r, self.rep_w), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        os.close(self.req_r)
        os.close(self.rep_w)

    def call(self, kind, payload=b""):
        os.write(self.req_w, struct.pack("<IIQ", sp.MAGIC, kind, len(payload)) + payload)
        head = self._read(16)
        magic, reply, n = struct.unpack("<IIQ", head)
        assert magic == sp.MAGIC
        body = self._read(n)
        if reply == sp.REPLY_ERROR:
            code, _, row, mlen = struct.unpack_from("<iiqI", body)
            return ("error", code, row, body[20:20 + mlen].decode())
        return ("ok", body)

    def _read(self, n):
        data = b""
        while len(data) < n:
            chunk = os.read(self.rep_r, n - len(data))
            if not chunk:
                raise EOFError("server closed")
            data += chunk
        return data

    def close(self):
        os.close(self.req_w)
        out, err = self.proc.communicate(timeout=20)
        os.close(self.rep_r)
        return self.proc.returncode, out, err


def batch(dtype, bits, mask=None, temperature=1.0, top_k=0, row_id=5):
    code = {"f32": 0, "f16": 1, "bf16": 2}[dtype]
    vocab = len(bits)
    flags = sp.ROW_HAS_LOGITS | (sp.ROW_HAS_MASK if mask is not None else 0)
    out = struct.pack("<iIQQ", code, 0, vocab, 1)
    out += struct.pack("<fffIqQ", temperature, 1.0, 0.0, flags, top_k, row_id)
    out += np.asarray(bits, "<u4" if dtype == "f32" else "<u2").tobytes()
    if mask is not None:
        out += bytes(mask)
    return out


class ProtocolTest(unittest.TestCase):
    def setUp(self):
        self.host = Host(SERVER)

    def tearDown(self):
        if self.host.proc.poll() is None:
            self.host.close()

    def test_info_carries_every_field(self):
        kind, body = self.host.call(sp.INFO, struct.pack("<II", 1, 0))
        self.assertEqual(kind, "ok")
        major, minor, n = struct.unpack_from("<III", body)
        self.assertEqual((major, minor), (1, 8))
        self.assertEqual(body[12:12 + n], b"echo")
        off = 12 + n
        (m,) = struct.unpack_from("<I", body, off)
        self.assertEqual(body[off + 4:off + 4 + m], b"9")
        fields = struct.unpack_from("<Iiii3iifiii", body, off + 4 + m)
        self.assertEqual(fields, (1 | 4 | 8, 2, 2, 0, 2, 0, 1, 0, 0.5, 1, 0, 1))
        # Protocol MINOR 1: per-step tie rules (top-k as declared, top-p keep-all = 1),
        # draw mode sequential, draw cost.
        extra = struct.unpack_from("<iiIf", body, off + 4 + m + 48)
        self.assertEqual(extra, (0, 1, 1, 12.5))
        # Protocol MINOR 3: the verify scheme (exact) and its two parameters.
        verify = struct.unpack_from("<iff", body, off + 4 + m + 64)
        self.assertEqual(verify, (0, 0.0, 0.0))
        # Protocol MINOR 4: the penalty history policies, as Info defaults them
        # (repetition sees prompt and output: 0; presence/frequency the output only: 1).
        history = struct.unpack_from("<ii", body, off + 4 + m + 76)
        self.assertEqual(history, (0, 1))
        self.assertEqual(len(body), off + 4 + m + 48 + 16 + 12 + 8)

    def test_host_of_another_major_is_refused(self):
        self.assertEqual(self.host.call(sp.INFO, struct.pack("<II", 2, 0))[:2],
                         ("error", sp.VERSION_MISMATCH))

    def test_sample_sees_exact_values_mask_fields_and_config(self):
        self.assertEqual(self.host.call(sp.CREATE, struct.pack("<II", 1, 5) + b"hello")[0], "ok")
        # bf16 0x4040 = 3.0, 0xc000 = -2.0; mask allows 2 of 3.
        req = struct.pack("<QQQ", 11, 3, 10) + batch("bf16", [0x4040, 0xC000, 0x3F80],
                                                     mask=[1, 0, 1], top_k=2, row_id=42)
        reply = self.host.call(sp.SAMPLE, req)
        self.assertEqual(reply[0], "ok", reply)
        got = list(np.frombuffer(reply[1], "<i8"))
        self.assertEqual(got, [3, -2, 1, 2, 2, 42, 11, 3, 10, 5])

    def test_errors_are_values_and_stdout_cannot_corrupt(self):
        self.host.call(sp.CREATE, struct.pack("<II", 0, 0))
        req = struct.pack("<QQQ", 1, 0, 1) + batch("f32", [0x3F800000], temperature=7)
        self.assertEqual(self.host.call(sp.SAMPLE, req),
                         ("error", sp.INVALID_TOP_P, 0, "row 0: top_p is 1.5 (must be in (0, 1])"))
        req = struct.pack("<QQQ", 1, 0, 1) + batch("f32", [0x3F800000], temperature=8)
        kind, code, row, msg = self.host.call(sp.SAMPLE, req)
        self.assertEqual((kind, code, row), ("error", sp.INTERNAL, -1))
        self.assertIn("ZeroDivisionError", msg)
        req = struct.pack("<QQQ", 1, 0, 1) + batch("f32", [0x3F800000], temperature=9)
        self.assertEqual(self.host.call(sp.SAMPLE, req)[:2], ("error", sp.INTERNAL))
        self.assertEqual(self.host.call(sp.DESTROY), ("ok", b""))
        rc, out, err = self.host.close()
        self.assertEqual(rc, 0)
        self.assertIn(b"a stray print on stdout", err)  # redirected to stderr
        self.assertEqual(out, b"")

    def test_missing_logits_is_empty_vocab(self):
        payload = struct.pack("<QQQ", 1, 0, 1) + struct.pack("<iIQQ", 0, 0, 0, 1)
        payload += struct.pack("<fffIqQ", 1.0, 1.0, 0.0, 0, 0, 0)
        self.assertEqual(self.host.call(sp.SAMPLE, payload)[:3], ("error", sp.EMPTY_VOCAB, 0))

    def test_without_the_host_it_explains_itself(self):
        env = {k: v for k, v in os.environ.items() if k != "SAMPCERT_PROTOCOL_FDS"}
        p = subprocess.run([sys.executable, "-c", SERVER, HERE], env=env, capture_output=True,
                           timeout=20)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"sampcert protocol server", p.stderr)


def batch15(bits, prompt=(), output=(), repetition=1.0, presence=0.0, frequency=0.0, seed=0,
            seed_mode=0, header_bytes=80):
    """A protocol 1.5 batch of one f32 row with its penalties, seed and history."""
    out = struct.pack("<iIQQ", 0, header_bytes, len(bits), 1)
    out += struct.pack("<fffIqQfff4xQqQQ", 1.0, 1.0, 0.0, sp.ROW_HAS_LOGITS, 0, 3, repetition,
                       presence, frequency, seed, seed_mode, len(prompt), len(output))
    out += np.asarray(bits, "<u4").tobytes()
    return out + np.asarray(list(prompt) + list(output), "<i8").tobytes()


class Protocol15Test(unittest.TestCase):
    """Protocol 1.5's row header (80 bytes, its size in the batch header) and history."""

    def test_penalties_seed_and_history_arrive(self):
        b = sp.decode_batch(memoryview(batch15([0x3F800000, 0], prompt=[1], output=[0, 1, 1],
                                                repetition=2.0, presence=-0.5, frequency=0.25,
                                                seed=2**64 - 1, seed_mode=1)))
        r = b.rows[0]
        self.assertEqual((r.repetition_penalty, r.presence_penalty, r.frequency_penalty),
                         (2.0, -0.5, 0.25))
        self.assertEqual((r.seed, r.seed_mode, r.row_id), (2**64 - 1, 1, 3))
        self.assertEqual(list(r.prompt_tokens), [1])
        self.assertEqual(list(r.output_tokens), [0, 1, 1])
        self.assertEqual(r.output_tokens.dtype, np.int64)

    def test_a_14_host_batch_reads_the_defaults(self):
        # 1.4: row_header_bytes 0 means 32-byte headers; the later fields are their defaults.
        b = sp.decode_batch(memoryview(batch("f32", [0x3F800000, 0])))
        r = b.rows[0]
        self.assertEqual((r.repetition_penalty, r.presence_penalty, r.frequency_penalty),
                         (1.0, 0.0, 0.0))
        self.assertEqual((r.seed, r.seed_mode), (0, 0))
        self.assertEqual((len(r.prompt_tokens), len(r.output_tokens)), (0, 0))

    def test_malformed_batches_are_protocol_errors(self):
        whole = batch15([0x3F800000, 0], prompt=[1], output=[0])
        with self.assertRaisesRegex(sp.ProtocolError, "output_tokens truncated"):
            sp.decode_batch(memoryview(whole[:-8]))
        with self.assertRaisesRegex(sp.ProtocolError, "batch is"):
            sp.decode_batch(memoryview(whole + b"\0" * 8))
        with self.assertRaisesRegex(sp.ProtocolError, "row headers of 40 bytes"):
            sp.decode_batch(memoryview(batch15([0x3F800000], header_bytes=40)))


def batch16(bits, bias=(), min_tokens=0, eos=0, output=(), header_bytes=104):
    """A protocol 1.6 batch of one f32 row with its logit bias, minimum length and output."""
    out = struct.pack("<iIQQ", 0, header_bytes, len(bits), 1)
    out += struct.pack("<fffIqQfff4xQqQQqqQ", 1.0, 1.0, 0.0, sp.ROW_HAS_LOGITS, 0, 3, 1.0, 0.0,
                       0.0, 0, 0, 0, len(output), min_tokens, eos, len(bias))
    out += np.asarray(bits, "<u4").tobytes() + np.asarray(list(output), "<i8").tobytes()
    out += np.asarray([t for t, _ in bias], "<i8").tobytes()
    return out + np.asarray([b for _, b in bias], "<f4").tobytes()


def batch18_packed(vocab, words):
    """A protocol 1.8 batch of one f32 row of zeros whose mask is the packed `words`."""
    out = struct.pack("<iIQQ", 0, 104, vocab, 1)
    flags = sp.ROW_HAS_LOGITS | sp.ROW_HAS_MASK | sp.ROW_MASK_PACKED
    out += struct.pack("<fffIqQfff4xQqQQqqQ", 1.0, 1.0, 0.0, flags, 0, 3, 1.0, 0.0, 0.0, 0, 0,
                       0, 0, 0, 0, 0)
    return out + np.zeros(vocab, "<u4").tobytes() + np.asarray(words, "<u4").tobytes()


class Protocol18Test(unittest.TestCase):
    """Protocol 1.8: a row flag says the mask is ceil(V / 32) packed u32 words."""

    def test_packed_words_arrive_and_the_example_reads_them_in_bit_order(self):
        # V = 40: tokens 0-3, 9, 17 of word 0 and 33, 39 (bits 1 and 7 of word 1) allowed; the
        # 24 padding bits of word 1 set, as the host sends them.
        w0 = 0b1111 | 1 << 9 | 1 << 17
        w1 = 1 << 1 | 1 << 7 | 0xFFFFFF00
        r = sp.decode_batch(memoryview(batch18_packed(40, [w0, w1]))).rows[0]
        self.assertIsNone(r.mask)
        self.assertEqual(r.packed_mask.dtype, np.dtype("<u4"))
        self.assertEqual(list(r.packed_mask), [w0, w1])
        self.assertEqual(list(np.flatnonzero(ex.allowed_tokens(r, 40))),
                         [0, 1, 2, 3, 9, 17, 33, 39])
        np.testing.assert_allclose(ex.distribution(0, r)[[0, 9, 39]], [0.125] * 3)

    def test_a_truncated_packed_mask_is_a_protocol_error(self):
        whole = batch18_packed(33, [1, 1])
        with self.assertRaisesRegex(sp.ProtocolError, "row packed mask truncated"):
            sp.decode_batch(memoryview(whole[:-4]))
        with self.assertRaisesRegex(sp.ProtocolError, "batch is"):
            sp.decode_batch(memoryview(whole + b"\0" * 4))


class Protocol16Test(unittest.TestCase):
    """Protocol 1.6's row header (104 bytes) and the bias after the history."""

    def test_bias_and_minimum_length_arrive(self):
        b = sp.decode_batch(memoryview(batch16([0x3F800000, 0, 0], bias=[(2, -np.inf), (0, 0.5)],
                                               min_tokens=4, eos=1, output=[2])))
        r = b.rows[0]
        self.assertEqual((r.min_tokens, r.eos_token_id, r.row_id), (4, 1, 3))
        self.assertEqual(list(r.bias_tokens), [2, 0])
        self.assertEqual(r.bias_tokens.dtype, np.int64)
        self.assertEqual(list(r.bias_values), [-np.inf, 0.5])
        self.assertEqual(r.bias_values.dtype, np.float32)
        self.assertEqual(list(r.output_tokens), [2])

    def test_a_15_host_batch_reads_the_defaults(self):
        b = sp.decode_batch(memoryview(batch15([0x3F800000, 0], output=[1])))
        r = b.rows[0]
        self.assertEqual((r.min_tokens, r.eos_token_id, len(r.bias_tokens), len(r.bias_values)),
                         (0, 0, 0, 0))
        self.assertEqual(list(r.output_tokens), [1])

    def test_a_truncated_bias_is_a_protocol_error(self):
        whole = batch16([0x3F800000, 0], bias=[(1, 1.0)])
        with self.assertRaisesRegex(sp.ProtocolError, "row bias truncated"):
            sp.decode_batch(memoryview(whole[:-4]))
        with self.assertRaisesRegex(sp.ProtocolError, "batch is"):
            sp.decode_batch(memoryview(whole + b"\0" * 4))

    def test_numpy_example_bias_semantics(self):
        def biased(logits, bias, min_tokens=0, eos=0, output=(), mask=None):
            r = row(logits, mask)
            r.bias_tokens = np.asarray([t for t, _ in bias], np.int64)
            r.bias_values = np.asarray([b for _, b in bias], np.float32)
            r.min_tokens, r.eos_token_id = min_tokens, eos
            r.output_tokens = np.asarray(output, np.int64)
            return r

        # BIAS-1: the bias is added before temperature (T = 0.5 doubles it): 0 + ln 3 / 2.
        r = biased([0.0, 0.0], [(1, np.log(3.0) / 2)])
        r.temperature = 0.5
        np.testing.assert_allclose(ex.distribution(0, r), [0.25, 0.75])
        # BIAS-2: -inf bans, even a NaN or +inf logit; +inf makes its token win; -inf stays out.
        np.testing.assert_allclose(
            ex.distribution(0, biased([np.nan, np.inf, 1.0], [(0, -np.inf), (1, -np.inf)])),
            [0, 0, 1])
        np.testing.assert_allclose(
            ex.distribution(0, biased([-np.inf, 5.0, 1.0], [(0, np.inf), (2, np.inf)])),
            [0, 0, 1])
        # BIAS-3: the sum in float64, never an overflow.
        np.testing.assert_allclose(
            ex.distribution(0, biased([3e38, 3e38], [(0, 3e38), (1, 3e38 - 1e32)])),
            [1, 0], atol=1e-300)
        # MINLEN-1: eos banned while the output is shorter than min_tokens, then allowed.
        np.testing.assert_allclose(ex.distribution(0, biased([5.0, 0.0], [], 2, 0, [1])), [0, 1])
        np.testing.assert_allclose(ex.distribution(0, biased([0.0, 0.0], [], 2, 0, [1, 1])),
                                   [.5, .5])
        # INV-9, each by name; a ban of the only token is EMPTY_SUPPORT.
        for bias, kwargs in [([(2, 1.0)], {}), ([(0, np.nan)], {}), ([(0, 1.0), (0, 2.0)], {}),
                             ([], dict(min_tokens=1, eos=5)), ([], dict(min_tokens=-1))]:
            with self.assertRaises(sp.SamplerError) as e:
                ex.distribution(1, biased([0.0, 1.0], bias, **kwargs))
            self.assertEqual((e.exception.code, e.exception.row), (sp.INVALID_LOGIT_BIAS, 1))
        with self.assertRaises(sp.SamplerError) as e:
            ex.distribution(0, biased([0.0, 1.0], [(1, -np.inf)], mask=[0, 1]))
        self.assertEqual(e.exception.code, sp.EMPTY_SUPPORT)


def row(logits, mask=None, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, row_id=0):
    x = np.asarray(logits, np.float32)
    return sp.Row(x, x.view(np.uint32), None if mask is None else np.asarray(mask, bool),
                  temperature, top_k, top_p, min_p, row_id)


class NumpyExampleTest(unittest.TestCase):
    def test_philox_known_answers(self):
        # Random123's kat_vectors for philox4x32_10 (first two words).
        got = ex.philox4x32_10([0], [0], [0], [0], 0, 0)
        self.assertEqual((int(got[0][0]), int(got[1][0])), (0x6627E8D5, 0xE169C58D))
        f = 0xFFFFFFFF
        got = ex.philox4x32_10([f], [f], [f], [f], f, f)
        self.assertEqual((int(got[0][0]), int(got[1][0])), (0x408F276D, 0x41C83B0E))

    def test_distribution_semantics(self):
        p = ex.distribution(0, row([0.0, np.log(3.0)]))
        np.testing.assert_allclose(p, [0.25, 0.75])
        # top-k 1 with a tie at the cut keeps both (keep-all).
        np.testing.assert_allclose(ex.distribution(0, row([1, 1, 0], top_k=1)), [.5, .5, 0])
        # top-p: masses .5 .3 .2; p = .6 keeps the first two, renormalized.
        x = np.log([0.5, 0.3, 0.2])
        np.testing.assert_allclose(ex.distribution(0, row(x, top_p=0.6)), [.625, .375, 0])
        # min-p .5 keeps q >= .25 of the max: .5 and .3.
        np.testing.assert_allclose(ex.distribution(0, row(x, min_p=0.5)), [.625, .375, 0])
        # T = 0: uniform over the allowed arg-max; +inf wins at T > 0.
        np.testing.assert_allclose(ex.distribution(0, row([2, 2, 2], [1, 0, 1], 0.0)),
                                   [.5, 0, .5])
        np.testing.assert_allclose(ex.distribution(0, row([np.inf, 0, np.inf])), [.5, 0, .5])

    def test_invalid_rows_name_the_row_in_spec_order(self):
        cases = [(dict(temperature=-1.0, top_p=2.0), sp.INVALID_TEMPERATURE),
                 (dict(top_k=-1), sp.INVALID_TOP_K), (dict(top_p=0.0), sp.INVALID_TOP_P),
                 (dict(min_p=1.0), sp.INVALID_MIN_P)]
        for kwargs, code in cases:
            with self.assertRaises(sp.SamplerError) as e:
                ex.distribution(3, row([0.0, 1.0], **kwargs))
            self.assertEqual((e.exception.code, e.exception.row), (code, 3))
            self.assertTrue(e.exception.message.startswith("row 3: "))
        with self.assertRaises(sp.SamplerError) as e:
            ex.distribution(0, row([np.nan, 1.0]))
        self.assertEqual(e.exception.code, sp.NAN_LOGIT)
        with self.assertRaises(sp.SamplerError) as e:
            ex.distribution(0, row([-np.inf, np.nan], mask=[1, 0]))
        self.assertEqual(e.exception.code, sp.EMPTY_SUPPORT)

    def test_draws_are_random_access_and_batch_independent(self):
        b = sp.Batch("f32", 4, [row(np.zeros(4), row_id=7), row([0, 1, 2, 3], row_id=9)])
        whole = ex.sample(b, 123, 0, 1000)
        part = ex.sample(sp.Batch("f32", 4, [b.rows[1]]), 123, 400, 100)
        np.testing.assert_array_equal(part[0], whole[1, 400:500])
        # Uniform over 4 tokens: every token appears, frequencies near 1/4.
        counts = np.bincount(whole[0], minlength=4)
        self.assertTrue((np.abs(counts / 1000 - 0.25) < 0.06).all(), counts)


    def _verify_request(self, chains_spec, vocab=4):
        """A VERIFY payload after its seed, as the host encodes it: one target row (shared by
        every position) and one draft row, `chains_spec` a list of (k, row_id, draw, drafts)."""
        logits = np.array([0.0, 1.0, 2.0, 3.0], "<f4")[:vocab]
        q = np.full(vocab, 1.0 / vocab)
        out = struct.pack("<QQQQ", vocab, 1, len(chains_spec), max(c[0] for c in chains_spec))
        for k, row_id, draw, drafts in chains_spec:
            out += struct.pack("<QQQ", k, row_id, draw)
            out += np.zeros(k + 1, "<u8").tobytes() + np.zeros(k, "<u8").tobytes()
            out += np.array(drafts, "<i8").tobytes()
        out += q.tobytes()
        out += struct.pack("<iIQQ", 0, 0, vocab, 1)
        out += struct.pack("<fffIqQ", 1.0, 1.0, 0.0, sp.ROW_HAS_LOGITS, 0, 0) + logits.tobytes()
        return memoryview(out)

    def test_verify_requests_decode_with_shared_rows(self):
        chains, max_drafts, batch = sp.decode_verify(
            self._verify_request([(2, 5, 0, [1, 3]), (1, 5, 1, [2])]))
        self.assertEqual(max_drafts, 2)
        self.assertEqual(len(batch.rows), 1)
        self.assertEqual([len(c.targets) for c in chains], [3, 2])
        self.assertIs(chains[0].targets[0], chains[1].targets[1])  # shared objects
        self.assertIs(chains[0].q[0], chains[1].q[0])
        self.assertEqual(list(chains[0].drafts), [1, 3])
        self.assertEqual((chains[1].row_id, chains[1].draw), (5, 1))
        with self.assertRaises(sp.SamplerError) as e:
            sp.decode_verify(self._verify_request([(0, 5, 0, [])]))
        self.assertEqual(e.exception.code, sp.INVALID_ARGUMENT)

    def test_check_chains_refuses_every_invalid_draft(self):
        target = row([0, 1, 2, 3])
        good = np.array([0.25, 0.25, 0.5, 0.0])
        sp.check_chains([sp.Chain([target, target], [good], np.array([2]), 0, 0)])
        for q, d in ((good, 3), (good, 4), (good * 0.5, 0), (np.array([np.nan, 0.5, 0.5, 0]), 1),
                     (np.array([-0.5, 1.0, 0.5, 0.0]), 1)):
            chain = sp.Chain([target, target], [q], np.array([d]), 0, 0)
            with self.assertRaises(sp.SamplerError) as e:
                sp.check_chains([sp.Chain([target, target], [good], np.array([2]), 0, 0), chain])
            self.assertEqual((e.exception.code, e.exception.row), (sp.INVALID_DRAFT, 1), (q, d))

    def test_example_verifier_follows_the_rule(self):
        # q = p: every draft accepted, the bonus from the last row; a draft of target
        # probability 0 (masked) never accepted, the residual token instead.
        target = row([0, 1, 2, 3])
        p = ex.distribution(0, target)
        chains = [sp.Chain([target, target, target], [p, p], np.array([1, 3]), 9, t)
                  for t in range(200)]
        out = ex.verify(chains, 5)
        self.assertTrue(all(len(e) == 3 and e[:2] == [1, 3] for e, _ in out))
        # p = q: acceptance 1 at both positions.
        self.assertTrue(all(np.allclose(a, [1.0, 1.0], atol=1e-12) for _, a in out))
        masked = dataclasses.replace(target, mask=np.array([False, True, True, True]))
        q = np.array([0.7, 0.1, 0.1, 0.1])
        chains = [sp.Chain([masked, masked], [q], np.array([0]), 9, t) for t in range(200)]
        for e, a in ex.verify(chains, 5):
            self.assertEqual(len(e), 1)
            self.assertNotEqual(e[0], 0)
            self.assertEqual(a, [0.0])  # p(0) = 0 under the mask: never accepted
        # Deterministic by (seed, row id, draw), whatever the batch.
        again = ex.verify(chains[5:6], 5)
        self.assertEqual(again[0], ex.verify(chains, 5)[5])

    def test_example_verifier_takes_draft_rows_of_logits(self):
        # A draft row of logits is the sampler's own distribution: the same chain with q given
        # as that row's probabilities gives the same tokens and acceptance probabilities.
        target = row([0, 1, 2, 3])
        draft = dataclasses.replace(row([3, 2, 1, 0]), top_k=2)
        q = ex.distribution(0, draft)
        by_probs = [sp.Chain([target, target], [q], np.array([0]), 4, t) for t in range(50)]
        by_rows = [sp.Chain([target, target], None, np.array([0]), 4, t, [draft], "f32")
                   for t in range(50)]
        self.assertEqual(ex.verify(by_rows, 7), ex.verify(by_probs, 7))
        # A drafted token outside the draft row's top 2 cannot have been drawn.
        bad = [by_rows[0], sp.Chain([target, target], None, np.array([3]), 4, 0, [draft], "f32")]
        with self.assertRaises(sp.SamplerError) as e:
            ex.verify(bad, 7)
        self.assertEqual((e.exception.code, e.exception.row), (sp.INVALID_DRAFT, 1))

    def test_verify_draft_logits_requests_decode(self):
        # VERIFY_DRAFT_LOGITS: the chains, the target batch's length, the target batch, then
        # the draft rows as a batch of their own dtype (f16 here).
        vocab = 4
        out = struct.pack("<QQQQ", vocab, 1, 1, 2)
        out += struct.pack("<QQQ", 2, 8, 3)
        out += np.zeros(3, "<u8").tobytes() + np.zeros(2, "<u8").tobytes()
        out += np.array([1, 2], "<i8").tobytes()
        targets = struct.pack("<iIQQ", 0, 0, vocab, 1)
        targets += struct.pack("<fffIqQ", 1.0, 1.0, 0.0, sp.ROW_HAS_LOGITS, 0, 0)
        targets += np.array([0, 1, 2, 3], "<f4").tobytes()
        out += struct.pack("<Q", len(targets)) + targets
        out += struct.pack("<iIQQ", 1, 0, vocab, 1)
        out += struct.pack("<fffIqQ", 0.5, 0.9, 0.0, sp.ROW_HAS_LOGITS, 3, 0)
        out += np.array([1.5, 0, -1, 2], "<f2").tobytes()
        chains, max_drafts, batch = sp.decode_verify(memoryview(out), draft_logits=True)
        self.assertEqual((max_drafts, len(chains), len(batch.rows)), (2, 1, 1))
        c = chains[0]
        self.assertIsNone(c.q)
        self.assertEqual(c.draft_dtype, "f16")
        self.assertIs(c.draft_rows[0], c.draft_rows[1])
        self.assertEqual(list(c.draft_rows[0].logits), [1.5, 0, -1, 2])
        self.assertEqual((c.draft_rows[0].temperature, c.draft_rows[0].top_k), (0.5, 3))
        with self.assertRaises(sp.ProtocolError):
            sp.decode_verify(memoryview(out[:-2]), draft_logits=True)

    def test_verify_reply_carries_acceptance_when_declared(self):
        target = row([0, 1, 2, 3])
        q = np.full(4, 0.25)
        chains = [sp.Chain([target, target, target], [q, q], np.array([1, 2]), 0, 0)]
        reply = sp._verify_reply([([1, 0], [1.0, 0.25])], chains, 2, acceptance=True)
        self.assertEqual(len(reply), 8 + 8 * 3 + 8 * 2)
        self.assertEqual(list(np.frombuffer(reply[32:], "<f8")), [1.0, 0.25])
        with self.assertRaises(sp.SamplerError):  # one probability per decided position
            sp._verify_reply([([1, 0], [1.0])], chains, 2, acceptance=True)
        with self.assertRaises(sp.SamplerError):  # a pair is required
            sp._verify_reply([[1, 0]], chains, 2, acceptance=True)


COERCING_SERVER = r"""
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import sampcert_protocol as sp
REPLIES = {
    1: lambda n, d: np.zeros((n, d), np.int64) + 0.9,             # floats: token + 0.9
    2: lambda n, d: np.full((n, d), "0"),                          # strings
    3: lambda n, d: [[False] * d] * n,                             # booleans
    4: lambda n, d: np.zeros((d, n), np.int64),                    # transposed
    5: lambda n, d: np.full((n, d), 2**63, np.uint64),             # beyond i64
    6: lambda n, d: np.zeros((n, d), np.int32),                    # correct (int32 is fine)
}
def sample(batch, seed, first, draws):
    return REPLIES[int(batch.rows[0].temperature)](len(batch.rows), draws)
def probabilities(batch):
    return np.full((1, batch.vocab), "0.5")                        # strings
sp.serve(sample, sp.Info(name="coercing"), probabilities_fn=probabilities)
"""


class StrictRepliesTest(unittest.TestCase):
    """SPEC PROTO-1: a reply that is not an array of PROTOCOL.md's type and shape is the
    sampler's error, never converted into one that passes (the helper truncated floats to the
    right tokens and parsed strings, and such samplers were certified Conformant)."""

    def test_sample_replies_are_integers_of_the_right_shape(self):
        host = Host(COERCING_SERVER)
        try:
            for t, what in [(1, "float64"), (2, "<U1"), (3, "bool"), (4, "shape (3, 1)"),
                            (5, "beyond i64")]:
                req = struct.pack("<QQQ", 1, 0, 3) + batch("f32", [0, 0], temperature=t)
                reply = host.call(sp.SAMPLE, req)
                self.assertEqual(reply[:2], ("error", sp.INTERNAL), (t, reply))
                self.assertIn(what, reply[3])
            req = struct.pack("<QQQ", 1, 0, 3) + batch("f32", [0, 0], temperature=6)
            self.assertEqual(host.call(sp.SAMPLE, req), ("ok", bytes(8 * 3)))
            reply = host.call(sp.PROBABILITIES, batch("f32", [0, 0]))
            self.assertEqual(reply[:2], ("error", sp.INTERNAL), reply)
            self.assertIn("not of real numbers", reply[3])
        finally:
            host.close()

    def test_transposed_multi_row_replies_are_refused(self):
        with self.assertRaisesRegex(sp.SamplerError, r"shape \(3, 2\)"):
            sp._reply_array(np.zeros((3, 2), np.int64), "sample_fn", "iu", (2, 3))
        self.assertEqual(sp._reply_array(np.arange(6), "sample_fn", "iu", (2, 3)).shape, (2, 3))

    def test_verify_replies_are_integers(self):
        target = row([0, 1, 2, 3])
        q = np.full(4, 0.25)
        chains = [sp.Chain([target, target, target], [q, q], np.array([1, 2]), 0, 0)]
        self.assertEqual(len(sp._verify_reply([[1, 2, 0]], chains, 2)), 8 + 8 * 3)
        for bad in ([np.array([1, 2, 0]) + 0.75], [["1", "2", "0"]], [[True]], [[[1], [2]]]):
            with self.assertRaises(sp.SamplerError, msg=repr(bad)):
                sp._verify_reply(bad, chains, 2)
        with self.assertRaisesRegex(sp.SamplerError, "not of real numbers"):
            sp._verify_reply([([1, 0], ["1.0", "0.25"])], chains, 2, acceptance=True)

    def test_info_fields_are_not_coerced(self):
        with self.assertRaisesRegex(ValueError, "Info.thread_safe: a flag"):
            sp.Info(name="n", thread_safe="false").encode()
        with self.assertRaisesRegex(ValueError, "Info.greedy_threshold: a number"):
            sp.Info(name="n", greedy_threshold="1e-5").encode()
        sp.Info(name="n", thread_safe=np.bool_(True), greedy_threshold=np.float32(0.5)).encode()


class DeclarationsTest(unittest.TestCase):
    """The helper's names, values and INFO layout against `sampcert declarations`, the C++
    tables (adapters/declarations.cc)."""

    def setUp(self):
        exe = os.environ.get("SAMPCERT")
        if not exe:
            self.skipTest("SAMPCERT (the sampcert binary) is not set")
        out = subprocess.run([exe, "declarations"], check=True, capture_output=True, text=True)
        self.dump = json.loads(out.stdout)

    def test_names_and_values(self):
        self.assertEqual(sp.CAPABILITIES, {c["name"]: c["bit"] for c in self.dump["capabilities"]})
        for v in self.dump["vocabularies"]:
            self.assertEqual(getattr(sp, v["id"].upper()),
                             {x["name"]: x["abi"] for x in v["values"]}, v["id"])

    def test_info_reply_has_every_field_in_the_abi_order(self):
        info = sp.Info(name="n", version="v", capabilities=["f16", "mask", "batch"],
                       greedy_tie_break="lowest-index", tie_rule="exact-any",
                       pipeline_order="truncation-first",
                       truncation_order=("min-p", "top-k", "top-p"),
                       nan_policy="masked", greedy_threshold=0.25, determinism="cross-device",
                       accuracy="fp16", thread_safe=True, top_k_tie_rule="exact-lowest-index",
                       top_p_tie_rule=None, draws="sequential", draw_cost_ns_per_token=3.5,
                       verify_scheme="typical", verify_threshold=0.25, verify_alpha=0.5,
                       repetition_history="output-only", additive_history="prompt-and-output")
        payload = info.encode()
        off = 8
        for _ in range(2):  # name, version
            off += 4 + struct.unpack_from("<I", payload, off)[0]
        fields = self.dump["fields"]
        layout = "<" + "".join(f'{f["count"]}{f["abi_type"]}' for f in fields)
        self.assertEqual(off + struct.calcsize(layout), len(payload))
        got = list(struct.unpack_from(layout, payload, off))
        # The ABI values written out by hand: an independent reading of PROTOCOL.md.
        want = {"capabilities": [2 | 8 | 512], "greedy_tie_break": [1], "tie_rule": [2],
                "pipeline_order": [1], "truncation_order": [2, 0, 1], "nan_policy": [1],
                "greedy_threshold": [0.25], "determinism": [2], "accuracy": [2],
                "thread_safe": [1], "top_k_tie_rule": [2], "top_p_tie_rule": [0],
                "draw_mode": [1], "draw_cost_ns_per_token": [3.5], "verify_scheme": [1],
                "verify_threshold": [0.25], "verify_alpha": [0.5],
                "repetition_history": [1], "additive_history": [0]}
        self.assertEqual([f["name"] for f in fields], list(want))
        for f in fields:
            value, got = got[:f["count"]], got[f["count"]:]
            self.assertEqual(value, want[f["name"]], f["name"])

    def test_info_members_are_the_report_names_with_the_declared_defaults(self):
        members = [m.name for m in dataclasses.fields(sp.Info)]
        self.assertEqual(members, ["name", "version"] + [f["report"] for f in self.dump["fields"]])
        payload = sp.Info(name="n", version="v").encode()
        off = 8 + 4 + 1 + 4 + 1
        layout = "<" + "".join(f'{f["count"]}{f["abi_type"]}' for f in self.dump["fields"])
        self.assertEqual(list(struct.unpack_from(layout, payload, off)),
                         [x for f in self.dump["fields"] for x in f["default_abi"]])

    def test_an_unknown_value_is_an_error_by_name(self):
        with self.assertRaisesRegex(ValueError, r"Info.tie_rule: unknown value 'keep-some' "
                                                r"\(known: keep-all, exact-lowest-index"):
            sp.Info(name="n", tie_rule="keep-some").encode()
        with self.assertRaisesRegex(ValueError, r"Info.capabilities: unknown value 'f64'"):
            sp.Info(name="n", capabilities=["f32", "f64"]).encode()
        with self.assertRaisesRegex(ValueError, r"Info.truncation_order: 3 values expected"):
            sp.Info(name="n", truncation_order=("top-k",)).encode()


if __name__ == "__main__":
    unittest.main()


FORKED_SCRIPT = r"""
import os, sys, numpy as np
sys.path.insert(0, sys.argv[1])
import sampcert_protocol as sp
sp.delegate_to_fork_server()
LOADED_IN = os.getpid()  # the heavy imports would go here: the server's pid in a forked child
def sample(batch, seed, first, draws):
    with open(os.environ["FORK_TEST_OUT"], "w") as f:
        f.write(f"{LOADED_IN} {os.getpid()} {os.getppid()}")
    return np.zeros((len(batch.rows), draws), np.int64)
sp.serve(sample, sp.Info(name="forked", capabilities=["f32"]))
"""


class ScriptForkServerTest(unittest.TestCase):
    """A protocol script served by a fork server of its own command (delegate_to_fork_server,
    SAMPCERT_FORK_SERVER_LISTEN): the process the tool starts is served by a child forked from
    the server, where the script's module was loaded once."""

    def setUp(self):
        self.exe = os.environ.get("SAMPCERT")
        if not self.exe:
            self.skipTest("SAMPCERT (the sampcert binary) is not set")
        import tempfile
        self.dir = tempfile.mkdtemp()
        self.script = os.path.join(self.dir, "forked.py")
        with open(self.script, "w") as f:
            f.write(FORKED_SCRIPT)
        self.out = os.path.join(self.dir, "out")
        # A forked child has the server's environment, not the requester's.
        os.environ["FORK_TEST_OUT"] = self.out

    def sample(self, argv, env):
        cmd = " ".join([sys.executable] + argv)
        p = subprocess.run([self.exe, "sample", "--sampler", f"exec:{cmd}", "--logits", "0,1",
                            "--draws", "1"], capture_output=True, text=True, timeout=60,
                           env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(self.out) as f:
            return [int(x) for x in f.read().split()]

    def test_the_tool_started_process_is_served_by_a_forked_child(self):
        sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
        from sampcert import api
        argv = [self.script, HERE]
        with api._ForkServer([sys.executable] + argv, script=True) as env:
            self.assertIsNotNone(env, "the fork server did not start")
            loaded_in, pid, parent = self.sample(argv, env)
            # The module was loaded in the server; the child serving is the server's child.
            self.assertNotEqual(loaded_in, pid)
            self.assertEqual(parent, loaded_in)
            # Another command (other arguments) is not the server's: it loads itself.
            loaded_in, pid, _ = self.sample(argv + ["extra"], env)
            self.assertEqual(loaded_in, pid)
        # Without a server, the process loads the script itself.
        loaded_in, pid, _ = self.sample(argv, dict(os.environ))
        self.assertEqual(loaded_in, pid)

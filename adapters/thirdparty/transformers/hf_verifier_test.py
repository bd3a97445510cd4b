"""Direct probes of transformers' speculative-decoding verifier, outside sampcert: each finding
docs/thirdparty.md states about transformers.generation.utils._speculative_sampling is pinned here by
calling the library itself (run by ctest python.thirdparty_verifier with the third-party venv).
"""
import os
import sys
import unittest

os.environ["HF_HUB_OFFLINE"] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
from transformers.generation.utils import _speculative_sampling  # noqa: E402

def call(new_logits, candidate_logits, drafts):
    """_speculative_sampling as assisted generation calls it, one prompt token before the drafts."""
    ids = torch.cat([torch.zeros((1, 1), dtype=torch.long), torch.tensor([drafts])], -1)
    return _speculative_sampling(ids, candidate_logits, len(drafts), new_logits)


class SpeculativeSamplingProbe(unittest.TestCase):
    def test_q_equal_p_accepts_everything(self):
        torch.manual_seed(1)
        logits = torch.randn((1, 4, 16))
        for _ in range(50):
            tokens, n = call(logits, logits[:, :3].clone(), [3, 7, 1])
            self.assertEqual(int(n), 3)
            self.assertEqual(tokens[0, :3].tolist(), [3, 7, 1])

    def test_a_pos_inf_target_logit_raises(self):
        # SPEC SEM-4: +inf logits win, uniformly. softmax of a row holding +inf is NaN (inf -
        # inf), the ratio p / q is NaN, the draft is rejected, and multinomial refuses the NaN
        # residual.
        new = torch.zeros((1, 2, 8))
        new[0, 0, 5] = float("inf")
        new[0, 0, 6] = float("inf")
        draft = torch.zeros((1, 1, 8))
        with self.assertRaises(RuntimeError) as e:
            call(new, draft, [5])
        self.assertIn("probability tensor contains either", str(e.exception))


if __name__ == "__main__":
    unittest.main()

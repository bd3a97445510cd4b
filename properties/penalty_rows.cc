// The planned penalty rows (SPEC section 16, "Planned rows"): rows carrying a prompt and an
// output history and the penalty parameters, sent only to samplers that declare `penalties`.
// Each is chosen so that one clause's violation is decisive, and each is checked three ways:
// the sampler's probabilities against the reference for that history (PROB-1's tolerance
// table, where probabilities are declared), the identities of PEN-4 bit for bit (probabilities
// and draws against the same row without its history), then the draws against the reference
// (DIST-1's G-test and score tests, with the profile's power and the item's level).
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "adapters/declarations.h"
#include "properties/families.h"
#include "properties/infinity.h"
#include "properties/plan.h"
#include "properties/rewritten_row.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/sampler_abi.h"
#include "sampcert/tolerance.h"

namespace sampcert::properties {
namespace {

using results::TestResult;

RowCase WithHistory(RowCase r, std::vector<int64_t> prompt, std::vector<int64_t> output,
                    float repetition, float presence, float frequency) {
  r.prompt_tokens = std::move(prompt);
  r.output_tokens = std::move(output);
  r.repetition_penalty = repetition;
  r.presence_penalty = presence;
  r.frequency_penalty = frequency;
  return r;
}

}  // namespace

std::vector<std::pair<std::string, RowCase>> PenaltyRows(DType dtype, uint32_t caps) {
  std::vector<std::pair<std::string, RowCase>> rows;
  if ((caps & SAMPCERT_CAP_PENALTIES) == 0) return rows;
  // PEN-2: repetition alone, on positive and negative logits, over the output only (so every
  // PEN-POL-1 declaration penalizes the same tokens). Token 4 (positive) is seen 3 times, token
  // 1 (negative) twice, token 5 (negative) and token 0 (positive, the last drawn) once: the sign
  // rule inverted moves tokens 1 and 5 up, r^count moves 1 and 4, a history one step stale
  // leaves token 0 unpenalized, a rule never applied leaves them all.
  rows.emplace_back(
      "pen_sign_rule_V8",
      WithHistory(MakeRow(dtype, {1.9f, -1.3f, 0.7f, -0.45f, 1.6f, -2.2f, 0.35f, 1.15f}, 1.0f, 140),
                  {}, {4, 1, 4, 5, 1, 4, 0}, 1.8f, 0.0f, 0.0f));
  // PEN-3: presence and frequency, over the output only, counts 4, 2 and 1, alpha != beta (a
  // presence / frequency swap shows at count > 1, alpha / count for alpha * count at 2 and 4);
  // a negative presence penalty (a reward) on a -inf token, which stays -inf (PEN-4).
  rows.emplace_back(
      "pen_counts_V8",
      WithHistory(MakeRow(dtype, {0.8f, 2.05f, -0.6f, 1.35f, 0.1f, -kInf, 1.7f, -1.15f}, 1.0f, 141),
                  {}, {1, 3, 1, 5, 6, 1, 3, 1, 0}, 1.0f, -0.8f, 0.45f));
  // PEN-4: penalties off with a history (r = 1, and r = 0 read as off): bit for bit the row
  // without it.
  const std::vector<float> identity = {0.4f, 1.2f, -0.7f, 2.3f, -kInf, 0.9f, -1.6f, 1.75f};
  rows.emplace_back("pen_identity_V8", WithHistory(MakeRow(dtype, identity, 1.0f, 142), {3, 3, 1},
                                                   {7, 4, 7, 0}, 1.0f, 0.0f, 0.0f));
  rows.emplace_back(
      "pen_zero_repetition_V8",
      WithHistory(MakeRow(dtype, identity, 0.7f, 143), {3, 3, 1}, {7, 4, 7, 0}, 0.0f, 0.0f, 0.0f));
  // PEN-POL-1: tokens 2, 6 and 7 are in the prompt only (7 the most probable), 5 and 0 in the
  // output only, every rule on: penalizing the prompt's tokens under `output-only`, or ignoring
  // them under `prompt-and-output`, moves token 7 by far more than the test's power, for either
  // rule and under either declaration.
  rows.emplace_back(
      "pen_prompt_only_V8",
      WithHistory(MakeRow(dtype, {1.4f, 0.2f, 1.85f, -0.9f, 0.65f, 1.1f, -0.35f, 2.4f}, 1.0f, 144),
                  {2, 6, 2, 7}, {5, 0, 5}, 1.6f, 0.55f, 0.3f));
  // PEN-POL-1 for the repetition rule alone, so that a sampler declaring no presence or
  // frequency penalty (`none`, transformers) has its repetition history decided too: the same
  // logits and history, r = 2.5 only (so that either declaration moves the row by TV > 0.1 from
  // the row without penalties). Token 7 (2.4, the most probable) is in the prompt only: 0.96
  // under `prompt-and-output`, 2.4 under `output-only` (TV 0.30 between the two).
  rows.emplace_back(
      "pen_prompt_only_repetition_V8",
      WithHistory(MakeRow(dtype, {1.4f, 0.2f, 1.85f, -0.9f, 0.65f, 1.1f, -0.35f, 2.4f}, 1.0f, 149),
                  {2, 6, 2, 7}, {5, 0, 5}, 2.5f, 0.0f, 0.0f));
  // PEN-4: a penalty never makes a finite logit infinite. Tokens 0 and 1 are seen, r = 0.5 (a
  // reward): exactly x / r = 6e38 and 5.8e38, past binary32's 3.4e38, so token 0 is drawn with
  // probability 1 (without the penalty, token 2 is). Penalized in binary32 both overflow to +inf
  // and SEM-4's limit splits the draws between them: token 1, outside the support, half the
  // time. In f16 the logits are 60000, 50000 and 65000 (f16's largest is 65504; 120000 and
  // 100000 penalized, far enough apart that token 1's probability is 0 even in long double, so
  // no cell of the draws' test expects a count of 1e-858): a penalty computed in f16 overflows
  // the same way, one in binary32 does not.
  {
    const bool f16 = dtype == DType::kF16;
    const float big = f16 ? 6.0e4f : 3.0e38f, second = f16 ? 5.0e4f : 2.9e38f,
                top = f16 ? 6.5e4f : 3.3e38f;
    rows.emplace_back(
        "pen_overflow_V8",
        WithHistory(MakeRow(dtype, {big, second, top, 0.4f, -1.1f, 2.5f, -kInf, 1.3f}, 1.0f, 146),
                    {}, {0, 1}, 0.5f, 0.0f, 0.0f));
  }
  // PEN-1: penalties before temperature and truncation. T = 0.5, top-k 3: the penalized top 3
  // are tokens 2, 6, 0 (1.9, 1.7, 1.2); penalties applied after top-k keep 0, 1, 2 instead, and
  // after temperature subtract beta from x / T (token 0 at 3.8 instead of 2.4).
  if (caps & SAMPCERT_CAP_TOP_K) {
    RowCase r =
        WithHistory(MakeRow(dtype, {2.6f, 2.2f, 1.9f, 0.3f, 1.0f, -0.5f, 1.7f, 0.0f}, 0.5f, 145),
                    {}, {0, 0, 1}, 1.0f, 1.0f, 0.2f);
    r.top_k = 3;
    rows.emplace_back("pen_before_top_k_V8", std::move(r));
  }
  // INV-8: an invalid request is refused with InvalidPenalty, never sampled: a NaN presence
  // penalty, and an output id equal to V (one past the last token).
  const std::vector<float> plain = {0.3f, 1.0f, -0.4f, 1.6f, 0.8f, -1.2f, 0.1f, 0.6f};
  rows.emplace_back("pen_invalid_nan_V8",
                    WithHistory(MakeRow(dtype, plain, 1.0f, 147), {}, {1, 3}, 1.0f,
                                std::numeric_limits<float>::quiet_NaN(), 0.0f));
  rows.emplace_back("pen_invalid_history_V8",
                    WithHistory(MakeRow(dtype, plain, 1.0f, 148), {2}, {1, 8}, 1.3f, 0.0f, 0.0f));
  for (auto& [name, row] : rows) row.family = name;
  return rows;
}

// Each row is filed under the clause it decides, from its content alone.
std::string_view PenaltyProperty(const RowCase& row) {
  if (InvalidRequest(row).code != ErrorCode::kOk) return "INV-ERR-1";  // INV-8's rows
  if (!row.view().HasPenalties()) return "PEN-4";
  // A reward (r < 1) that takes a logit past the dtype's largest finite value decides PEN-4's
  // "never infinite" (pen_overflow_V8).
  const RowView v = row.view();
  const float r = row.repetition_penalty;
  if (r > 0.0f && r < 1.0f) {
    const long double largest = v.dtype == DType::kF16 ? 65504.0L  // f16's largest finite
                                                       : std::numeric_limits<float>::max();
    for (std::size_t i = 0; i < v.vocab; ++i) {
      const long double x = DecodeLogit(v.dtype, v.logits, i);
      if (std::isfinite(x) && std::fabs(x) / r > largest) return "PEN-4";
    }
  }
  if (row.top_k != 0) return "PEN-1";
  if (!row.prompt_tokens.empty()) return "PEN-POL-1";
  if (row.presence_penalty != 0.0f || row.frequency_penalty != 0.0f) return "PEN-3";
  return "PEN-2";
}

std::vector<TestResult> RunPenalty(const ItemRun& ctx) {
  const RowCase& row = *ctx.row;
  Rewrite rewrite{.what = "token history",
                  .reference =
                      "the reference applies the penalties of SPEC section 16 under the "
                      "declared histories",
                  .bare = std::nullopt,
                  .identity_clause = "PEN-4",
                  .identity_what = "penalties off"};
  if (!row.view().HasPenalties()) {  // PEN-4: the same row without its history
    rewrite.bare = row;
    rewrite.bare->prompt_tokens.clear();
    rewrite.bare->output_tokens.clear();
  }
  return RunRewrittenRow(ctx, rewrite);
}

}  // namespace sampcert::properties

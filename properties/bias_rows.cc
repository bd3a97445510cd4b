// The planned logit-bias rows (SPEC section 18, "Planned rows"): rows carrying a logit bias or a
// minimum length, sent only to samplers that declare `logit-bias` (or `min-tokens`). Each is
// chosen so that one clause's violation is decisive, and each is checked as the penalty rows are:
// the sampler's probabilities against the reference (PROB-1's tolerance table, where
// probabilities are declared), the identities of BIAS-4 and MINLEN-1 bit for bit (probabilities
// and draws against the same row without its bias or minimum length), then the draws against the
// reference (DIST-1's G-test and score tests, with the profile's power and the item's level).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>
#include <utility>

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

RowCase WithBias(RowCase r, std::vector<std::pair<int64_t, float>> bias) {
  for (const auto& [id, b] : bias) {
    r.bias_tokens.push_back(id);
    r.bias_values.push_back(b);
  }
  return r;
}

// The row that must behave exactly as `row` (BIAS-4, MINLEN-1), or nullopt when the row asks for
// a change: every bias +-0 and no id banned by the minimum length.
std::optional<RowCase> Bare(const RowCase& row) {
  for (float b : row.bias_values) {
    if (b != 0.0f) return std::nullopt;
  }
  if (row.EosBanned(row.output_tokens.size())) return std::nullopt;
  RowCase bare = row;
  bare.bias_tokens.clear();
  bare.bias_values.clear();
  bare.min_tokens = 0;
  return bare;
}

}  // namespace

std::vector<std::pair<std::string, RowCase>> BiasRows(DType dtype, uint32_t caps) {
  std::vector<std::pair<std::string, RowCase>> rows;
  if (caps & SAMPCERT_CAP_LOGIT_BIAS) {
    // BIAS-1: the bias before temperature. T = 0.5, biases +1.5, -2 and +0.75: added after
    // temperature (x / T + b) token 0's log-weight is 3.5 instead of (x + b) / T = 5, and token
    // 4's 0.8 instead of -1.2.
    rows.emplace_back(
        "bias_before_temperature_V8",
        WithBias(MakeRow(dtype, {1.0f, 0.2f, -0.5f, 0.8f, 1.4f, -1.0f, 0.0f, 0.6f}, 0.5f, 150),
                 {{0, 1.5f}, {4, -2.0f}, {6, 0.75f}}));
    // BIAS-2: +inf biases. Token 2 (finite) wins alone (SEM-4); token 5's logit is -inf and
    // stays outside the support (-inf + inf is no number, and no winner); token 1 is banned by a
    // -inf bias. Every draw is token 2: a NaN from -inf + inf, or a -inf token let back in,
    // draws or errs outside it.
    rows.emplace_back(
        "bias_inf_V8",
        WithBias(MakeRow(dtype, {0.9f, 2.4f, 0.3f, -0.6f, 1.7f, -kInf, 0.1f, -1.2f}, 1.0f, 151),
                 {{2, kInf}, {5, kInf}, {1, -kInf}, {4, -0.5f}}));
    // BIAS-2: bans. Token 3's logit is +inf and its bias -inf: the ban wins (outside the support,
    // so the row is in the finite regime); token 0, the largest finite logit, is banned too.
    // A sampler that adds -inf to +inf, or keeps the +inf, draws token 3 (or errs); one that
    // ignores bans draws token 0 about half the time.
    rows.emplace_back(
        "bias_ban_V8",
        WithBias(MakeRow(dtype, {2.6f, 0.4f, 1.1f, kInf, -0.3f, 0.8f, 1.5f, -1.4f}, 1.0f, 152),
                 {{3, -kInf}, {0, -kInf}, {6, 0.25f}}));
    // BIAS-3: the sum is exact, whatever its size. Exactly, token 1 leads by 1.9e38 (f16: 20000,
    // so that token 0's probability is 0 even in long double: at 10000 it was 1e-4336)
    // and has probability 1; summed in binary32 (f16: in f16) tokens 0 and 1 both overflow to
    // +inf and SEM-4's limit draws token 0, of probability 0, half the time.
    {
      const bool f16 = dtype == DType::kF16;
      const std::vector<float> x =
          f16 ? std::vector<float>{6.0e4f, 5.0e4f, 6.5e4f, 0.4f, -1.1f, 2.5f, -kInf, 1.3f}
              : std::vector<float>{3.0e38f, 2.9e38f, 3.3e38f, 0.4f, -1.1f, 2.5f, -kInf, 1.3f};
      const float b0 = f16 ? 1.0e4f : 1.0e38f, b1 = f16 ? 4.0e4f : 3.0e38f;
      rows.emplace_back("bias_overflow_V8",
                        WithBias(MakeRow(dtype, x, 1.0f, 153), {{0, b0}, {1, b1}}));
    }
    // BIAS-4: biases of +0 and -0 change nothing, bit for bit.
    rows.emplace_back(
        "bias_identity_V8",
        WithBias(MakeRow(dtype, {0.4f, 1.2f, -0.7f, 2.3f, -kInf, 0.9f, -1.6f, 1.75f}, 0.8f, 154),
                 {{3, 0.0f}, {4, -0.0f}, {7, 0.0f}}));
    // BIAS-1 with top-k: the bias before truncation. T = 1, top-k 3: the biased top 3 are tokens
    // 3, 0 and 1 (2.4, 2.0, 1.8); a bias after top-k keeps 0, 1 and 2 and draws token 2.
    if (caps & SAMPCERT_CAP_TOP_K) {
      RowCase r =
          WithBias(MakeRow(dtype, {2.0f, 1.8f, 1.6f, 1.4f, 0.2f, -0.3f, 0.9f, 0.5f}, 1.0f, 155),
                   {{3, 1.0f}});
      r.top_k = 3;
      rows.emplace_back("bias_before_top_k_V8", std::move(r));
    }
    // BIAS-1 with the penalties: the bias first. Tokens 0 and 4 are seen, r = 3: biased then
    // penalized, token 4 is (0.9 + 1.5) / 3 = 0.8 and token 0 (1.2 - 2) * 3 = -2.4; penalized
    // then biased, 0.9 / 3 + 1.5 = 1.8 and 1.2 / 3 - 2 = -1.6.
    if (caps & SAMPCERT_CAP_PENALTIES) {
      RowCase r =
          WithBias(MakeRow(dtype, {1.2f, 0.0f, 0.3f, -0.4f, 0.9f, -1.1f, 0.5f, 0.1f}, 1.0f, 156),
                   {{0, -2.0f}, {4, 1.5f}});
      r.output_tokens = {0, 4};
      r.repetition_penalty = 3.0f;
      rows.emplace_back("bias_before_penalty_V8", std::move(r));
    }
  }
  if (caps & SAMPCERT_CAP_MIN_TOKENS) {
    // MINLEN-1: two tokens out, at least three asked for: token 3 (the most probable, the end
    // of sequence) is banned. Then three out: nothing is banned, bit for bit the row without a
    // minimum length (an off-by-one bans it one step too long).
    const std::vector<float> x = {0.7f, 1.1f, -0.2f, 2.2f, 0.5f, -0.9f, 1.4f, 0.0f};
    RowCase banned = MakeRow(dtype, x, 1.0f, 157);
    banned.output_tokens = {1, 6};
    banned.min_tokens = 3;
    banned.eos_token_id = 3;
    rows.emplace_back("min_tokens_ban_V8", banned);
    RowCase reached = banned;
    reached.output_tokens = {1, 6, 0};
    reached.row_id = 158;
    rows.emplace_back("min_tokens_reached_V8", std::move(reached));
    // INV-9: the minimum length's id equal to V is refused with InvalidLogitBias.
    RowCase bad_eos = banned;
    bad_eos.eos_token_id = 8;
    bad_eos.row_id = 159;
    rows.emplace_back("min_tokens_invalid_eos_V8", std::move(bad_eos));
  }
  if (caps & SAMPCERT_CAP_LOGIT_BIAS) {
    // INV-9: an invalid bias is refused with InvalidLogitBias, never sampled: a NaN bias, an id
    // equal to V, an id given twice.
    const std::vector<float> x = {0.2f, -0.6f, 1.3f, 0.9f, -1.4f, 2.1f, 0.4f, -0.1f};
    rows.emplace_back("bias_invalid_nan_V8",
                      WithBias(MakeRow(dtype, x, 1.0f, 160),
                               {{1, 0.5f}, {4, std::numeric_limits<float>::quiet_NaN()}}));
    rows.emplace_back("bias_invalid_id_V8",
                      WithBias(MakeRow(dtype, x, 1.0f, 161), {{2, 1.0f}, {8, -kInf}}));
    rows.emplace_back("bias_invalid_repeated_V8",
                      WithBias(MakeRow(dtype, x, 1.0f, 162), {{5, 1.0f}, {3, 0.5f}, {5, -2.0f}}));
  }
  for (auto& [name, row] : rows) row.family = name;
  return rows;
}

// Each row is filed under the clause it decides, from its content alone.
std::string_view BiasProperty(const RowCase& row) {
  if (InvalidRequest(row).code != ErrorCode::kOk) return "INV-ERR-1";  // INV-9's rows
  if (row.min_tokens > 0) return "MINLEN-1";
  if (Bare(row)) return "BIAS-4";
  const RowView v = row.view();
  const long double largest = v.dtype == DType::kF16 ? 65504.0L  // f16's largest finite
                                                     : std::numeric_limits<float>::max();
  bool infinite = false;
  for (std::size_t j = 0; j < v.num_bias; ++j) {
    const long double x =
        DecodeLogit(v.dtype, v.logits, static_cast<std::size_t>(v.bias_tokens[j]));
    const float b = v.bias_values[j];
    if (std::isinf(b) || std::isinf(x)) infinite = true;
    // A sum past the dtype's largest finite value decides BIAS-3's "exact" (bias_overflow_V8).
    if (std::isfinite(x) && std::isfinite(b) && std::fabs(x + b) > largest) return "BIAS-3";
  }
  return infinite ? "BIAS-2" : "BIAS-1";
}

std::vector<TestResult> RunLogitBias(const ItemRun& ctx) {
  const RowCase& row = *ctx.row;
  const bool minimum = row.min_tokens > 0;
  return RunRewrittenRow(
      ctx,
      Rewrite{.what = minimum ? "minimum length" : "logit bias",
              .reference = "the reference adds the bias exactly, before the penalties and "
                           "temperature, and bans the tokens of SPEC section 18",
              .bare = Bare(row),
              .identity_clause = BiasProperty(row),
              .identity_what = minimum ? "the minimum length is reached" : "the biases are 0"});
}

}  // namespace sampcert::properties

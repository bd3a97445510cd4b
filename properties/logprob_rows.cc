// The planned log-probability rows (SPEC section 20, "Planned rows"): rows on which the three
// modes (raw, scaled, processed) differ, sent only to samplers that declare a logprob mode. On
// each, for every mode the sampler declares, one sample() call draws kDraws tokens with their
// log-probabilities and the row's top kTopN; each returned value is checked exactly against the
// reference's log-probability of that token in that mode (LOGP-1), within the accuracy class's
// bound (LOGP-2), -inf exactly outside the mode's support (LOGP-3), and the top-n list against
// the reference's order (LOGP-4). Deterministic checks: no share of the false-alarm budget.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "adapters/abi_conversions.h"
#include "properties/families.h"
#include "properties/plan.h"
#include "properties/sequential_rule.h"
#include "sampcert/reference_logprobs.h"
#include "sampcert/sampler_abi.h"
#include "sampcert/tolerance.h"

namespace sampcert::properties {
namespace {

using results::TestResult;

constexpr uint64_t kDraws = 256;
constexpr uint64_t kTopN = 5;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

constexpr int32_t kModes[] = {SAMPCERT_LOGPROBS_RAW, SAMPCERT_LOGPROBS_SCALED,
                              SAMPCERT_LOGPROBS_PROCESSED};

const char* ModeName(int32_t mode) {
  return mode == SAMPCERT_LOGPROBS_RAW      ? "raw"
         : mode == SAMPCERT_LOGPROBS_SCALED ? "scaled"
                                            : "processed";
}

// LOGP-2: the allowed error of a returned log-probability whose reference value is `ell` (a
// finite log p), in nats. Above the class's probability floor, log of PROB-1's relative bound
// (TOL-3, with the log-weight bounded by |ell|, which is at least |l|): |log p' - log p| <=
// -log(1 - eps). Below it, TOL-4's absolute bound: only log p' <= log(floor + abs_below_floor).
struct Bound {
  bool relative;
  double value;  // the allowed |difference| (relative) or the largest allowed log p' (floor)
};
Bound LogprobBound(const AccuracyParams& a, long double ell, std::size_t vocab) {
  const double e = static_cast<double>(ell);
  if (std::exp(e) >= a.prob_floor) {
    const double eps = std::min(0.5, ProbabilityRelTolerance(a, e, vocab));
    return {true, -std::log1p(-eps)};
  }
  return {false, std::log(a.prob_floor + a.abs_below_floor)};
}

// Whether `got` is within the bound of the reference `want` (both may be -inf: outside the
// support, only -inf itself is right, LOGP-3).
bool Within(const AccuracyParams& a, long double want, double got, std::size_t vocab,
            std::string* why) {
  if (std::isnan(got)) {
    *why = "NaN";
    return false;
  }
  if (want == -std::numeric_limits<long double>::infinity()) {
    if (got == -kInfinity) return true;
    *why = fmt::format("{} where the token is outside the mode's support (must be -inf)", got);
    return false;
  }
  const Bound b = LogprobBound(a, want, vocab);
  const double diff = std::fabs(got - static_cast<double>(want));
  if (b.relative ? diff <= b.value : got <= b.value) return true;
  *why = b.relative ? fmt::format(
                          "{} against the reference's {:.17g} (off by {:.3g} nats, "
                          "allowed {:.3g})",
                          got, static_cast<double>(want), diff, b.value)
                    : fmt::format(
                          "{} against the reference's {:.17g}, below the class's floor "
                          "(allowed at most {:.6g})",
                          got, static_cast<double>(want), b.value);
  return false;
}

// One mode's checks on one row; empty when it passes, else the failure.
std::string CheckMode(adapters::Sampler& sampler, const RowCase& row, uint64_t seed, int32_t mode) {
  const adapters::SamplerInfo& info = sampler.info();
  const AccuracyParams& a = AccuracyFor(info.policies.accuracy);
  const std::size_t v = row.vocab();
  const uint64_t n = std::min<uint64_t>(kTopN, v);
  auto ref = ReferenceLogprobs(row.view(), info.policies, mode);
  if (!ref.ok()) return "the reference: " + ref.error().message;
  auto got = sampler.SampleLogprobs(OneRow(row), seed, 0, kDraws, mode, n);
  if (!got.ok()) return "sample() with log-probabilities: " + got.error().message;
  const char* m = ModeName(mode);
  // LOGP-1..3: each draw's log-probability is its own token's, in the mode.
  for (uint64_t j = 0; j < kDraws; ++j) {
    const int64_t t = got->tokens[j];
    if (t < 0 || static_cast<std::size_t>(t) >= v) {
      return fmt::format("{} mode: draw {} is token {}, outside [0, {})", m, j, t, v);
    }
    std::string why;
    if (!Within(a, (*ref)[static_cast<std::size_t>(t)], got->logprobs[j], v, &why)) {
      return fmt::format("LOGP-1 ({} mode): draw {} (token {}) came with log-probability {}", m, j,
                         t, why);
    }
  }
  // LOGP-4: the top n, most probable first, each within its bound, nothing more probable left
  // out (beyond both bounds).
  std::vector<uint8_t> listed(v, 0);
  for (uint64_t i = 0; i < n; ++i) {
    const int64_t t = got->top_tokens[i];
    const double lp = got->top_logprobs[i];
    if (t < 0 || static_cast<std::size_t>(t) >= v || listed[static_cast<std::size_t>(t)]) {
      return fmt::format(
          "LOGP-4 ({} mode): top entry {} is token {} (not a token, or listed "
          "twice)",
          m, i, t);
    }
    listed[static_cast<std::size_t>(t)] = 1;
    std::string why;
    if (!Within(a, (*ref)[static_cast<std::size_t>(t)], lp, v, &why)) {
      return fmt::format("LOGP-4 ({} mode): top entry {} (token {}) has log-probability {}", m, i,
                         t, why);
    }
    if (i > 0 && !(lp <= got->top_logprobs[i - 1])) {
      return fmt::format(
          "LOGP-4 ({} mode): top entry {} ({}) is above entry {} ({}): not most "
          "probable first",
          m, i, lp, i - 1, got->top_logprobs[i - 1]);
    }
  }
  if (n > 0) {
    const std::size_t last = static_cast<std::size_t>(got->top_tokens[n - 1]);
    const long double floor_ref = (*ref)[last];
    // How far apart two reference values may be and still come out in either order: the sum of
    // their bounds (unbounded below the class's floor, where PROB-1 orders nothing).
    auto slack = [&](long double ell) {
      const Bound b = LogprobBound(a, ell, v);
      return b.relative ? b.value : kInfinity;
    };
    for (std::size_t s = 0; s < v; ++s) {
      const long double r = (*ref)[s];
      if (listed[s] || r <= floor_ref) continue;
      const bool inside_left_out = floor_ref == -std::numeric_limits<long double>::infinity();
      if (inside_left_out || static_cast<double>(r - floor_ref) > slack(r) + slack(floor_ref)) {
        return fmt::format(
            "LOGP-4 ({} mode): token {} (reference {:.17g}) is left out of the top "
            "{} though more probable than token {} (reference {:.17g})",
            m, s, static_cast<double>(r), n, last, static_cast<double>(floor_ref));
      }
    }
  }
  return "";
}

}  // namespace

std::vector<std::pair<std::string, RowCase>> LogprobRows(DType dtype, uint32_t caps) {
  std::vector<std::pair<std::string, RowCase>> rows;
  const uint32_t any =
      SAMPCERT_CAP_LOGPROBS_RAW | SAMPCERT_CAP_LOGPROBS_SCALED | SAMPCERT_CAP_LOGPROBS_PROCESSED;
  if ((caps & any) == 0) return rows;
  // LOGP-1, the temperature: an LLM-like row of 64 tokens at T = 0.6, where raw and scaled
  // log-probabilities differ by up to several nats (log-probabilities taken before the
  // temperature: the RL trainers' importance ratio of 2.0 at T = 0.6).
  rows.emplace_back("logp_temperature_V64", MakeRow(dtype, LlmLike(64, 180), 0.6f, 180));
  // LOGP-1, the processing: a row of 128 at T = 0.9 with the declaration's top-k 12 and top-p
  // 0.8 (min-p 0.02 where declared): processed renormalizes over the kept set and is -inf past
  // it (LOGP-3); scaled is not truncated.
  {
    RowCase r = MakeRow(dtype, LlmLike(128, 181), 0.9f, 181);
    if (caps & SAMPCERT_CAP_TOP_K) r.top_k = 12;
    if (caps & SAMPCERT_CAP_TOP_P) r.top_p = 0.8f;
    if (caps & SAMPCERT_CAP_MIN_P) r.min_p = 0.02f;
    rows.emplace_back("logp_truncated_V128", std::move(r));
  }
  // LOGP-3, the mask: 48 tokens of which 3 are allowed, the most probable logits masked; at
  // T = 1.3. Raw sees every token; scaled and processed are -inf on the 45 masked ones, which
  // fill the top 5's last two places.
  if (caps & SAMPCERT_CAP_MASK) {
    std::vector<float> x = LlmLike(48, 182);
    RowCase r = MakeRow(dtype, x, 1.3f, 182);
    r.mask.assign(48, 0);
    std::vector<std::size_t> order(48);
    for (std::size_t i = 0; i < 48; ++i) order[i] = i;
    std::ranges::sort(order, [&](std::size_t p, std::size_t q) { return x[p] < x[q]; });
    for (std::size_t i = 0; i < 3; ++i) r.mask[order[10 + 7 * i]] = 1;  // three low tokens
    rows.emplace_back("logp_masked_V48", std::move(r));
  }
  // LOGP-2, a wide row: 4099 tokens at T = 1.1 (a sum past 4096 terms; tiny probabilities below
  // the class's floor in the top-n's tail of the row).
  rows.emplace_back("logp_wide_V4099", MakeRow(dtype, LlmLike(4099, 183), 1.1f, 183));
  for (auto& [name, row] : rows) row.family = name;
  return rows;
}

std::string_view LogprobProperty(const RowCase&) { return "LOGP-1"; }

std::vector<TestResult> RunLogprobs(const ItemRun& ctx) {
  TestResult r = ctx.base;
  const adapters::SamplerInfo& info = ctx.sampler.info();
  std::string modes;
  for (const int32_t mode : kModes) {
    if (!info.Has(adapters::LogprobCapability(mode))) continue;
    const std::string failure = CheckMode(ctx.sampler, *ctx.row, ctx.item.seed, mode);
    r.cases += kDraws;
    if (!failure.empty()) {
      FailItem(r, failure, ctx);
      return {r};
    }
    modes += (modes.empty() ? "" : ", ") + std::string(ModeName(mode));
  }
  r.status = results::Status::kPass;
  r.note = fmt::format(
      "{} draws per mode ({}): each log-probability its token's within the "
      "accuracy class, -inf outside the support, and the top {} in order.",
      kDraws, modes, kTopN);
  return {r};
}

}  // namespace sampcert::properties

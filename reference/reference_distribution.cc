// The reference distribution. Compiled with -ffp-contract=off and never with fast-math: every
// operation is rounded as written, which the error analysis of SPEC.md section 6 assumes.
#include "sampcert/reference_distribution.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "reference/compensated_sum.h"
#include "sampcert/logit_bias.h"
#include "sampcert/penalties.h"
#include "sampcert/row_validation.h"
#include "sampcert/tolerance.h"

namespace sampcert {
namespace {

using ld = long double;
constexpr ld kInf = std::numeric_limits<ld>::infinity();

Error RowError(std::size_t row_index, ErrorCode code, const std::string& what) {
  return Error{code, fmt::format("row {}: {}", row_index, what)};
}

// A truncation step's view of the candidates: exact values for ordering and ties, log-weights
// and their error bounds for the rounding bands, weights for top-p's cumulative mass.
struct Stage {
  std::vector<std::size_t> order;  // candidate tokens, by value descending, then index
  std::vector<ld> value;           // exact logit, per token
  std::vector<ld> ell;             // log-weight at the truncation temperature, per token
  std::vector<double> sigma;       // LogWeightError(ell), 0 in the limit regimes
  std::vector<ld> weight;          // weight at the truncation temperature, per token
};

KeepClass Weaker(KeepClass a, KeepClass b) { return a < b ? a : b; }

// Classification of one step: must-keep / may-keep / must-drop per candidate, plus the nominal
// decision under exact arithmetic (SPEC BAND-1..BAND-3).
struct StepResult {
  std::vector<KeepClass> cls;    // per token; only candidates are meaningful
  std::vector<uint8_t> nominal;  // per token
};

// For each position r in stage.order: [group_begin, group_end) is its exact-tie group.
struct TieGroups {
  std::vector<std::size_t> begin;
  std::vector<std::size_t> end;
};

TieGroups FindTieGroups(const Stage& s) {
  const std::size_t n = s.order.size();
  TieGroups g{std::vector<std::size_t>(n), std::vector<std::size_t>(n)};
  std::size_t r = 0;
  while (r < n) {
    std::size_t e = r + 1;
    while (e < n && s.value[s.order[e]] == s.value[s.order[r]]) ++e;
    for (std::size_t q = r; q < e; ++q) {
      g.begin[q] = r;
      g.end[q] = e;
    }
    r = e;
  }
  return g;
}

// lo/hi bounds of each candidate's computed log-weight, in order. Both are non-increasing
// along the order because l -> l -+ sigma(l) is non-decreasing for l <= 0.
struct Bounds {
  std::vector<ld> lo;
  std::vector<ld> hi;
};

Bounds MakeBounds(const Stage& s) {
  Bounds b;
  b.lo.reserve(s.order.size());
  b.hi.reserve(s.order.size());
  for (std::size_t t : s.order) {
    b.lo.push_back(s.ell[t] - static_cast<ld>(s.sigma[t]));
    b.hi.push_back(s.ell[t] + static_cast<ld>(s.sigma[t]));
  }
  // Monotone in exact arithmetic; clamp so that rounding of sigma can never break the binary
  // searches below (it only ever widens a band).
  for (std::size_t r = 1; r < b.lo.size(); ++r) {
    b.lo[r] = std::min(b.lo[r], b.lo[r - 1]);
    b.hi[r] = std::min(b.hi[r], b.hi[r - 1]);
  }
  return b;
}

// Number of positions j with lo[j] > x (a prefix, since lo is non-increasing).
std::size_t CountLoAbove(const Bounds& b, ld x) {
  return static_cast<std::size_t>(
      std::partition_point(b.lo.begin(), b.lo.end(), [x](ld v) { return v > x; }) - b.lo.begin());
}

// Number of positions j with hi[j] >= x.
std::size_t CountHiAtLeast(const Bounds& b, ld x) {
  return static_cast<std::size_t>(
      std::partition_point(b.hi.begin(), b.hi.end(), [x](ld v) { return v >= x; }) - b.hi.begin());
}

StepResult TopK(const Stage& s, int64_t k_signed, TieRule rule, std::size_t vocab) {
  StepResult out{std::vector<KeepClass>(vocab, KeepClass::kMustKeep),
                 std::vector<uint8_t>(vocab, 1)};
  const std::size_t n = s.order.size();
  const auto k = static_cast<std::size_t>(k_signed);
  const TieGroups g = FindTieGroups(s);
  const Bounds b = MakeBounds(s);
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t t = s.order[r];
    const std::size_t ties_other = g.end[r] - g.begin[r] - 1;  // E
    const std::size_t ties_lower = r - g.begin[r];             // L
    const std::size_t above_sure = CountLoAbove(b, b.hi[r]);   // A
    // B: distinct-valued tokens that could be computed at or above this one.
    const std::size_t above_maybe = CountHiAtLeast(b, b.lo[r]) - 1 - ties_other;
    std::size_t keep_if_below = 0;  // tokens counted ahead of t when it surely stays
    std::size_t drop_if_at = 0;     // tokens surely ahead of t
    switch (rule) {
      case TieRule::kKeepAll:
        keep_if_below = above_maybe;
        drop_if_at = above_sure;
        out.nominal[t] = g.begin[r] < k;
        break;
      case TieRule::kExactLowestIndex:
        keep_if_below = above_maybe + ties_lower;
        drop_if_at = above_sure + ties_lower;
        out.nominal[t] = r < k;
        break;
      case TieRule::kExactAny:
        keep_if_below = above_maybe + ties_other;
        drop_if_at = above_sure;
        out.nominal[t] = r < k;  // resolved to the lowest indices (SPEC BAND-2)
        break;
    }
    out.cls[t] = keep_if_below < k ? KeepClass::kMustKeep
                 : drop_if_at >= k ? KeepClass::kMustDrop
                                   : KeepClass::kMayKeep;
  }
  return out;
}

StepResult TopP(const Stage& s, float top_p, TieRule rule, const std::vector<uint8_t>& current,
                ld may_keep_mass, const AccuracyParams& acc, std::size_t vocab) {
  StepResult out{std::vector<KeepClass>(vocab, KeepClass::kMustKeep),
                 std::vector<uint8_t>(vocab, 1)};
  const std::size_t n = s.order.size();
  const TieGroups g = FindTieGroups(s);
  const Bounds b = MakeBounds(s);

  // Renormalize over the current (nominally kept) set; candidates outside it weigh nothing in
  // the cumulative mass but are still classified (they may be may-keep from an earlier step).
  internal::CompensatedSum total;
  for (std::size_t t : s.order) {
    if (current[t]) total.Add(s.weight[t]);
  }
  const ld w_total = total.Total();
  std::vector<ld> q(n, 0);
  for (std::size_t r = 0; r < n; ++r) {
    if (current[s.order[r]]) q[r] = s.weight[s.order[r]] / w_total;
  }
  std::vector<ld> prefix(n + 1, 0);  // prefix[r] = mass of positions < r
  internal::CompensatedSum run;
  ld weighted_sigma = 0;
  for (std::size_t r = 0; r < n; ++r) {
    run.Add(q[r]);
    prefix[r + 1] = run.Total();
    weighted_sigma += q[r] * static_cast<ld>(s.sigma[s.order[r]]);
  }

  // The band half-width in cumulative mass (BAND-3): the normalizer's and the cumulative
  // sum's errors, each element's error weighted by its mass, the comparison, the rounding of
  // half-precision probabilities, and the mass of earlier steps' may-keep tokens.
  const ld eps = 2 * static_cast<ld>(SumError(acc, vocab)) + weighted_sigma +
                 static_cast<ld>(2 * acc.u_acc + acc.u_out) + may_keep_mass / w_total;
  const ld p = top_p;

  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t t = s.order[r];
    const std::size_t gb = g.begin[r];
    const std::size_t ge = g.end[r];
    const ld mass_above = prefix[gb];                        // exact: x_j > x_t
    const ld ties_lower = prefix[r] - prefix[gb];            // exact ties, lower index
    const ld ties_other = prefix[ge] - prefix[gb] - q[r];    // all other exact ties
    const ld above_sure = prefix[CountLoAbove(b, b.hi[r])];  // surely computed above
    const ld above_maybe = prefix[CountHiAtLeast(b, b.lo[r])] - q[r] - ties_other;
    ld keep_if_below = 0;
    ld drop_if_at = 0;
    switch (rule) {
      case TieRule::kKeepAll:
        keep_if_below = above_maybe;
        drop_if_at = above_sure;
        out.nominal[t] = mass_above < p;
        break;
      case TieRule::kExactLowestIndex:
        keep_if_below = above_maybe + ties_lower;
        drop_if_at = above_sure + ties_lower;
        out.nominal[t] = mass_above + ties_lower < p;
        break;
      case TieRule::kExactAny:
        keep_if_below = above_maybe + ties_other;
        drop_if_at = above_sure;
        out.nominal[t] = mass_above + ties_lower < p;
        break;
    }
    // Nothing can precede the token: its prefix mass is an empty sum, exactly 0 < p, in any
    // arithmetic. (Decided on counts, not masses, which carry rounding.)
    const bool nothing_above = CountHiAtLeast(b, b.lo[r]) == ge - gb;
    const bool first =
        nothing_above && (rule == TieRule::kKeepAll ||
                          (rule == TieRule::kExactLowestIndex && r == gb) || ge - gb == 1);
    out.cls[t] = first || keep_if_below < p - eps ? KeepClass::kMustKeep
                 : drop_if_at >= p + eps          ? KeepClass::kMustDrop
                                                  : KeepClass::kMayKeep;
  }
  return out;
}

StepResult MinP(const Stage& s, float min_p, const AccuracyParams& acc, std::size_t vocab) {
  StepResult out{std::vector<KeepClass>(vocab, KeepClass::kMustKeep),
                 std::vector<uint8_t>(vocab, 1)};
  const ld log_min_p = std::log(static_cast<ld>(min_p));
  const ld top = s.value[s.order.front()];
  // A token tied with the maximum computes to the same probability as the maximum and is kept
  // exactly; any other token is compared through two computed probabilities (BAND-4).
  const double band_const = LogWeightError(acc, 0.0) + acc.u_acc + 2 * acc.u_out;
  for (std::size_t t : s.order) {
    if (s.value[t] == top) continue;
    const ld d = s.ell[t] - log_min_p;
    const ld band = static_cast<ld>(s.sigma[t] + band_const);
    out.nominal[t] = d >= 0;
    out.cls[t] = d > band    ? KeepClass::kMustKeep
                 : d < -band ? KeepClass::kMustDrop
                             : KeepClass::kMayKeep;
  }
  return out;
}

// Exact logits, decoded. fp16 and bf16 go through Eigen's types, whose float conversions are
// exact; every fp32/fp16/bf16 value is exact in long double.
std::vector<ld> DecodeRow(const RowView& row) {
  std::vector<ld> x(row.vocab);
  for (std::size_t i = 0; i < row.vocab; ++i) x[i] = DecodeLogit(row.dtype, row.logits, i);
  return x;
}

}  // namespace

long double DecodeLogit(DType dtype, const void* logits, std::size_t index) {
  switch (dtype) {
    case DType::kF32: {
      float f;
      std::memcpy(&f, static_cast<const char*>(logits) + 4 * index, 4);
      return f;
    }
    case DType::kF16: {
      uint16_t bits;
      std::memcpy(&bits, static_cast<const char*>(logits) + 2 * index, 2);
      return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
    }
    case DType::kBF16: {
      uint16_t bits;
      std::memcpy(&bits, static_cast<const char*>(logits) + 2 * index, 2);
      return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(bits));
    }
  }
  return std::numeric_limits<ld>::quiet_NaN();
}

long double TotalVariation(std::span<const long double> a, std::span<const long double> b) {
  internal::CompensatedSum s;
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) s.Add(std::fabs(a[i] - b[i]));
  for (std::size_t i = n; i < a.size(); ++i) s.Add(std::fabs(a[i]));
  for (std::size_t i = n; i < b.size(); ++i) s.Add(std::fabs(b[i]));
  return s.Total() / 2;
}

Expected<ReferenceDistribution> ComputeReference(const RowView& row, const Policies& pol,
                                                 std::size_t row_index) {
  if (Error e = ValidateRow(row, pol, row_index); e.code != ErrorCode::kOk) return e;
  const float temp = row.temperature;

  const std::size_t vocab = row.vocab;
  std::vector<ld> x = DecodeRow(row);
  ApplyLogitBias(row, x);       // BIAS-1: the bias first, then the penalties
  ApplyPenalties(row, pol, x);  // PEN-1: the penalized logits replace x everywhere below
  const std::vector<uint8_t> banned = BannedTokens(row);  // BIAS-2, MINLEN-1

  // --- Support (SEM-1). ---
  ReferenceDistribution d;
  d.vocab = vocab;
  std::vector<uint8_t> support(vocab, 0);
  for (std::size_t i = 0; i < vocab; ++i) {
    if (!Allowed(row, banned, i)) continue;  // masked, or banned (a -inf bias, MINLEN-1)
    if (std::isnan(x[i])) continue;          // NaN-as-masked (an error under kError: validated)
    if (x[i] == -kInf) continue;
    support[i] = 1;
    ++d.support_size;
  }

  // --- Base distribution (SEM-2..SEM-5). ---
  ld max_logit = -kInf;
  for (std::size_t i = 0; i < vocab; ++i) {
    if (support[i]) max_logit = std::max(max_logit, x[i]);
  }
  d.max_logit = max_logit;
  float t_eff = temp;
  if (pol.greedy_threshold > 0.0f && temp > 0.0f && temp < pol.greedy_threshold) {
    t_eff = 0.0f;
    d.greedy_threshold_applied = true;
  }
  d.effective_temperature = t_eff;
  const bool has_pos_inf = max_logit == kInf;
  d.regime = t_eff == 0.0f ? Regime::kGreedy : has_pos_inf ? Regime::kPositiveInf : Regime::kFinite;

  const AccuracyParams& acc = AccuracyFor(pol.accuracy);
  d.weights.assign(vocab, 0);
  d.log_weights.assign(vocab, -kInf);
  for (std::size_t i = 0; i < vocab; ++i) {
    if (!support[i]) continue;
    if (d.regime == Regime::kFinite) {
      d.log_weights[i] = (x[i] - max_logit) / static_cast<ld>(t_eff);
      d.weights[i] = std::exp(d.log_weights[i]);
    } else if (x[i] == max_logit) {
      d.log_weights[i] = 0;
      d.weights[i] = 1;
    }
  }

  // --- The truncation stage (SEM-6, POL-3). ---
  // Temperature first: truncate the tempered distribution; its candidates are the tokens of
  // positive exact probability. Truncation first: truncate at T = 1 (uniform over +inf tokens
  // if there are any), temperature applies to what is kept.
  Stage stage;
  stage.value = x;
  stage.ell.assign(vocab, -kInf);
  stage.sigma.assign(vocab, 0.0);
  stage.weight.assign(vocab, 0);
  const bool trunc_first = pol.order == PipelineOrder::kTruncationFirst;
  const bool stage_finite = trunc_first ? !has_pos_inf : d.regime == Regime::kFinite;
  for (std::size_t i = 0; i < vocab; ++i) {
    if (!support[i]) continue;
    if (stage_finite) {
      stage.ell[i] = trunc_first ? x[i] - max_logit : d.log_weights[i];
      stage.weight[i] = trunc_first ? std::exp(stage.ell[i]) : d.weights[i];
      stage.sigma[i] = LogWeightError(acc, static_cast<double>(stage.ell[i]));  // cheap
    } else if (x[i] == max_logit) {
      stage.ell[i] = 0;
      stage.weight[i] = 1;
    }
    if (!stage_finite && x[i] != max_logit) continue;  // zero probability: not a candidate
    stage.order.push_back(i);
  }
  // The order only matters to truncation; without it the O(V log V) sort is skipped.
  const bool truncates = row.top_k != 0 || row.top_p != 1.0f || row.min_p != 0.0f;
  if (truncates) {
    std::sort(stage.order.begin(), stage.order.end(),
              [&x](std::size_t a, std::size_t b) { return x[a] != x[b] ? x[a] > x[b] : a < b; });
  }

  d.keep.assign(vocab, KeepClass::kOutsideSupport);
  std::vector<uint8_t> current(vocab, 0);
  for (std::size_t i = 0; i < vocab; ++i) {
    if (support[i]) d.keep[i] = KeepClass::kMustDrop;  // zero-probability support tokens
  }
  for (std::size_t t : stage.order) {
    d.keep[t] = KeepClass::kMustKeep;
    current[t] = 1;
  }

  for (TruncationStep step : pol.truncation_order) {
    StepResult res;
    if (step == TruncationStep::kTopK) {
      if (row.top_k == 0) continue;
      res = TopK(stage, row.top_k, pol.TopKTies(), vocab);
    } else if (step == TruncationStep::kTopP) {
      if (row.top_p == 1.0f) continue;  // 1 is off: no truncation at all (SEM-6)
      ld may_mass = 0;
      for (std::size_t t : stage.order) {
        if (d.keep[t] == KeepClass::kMayKeep) may_mass += stage.weight[t];
      }
      res = TopP(stage, row.top_p, pol.TopPTies(), current, may_mass, acc, vocab);
    } else {
      if (row.min_p == 0.0f) continue;
      res = MinP(stage, row.min_p, acc, vocab);
    }
    for (std::size_t t : stage.order) {
      d.keep[t] = Weaker(d.keep[t], res.cls[t]);
      current[t] = current[t] && res.nominal[t];
    }
  }

  // --- Final distribution: the base weights at the effective temperature over what is kept.
  std::vector<ld> final_w(vocab, 0);
  for (std::size_t i = 0; i < vocab; ++i) {
    if (current[i]) final_w[i] = d.weights[i];
  }
  for (std::size_t i = 0; i < vocab; ++i) {
    // Kept by truncation at T = 1 but of zero weight in the limit that follows.
    if (d.regime != Regime::kFinite && d.weights[i] == 0 && d.keep[i] > KeepClass::kMustDrop) {
      d.keep[i] = KeepClass::kMustDrop;
    }
  }
  if (d.regime == Regime::kGreedy && pol.greedy_tie_break == GreedyTieBreak::kAny) {
    // Some winner, with no promise which (POL-1 `any`): with two or more winners each may be
    // drawn and none must be; the nominal is the lowest-index one, as for kLowestIndex.
    std::size_t winners = 0;
    for (std::size_t i = 0; i < vocab; ++i) {
      if (d.weights[i] > 0 && d.keep[i] >= KeepClass::kMayKeep) ++winners;
    }
    if (winners >= 2) {
      d.any_greedy_ties = true;
      bool nominal_taken = false;
      for (std::size_t i = 0; i < vocab; ++i) {
        if (d.weights[i] == 0 || d.keep[i] < KeepClass::kMayKeep) continue;
        d.keep[i] = KeepClass::kMayKeep;
        if (final_w[i] > 0) {
          if (nominal_taken) final_w[i] = 0;
          nominal_taken = true;
        }
      }
    }
  }
  if (d.regime == Regime::kGreedy && pol.greedy_tie_break == GreedyTieBreak::kLowestIndex) {
    // The draw is the lowest-index kept winner: winners before the first must-keep one may be
    // drawn, everything after it never is (POL-1).
    bool seen_must = false;
    bool nominal_taken = false;
    for (std::size_t i = 0; i < vocab; ++i) {
      if (d.weights[i] == 0 || d.keep[i] < KeepClass::kMayKeep) continue;
      if (seen_must) {
        d.keep[i] = KeepClass::kMustDrop;
      } else if (d.keep[i] == KeepClass::kMustKeep) {
        seen_must = true;
      }
      if (final_w[i] > 0) {
        if (nominal_taken) final_w[i] = 0;
        nominal_taken = true;
      }
    }
  }
  internal::CompensatedSum z;
  for (ld w : final_w) z.Add(w);
  const ld total = z.Total();
  if (!(total > 0)) {
    return RowError(row_index, ErrorCode::kInternal, "nominal kept set has no mass");
  }
  d.probs.assign(vocab, 0);
  for (std::size_t i = 0; i < vocab; ++i) {
    d.probs[i] = final_w[i] / total;
    if (d.probs[i] > 0) ++d.kept_size;
  }
  d.lowest_index_greedy =
      d.regime == Regime::kGreedy && pol.greedy_tie_break == GreedyTieBreak::kLowestIndex;
  return d;
}

Expected<std::vector<long double>> ReferenceDistribution::RenormalizedOver(
    std::span<const uint8_t> kept) const {
  if (kept.size() != vocab) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("kept set has {} flags for a vocabulary of {}", kept.size(), vocab)};
  }
  std::vector<ld> out(vocab, 0);
  bool taken = false;
  for (std::size_t i = 0; i < vocab; ++i) {
    if (kept[i] && keep[i] <= KeepClass::kMustDrop) {
      return Error{
          ErrorCode::kInvalidArgument,
          fmt::format("token {} is kept but must be dropped or is outside the support", i)};
    }
    if (!kept[i] && keep[i] == KeepClass::kMustKeep) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("token {} must be kept but is not", i)};
    }
    if (kept[i] && !((lowest_index_greedy || any_greedy_ties) && taken)) {
      out[i] = weights[i];
      if (weights[i] > 0) taken = true;
    }
  }
  internal::CompensatedSum z;
  for (ld w : out) z.Add(w);
  const ld total = z.Total();
  if (!(total > 0)) {
    return Error{ErrorCode::kInvalidArgument, "kept set has no mass"};
  }
  for (ld& v : out) v /= total;
  return out;
}

}  // namespace sampcert

// DIST-3 (SPEC.md sections 10 and 12): distribution on every generated row, pooled over the
// rows of a dtype: a randomized PIT on 16 fixed bins (G-test), its top bin on its own (exact
// binomial) and the score test on sum log p (saddle-point tail of K(t) = sum_r n_r log sum_i
// p_i^(1+t)), at equal shares of the item's DIST-3 level.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "properties/generated_rows.h"
#include "properties/portable_random.h"
#include "properties/statistics/binomial.h"
#include "properties/statistics/cells.h"
#include "properties/statistics/chi_square.h"
#include "properties/statistics/score.h"

namespace sampcert::properties {

using results::Status;
using results::TestResult;

namespace {
// log p is rounded to this grid for the score test (observed and null alike, so the test is
// exact for the rounded statistic): it bounds the size of each row's null distribution.
constexpr double kLogGrid = 1.0 / 64;
}  // namespace

void PooledDistribution::Add(const ReferenceDistribution& ref, const std::vector<int64_t>& tokens,
                             uint64_t seed) {
  const std::size_t v = ref.probs.size();
  bool has_may = false;
  std::vector<uint8_t> must(v, 0);
  for (std::size_t i = 0; i < v; ++i) {
    has_may |= ref.keep[i] == KeepClass::kMayKeep;
    must[i] = ref.keep[i] == KeepClass::kMustKeep;
  }
  std::vector<long double> null = ref.probs;
  if (has_may) {
    auto restricted = ref.RenormalizedOver(must);
    if (!restricted.ok()) return;
    null = std::move(*restricted);
  }
  std::vector<int64_t> used;
  for (int64_t t : tokens) {
    if (t < 0 || static_cast<std::size_t>(t) >= v) return;  // RANGE-1 fails it
    const KeepClass c = ref.keep[static_cast<std::size_t>(t)];
    if (has_may && c == KeepClass::kMayKeep) continue;
    if (!(null[static_cast<std::size_t>(t)] > 0)) return;  // SUPP-1 / SUPP-2 fail it
    used.push_back(t);
  }
  if (used.empty()) return;
  // F(before t) for the drawn tokens, in O(V log draws): sort the distinct drawn tokens by
  // (probability desc, index asc); every token of the row adds its probability to those drawn
  // tokens it precedes, a suffix of that order (a difference array, then prefix sums).
  std::vector<int64_t> drawn = used;
  std::sort(drawn.begin(), drawn.end());
  drawn.erase(std::unique(drawn.begin(), drawn.end()), drawn.end());
  auto precedes = [&](std::size_t j, int64_t t) {
    const long double pj = null[j], pt = null[static_cast<std::size_t>(t)];
    return pj > pt || (pj == pt && static_cast<int64_t>(j) < t);
  };
  std::sort(drawn.begin(), drawn.end(),
            [&](int64_t a, int64_t b) { return precedes(static_cast<std::size_t>(a), b); });
  std::vector<long double> diff(drawn.size() + 1, 0);
  for (std::size_t j = 0; j < v; ++j) {
    if (!(null[j] > 0)) continue;
    const auto first = std::partition_point(drawn.begin(), drawn.end(),
                                            [&](int64_t t) { return !precedes(j, t); });
    diff[static_cast<std::size_t>(first - drawn.begin())] += null[j];
  }
  std::map<int64_t, long double> f_before;
  long double acc = 0;
  for (std::size_t k = 0; k < drawn.size(); ++k) {
    acc += diff[k];
    f_before[drawn[k]] = acc;
  }
  for (std::size_t k = 0; k < used.size(); ++k) {
    const int64_t t = used[k];
    const double u_rand = UnitDouble(Mix(Mix(seed, 0xd153), k));
    const double u = static_cast<double>(f_before[t] + u_rand * null[static_cast<std::size_t>(t)]);
    const int bin = std::clamp(static_cast<int>(u * kBins), 0, kBins - 1);
    bins_[static_cast<std::size_t>(bin)] += 1;
    top_ += u >= 1 - 1.0 / 1024;
    n_ += 1;
  }
  // The score component of this row: rounded log p values with their null probabilities.
  std::map<double, double> dist;
  for (std::size_t j = 0; j < v; ++j) {
    if (null[j] > 0) {
      dist[std::round(static_cast<double>(std::log(null[j])) / kLogGrid) * kLogGrid] +=
          static_cast<double>(null[j]);
    }
  }
  ScoreComponent comp{static_cast<double>(used.size()), {}, {}};
  for (const auto& [y, p] : dist) {
    comp.values.push_back(y);
    comp.probs.push_back(p);
  }
  for (int64_t t : used) {
    score_sum_ +=
        std::round(static_cast<double>(std::log(null[static_cast<std::size_t>(t)])) / kLogGrid) *
        kLogGrid;
  }
  components_.push_back(std::move(comp));
  ++rows_;
}

TestResult PooledDistribution::Result(const PlanItem& item) const {
  TestResult r;
  r.property = "DIST-3";
  r.dtype = item.dtype;
  r.family = "generated rows";
  r.level = item.level;
  r.cases = rows_;
  r.draws = static_cast<uint64_t>(n_);
  if (rows_ == 0) {
    r.status = Status::kInconclusive;
    r.note = "no valid generated row returned draws";
    return r;
  }
  const double share = static_cast<double>(std::max(1, item.subtests));
  const double sub_level = item.level / share;
  // (a) The PIT histogram on 16 equal bins: G-test with Williams' correction.
  Cells cells;
  cells.probability.assign(kBins, 1.0 / kBins);
  std::vector<int64_t> pseudo;  // one pseudo-token per draw, its bin
  for (int b = 0; b < kBins; ++b) {
    cells.cell_of.push_back(b);
    cells.label.push_back(fmt::format("u in [{}/16, {}/16)", b, b + 1));
    pseudo.insert(pseudo.end(), static_cast<std::size_t>(bins_[static_cast<std::size_t>(b)]), b);
  }
  const GofResult g = GTest(pseudo, cells);
  // (b) The top bin (the least probable 1/1024 of each row's mass) on its own.
  const uint64_t n = static_cast<uint64_t>(n_);
  const double p_top = BinomialTwoSided(static_cast<uint64_t>(top_), n, 1.0 / 1024);
  // (c) The score test on sum log p over rows.
  const ScoreResult score = ScoreTest(components_, score_sum_);
  const bool has_score = score.variance > 1e-12;
  double p = std::min(1.0, share * std::min(g.p_value, p_top));
  if (has_score) p = std::min(p, share * score.p_value);
  r.p_value = p;
  r.observed = g.observed;
  r.expected = g.expected;
  r.power_tv = DetectableTv(kBins - 1, sub_level, n);
  const double top_change = DetectableShiftBinomial(n, 1.0 / 1024, sub_level) * 1024;
  const std::string stats = fmt::format(
      "{} rows, {} draws: PIT G = {:.1f} on 16 bins (p = {:.3g}); top 1/1024 bin {} drawn, "
      "{:.1f} expected (p = {:.3g}){}",
      rows_, n, g.statistic, g.p_value, top_, n_ / 1024, p_top,
      has_score ? fmt::format("; score z = {:.2f} (p = {:.3g})", score.z, score.p_value) : "");
  if (p < item.level) {
    r.status = Status::kFail;
    r.failure = results::Failure{
        fmt::format("the generated rows' draws do not follow their references: {}; adjusted "
                    "p = {:.3g} < {:.3g}",
                    stats, p, item.level),
        "",
        "",
        "",
        "",
        ""};  // pooled over many rows: no one row to give as a file
    return r;
  }
  r.note = fmt::format(
      "{}. Detects w.p. 0.9 (pooled over rows, not per row): TV {:.3g} on the PIT bins; a "
      "relative change {:.3g} of the top bin's mass{}",
      stats, r.power_tv, top_change,
      has_score ? fmt::format("; a shift of the mean log p by {:.3g} nats per draw",
                              DetectableMeanShift(score.variance, sub_level) / n_)
                : "");
  return r;
}

}  // namespace sampcert::properties

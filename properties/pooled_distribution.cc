// DIST-3 (SPEC.md sections 10 and 12): distribution on every generated row, pooled over the
// rows of a dtype: a randomized PIT on 16 fixed bins (G-test), its top bin on its own (exact
// binomial), the score test on sum log p (saddle-point tail of K(t) = sum_r n_r log sum_i
// p_i^(1+t)) and the positions of the draws inside finite ties (16 bins, G-test), at equal
// shares of the item's DIST-3 level.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
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
                             uint64_t seed, int64_t case_index, const std::string& family) {
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
  // The PIT is invariant to the order inside a tie: tokens of equal probability form one
  // segment, and a draw of any of them lands uniformly in that segment (u = F(above p(t)) + U
  // m(p(t)), m the tie's whole mass). Under the null u is still exactly uniform, and a sampler
  // that favours one token of a tie (the highest-index +inf token, say: LIM-2's defect) moves
  // no draw into the top bin, which means "the least probable mass" only for tokens that are
  // less probable. In O(V log draws): the distinct probabilities drawn, in decreasing order;
  // every token of the row adds its probability to the mass above those it exceeds (a suffix
  // of that order, by a difference array then prefix sums) or to the tie it equals.
  std::vector<long double> drawn;
  drawn.reserve(used.size());
  for (int64_t t : used) drawn.push_back(null[static_cast<std::size_t>(t)]);
  std::sort(drawn.begin(), drawn.end(), std::greater<>());
  drawn.erase(std::unique(drawn.begin(), drawn.end()), drawn.end());
  std::vector<long double> diff(drawn.size() + 1, 0), tie(drawn.size(), 0);
  // The indices of each drawn probability's tokens, in increasing order (a token's position
  // inside its tie); only in the finite regime (the ties of the limits are LIM-1's and LIM-2's).
  const bool finite = ref.regime == Regime::kFinite;
  std::vector<std::vector<int64_t>> members(drawn.size());
  for (std::size_t j = 0; j < v; ++j) {
    const long double pj = null[j];
    if (!(pj > 0)) continue;
    // The first drawn probability below pj; the one before it, if equal, is pj's tie.
    const auto first =
        std::partition_point(drawn.begin(), drawn.end(), [&](long double q) { return q >= pj; });
    const auto k = static_cast<std::size_t>(first - drawn.begin());
    diff[k] += pj;
    if (k > 0 && drawn[k - 1] == pj) {
      tie[k - 1] += pj;
      if (finite) members[k - 1].push_back(static_cast<int64_t>(j));
    }
  }
  std::vector<long double> above(drawn.size(), 0);  // F(above q) for each drawn probability q
  long double acc = 0;
  for (std::size_t k = 0; k < drawn.size(); ++k) {
    acc += diff[k];
    above[k] = acc;
  }
  RowEvidence evidence{case_index, family, v, used.size(), 0, 0, 0, 0};
  std::vector<double> row_bins(kBins, 0), row_tie_bins(kBins, 0);
  for (std::size_t k = 0; k < used.size(); ++k) {
    const long double pt = null[static_cast<std::size_t>(used[k])];
    const auto at = static_cast<std::size_t>(
        std::partition_point(drawn.begin(), drawn.end(), [&](long double q) { return q > pt; }) -
        drawn.begin());
    const double u_rand = UnitDouble(Mix(Mix(seed, 0xd153), k));
    const double u = static_cast<double>(above[at] + u_rand * tie[at]);
    const int bin = std::clamp(static_cast<int>(u * kBins), 0, kBins - 1);
    bins_[static_cast<std::size_t>(bin)] += 1;
    row_bins[static_cast<std::size_t>(bin)] += 1;
    top_ += u >= 1 - 1.0 / 1024;
    evidence.top += u >= 1 - 1.0 / 1024;
    n_ += 1;
    const std::vector<int64_t>& m = members[at];
    if (m.size() >= 2) {
      const auto rank = std::lower_bound(m.begin(), m.end(), used[k]) - m.begin();
      const double w = (static_cast<double>(rank) + UnitDouble(Mix(Mix(seed, 0x71e5), k))) /
                       static_cast<double>(m.size());
      const int tie_bin = std::clamp(static_cast<int>(w * kBins), 0, kBins - 1);
      tie_bins_[static_cast<std::size_t>(tie_bin)] += 1;
      row_tie_bins[static_cast<std::size_t>(tie_bin)] += 1;
      tie_n_ += 1;
      evidence.tie_draws += 1;
    }
  }
  const double e_bin = static_cast<double>(used.size()) / kBins;
  for (double o : row_bins) evidence.pit_chi2 += (o - e_bin) * (o - e_bin) / e_bin;
  const double e_tie = static_cast<double>(evidence.tie_draws) / kBins;
  for (double o : row_tie_bins) {
    if (e_tie > 0) evidence.tie_chi2 += (o - e_tie) * (o - e_tie) / e_tie;
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
  double row_score = 0, mean = 0, second = 0;
  for (int64_t t : used) {
    row_score +=
        std::round(static_cast<double>(std::log(null[static_cast<std::size_t>(t)])) / kLogGrid) *
        kLogGrid;
  }
  score_sum_ += row_score;
  for (std::size_t i = 0; i < comp.values.size(); ++i) {
    mean += comp.probs[i] * comp.values[i];
    second += comp.probs[i] * comp.values[i] * comp.values[i];
  }
  const double var = comp.n * std::max(0.0, second - mean * mean);
  evidence.score_dev = row_score - comp.n * mean;
  evidence.score_z = var > 1e-12 ? evidence.score_dev / std::sqrt(var) : 0;
  rows_evidence_.push_back(std::move(evidence));
  components_.push_back(std::move(comp));
  ++rows_;
}

TestResult PooledDistribution::Result(const PlanItem& item,
                                      std::vector<RowEvidence>* worst_rows) const {
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
  // The 16 bins merged into `cells` equal ones (adjacent bins: still equally probable).
  auto histogram = [](const std::vector<double>& bins, int cells_wanted) {
    Cells cells;
    cells.probability.assign(static_cast<std::size_t>(cells_wanted), 1.0 / cells_wanted);
    std::vector<int64_t> pseudo;  // one pseudo-token per draw, its bin (cell_of maps it)
    const int per = kBins / cells_wanted;
    for (int b = 0; b < kBins; ++b) {
      cells.cell_of.push_back(b / per);
      if (b % per == 0) cells.label.push_back(fmt::format("[{}/16, {}/16)", b, b + per));
      pseudo.insert(pseudo.end(), static_cast<std::size_t>(bins[static_cast<std::size_t>(b)]), b);
    }
    return GTest(pseudo, cells);
  };
  const GofResult g = histogram(bins_, kBins);
  // (b) The top bin (the least probable 1/1024 of each row's mass) on its own.
  const uint64_t n = static_cast<uint64_t>(n_);
  const double p_top = BinomialTwoSided(static_cast<uint64_t>(top_), n, 1.0 / 1024);
  // (c) The score test on sum log p over rows.
  const ScoreResult score = ScoreTest(components_, score_sum_);
  const bool has_score = score.variance > 1e-12;
  // (d) The positions inside finite ties (no draw inside a tie: no test), on as many of 16, 8,
  // 4 or 2 equal cells as keep an expected count of 50 per cell (STAT-2's floor, for the
  // G-test's tail at these levels), else 2 cells: the exact binomial.
  const bool has_ties = tie_n_ > 0;
  int tie_cells = kBins;
  while (tie_cells > 2 && tie_n_ / tie_cells < 50) tie_cells /= 2;
  const GofResult tie_g = has_ties ? histogram(tie_bins_, tie_cells) : GofResult{};
  // The sub-tests in one table: a failure names the one with the smallest p-value.
  enum SubTest { kPit, kTop, kScore, kTies };
  const double sub_p[] = {g.p_value, p_top, has_score ? score.p_value : 1.0,
                          has_ties ? tie_g.p_value : 1.0};
  const int worst =
      static_cast<int>(std::min_element(std::begin(sub_p), std::end(sub_p)) - std::begin(sub_p));
  const double p = std::min(1.0, share * sub_p[worst]);
  r.p_value = p;
  r.observed = worst == kTies ? tie_g.observed : g.observed;
  r.expected = worst == kTies ? tie_g.expected : g.expected;
  r.power_tv = DetectableTv(kBins - 1, sub_level, n);
  const double top_change = DetectableShiftBinomial(n, 1.0 / 1024, sub_level) * 1024;
  const std::string stats = fmt::format(
      "{} rows, {} draws: PIT G = {:.1f} on 16 bins (p = {:.3g}); top 1/1024 bin {} drawn, "
      "{:.1f} expected (p = {:.3g}){}{}",
      rows_, n, g.statistic, g.p_value, top_, n_ / 1024, p_top,
      has_score ? fmt::format("; score z = {:.2f} (p = {:.3g})", score.z, score.p_value) : "",
      has_ties ? fmt::format("; positions inside ties G = {:.1f} on {} cells over {} draws (p = "
                             "{:.3g})",
                             tie_g.statistic, tie_cells, tie_n_, tie_g.p_value)
               : "");
  if (p < item.level) {
    // The rows that contribute most to the sub-test that failed.
    const double e_top = 1.0 / 1024;
    auto weight = [&](const RowEvidence& e) {
      switch (worst) {
        case kTop: return static_cast<double>(e.top) - e_top * static_cast<double>(e.draws);
        case kScore: return std::fabs(e.score_dev);
        case kTies: return e.tie_chi2;
        default: return e.pit_chi2;
      }
    };
    std::vector<RowEvidence> sorted = rows_evidence_;
    std::stable_sort(sorted.begin(), sorted.end(), [&](const RowEvidence& a, const RowEvidence& b) {
      return weight(a) > weight(b);
    });
    sorted.resize(std::min<std::size_t>(3, sorted.size()));
    std::string named;
    for (const RowEvidence& e : sorted) {
      std::string what;
      switch (worst) {
        case kTop:
          what = fmt::format("{} of {} draws in the top bin, {:.3f} expected", e.top, e.draws,
                             e_top * static_cast<double>(e.draws));
          break;
        case kScore:
          what = fmt::format(
              "sum log p off its mean by {:.3g} nats over {} draws (z = {:.2f} on "
              "the row alone)",
              e.score_dev, e.draws, e.score_z);
          break;
        case kTies:
          what = fmt::format("chi-square {:.1f} on 16 bins over its {} draws inside ties",
                             e.tie_chi2, e.tie_draws);
          break;
        default:
          what = fmt::format("PIT chi-square {:.1f} on 16 bins ({} draws)", e.pit_chi2, e.draws);
      }
      named += fmt::format("{}case {} ({}, V = {}): {}", named.empty() ? "" : "; ", e.case_index,
                           e.family, e.vocab, what);
    }
    static constexpr const char* kWhat[] = {
        "PIT histogram", "top bin (the least probable 1/1024 of the mass)", "score test on log p",
        "positions inside ties (by index: tied tokens are not drawn uniformly)"};
    r.status = Status::kFail;
    r.failure = results::Failure{
        fmt::format("the generated rows' draws do not follow their references: {}; adjusted "
                    "p = {:.3g} < {:.3g} ({}); the rows contributing most: {}",
                    stats, p, item.level, kWhat[worst], named),
        "",
        "",
        "",
        "",
        ""};  // the caller gives the most contributing row as the input and its row file
    if (worst_rows != nullptr) *worst_rows = std::move(sorted);
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

// DIST-1 and DIST-2 (SPEC.md sections 10 and 12): the draws on a planned row follow the
// reference; at a truncation boundary, the reference renormalized over must-keep plus the
// may-keep tokens the sampler kept. Three sub-tests share the item's level: the G-test with
// Williams' correction on cells fixed before drawing (exact binomial with two cells), the score
// test on log p, and the band-conditional score test.
// The draw counts, seeds and levels are the plan's (REPRO-1).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "properties/portable_random.h"
#include "properties/statistical_item.h"
#include "properties/statistics.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {

using results::Status;
using results::TestResult;

std::vector<TestResult> RunDistribution(adapters::Sampler& sampler, const std::string& sampler_arg,
                                        const Plan& plan, const PlanItem& item, TestResult r,
                                        const RowCase& row) {
  const adapters::SamplerInfo& info = sampler.info();
  const Expected<ReferenceDistribution> ref = ComputeReference(row.view(), info.policies);
  auto fail = [&](std::string message) {
    FailItem(r, std::move(message), row, sampler_arg, plan, item);
    return std::vector<TestResult>{r};
  };
  if (ref.ok() && ref->any_greedy_ties) {  // MakePlan leaves such rows out
    r.status = results::Status::kNotSupported;
    r.note = "greedy ties under the `any` tie-break: only the support is constrained";
    return {r};
  }
  // The kept set at boundaries: from the sampler's probabilities where it reports them,
  // otherwise from what it draws (a may-keep token seen is kept).
  std::vector<uint8_t> kept(row.vocab(), 0);
  bool has_may = false;
  for (std::size_t i = 0; i < row.vocab(); ++i) {
    has_may |= ref->keep[i] == KeepClass::kMayKeep;
    kept[i] = ref->keep[i] == KeepClass::kMustKeep;
  }
  if (has_may && info.Has(SAMPCERT_CAP_PROBABILITIES)) {
    auto p = sampler.Probabilities(OneRow(row));
    if (!p.ok()) return fail("probabilities: " + p.error().message);
    for (std::size_t i = 0; i < row.vocab(); ++i) {
      if ((*p)[i] > 0 && ref->keep[i] == KeepClass::kMayKeep) kept[i] = 1;
    }
  }
  // One look: the draws, exact failures (a token outside [0, V), outside the support, or of
  // null probability 0), then the three sub-tests at equal shares of the level (Bonferroni).
  const double share = static_cast<double>(std::max(1, item.subtests));
  struct Look {
    GofResult g;
    ScoreResult score, band;
    bool has_score = false, has_band = false;
    double p_value = 1;  // Bonferroni-adjusted: share x the smallest sub-test p-value
    std::string worst;   // which sub-test
    double score_var = 0, band_var = 0;  // per draw
  };
  auto run_test = [&](uint64_t test_seed, uint64_t draws,
                      Look* look) -> std::optional<std::string> {
    auto tokens = Draw(sampler, row, test_seed, draws);
    if (!tokens.ok()) return "sampler error: " + tokens.error().message;
    std::vector<uint8_t> k = kept;
    for (int64_t t : *tokens) {
      if (t < 0 || static_cast<std::size_t>(t) >= row.vocab()) {
        return fmt::format("RANGE-1: drew token id {} outside [0, {})", t, row.vocab());
      }
      const KeepClass c = ref->keep[static_cast<std::size_t>(t)];
      if (c == KeepClass::kOutsideSupport || c == KeepClass::kMustDrop) {
        return fmt::format("SUPP-2: drew token {} (reference probability {:.3g})", t,
                           static_cast<double>(ref->probs[static_cast<std::size_t>(t)]));
      }
      if (c == KeepClass::kMayKeep) k[static_cast<std::size_t>(t)] = 1;
    }
    auto null = ref->RenormalizedOver(k);
    if (!null.ok()) return "SUPP-2: " + null.error().message;
    for (int64_t t : *tokens) {
      if (!((*null)[static_cast<std::size_t>(t)] > 0)) {
        return fmt::format("SUPP-2: drew token {}, of probability 0 under the reference", t);
      }
    }
    const Cells c = MakeCells(*null, draws);
    look->g = GTest(*tokens, c);
    look->p_value = std::min(1.0, share * look->g.p_value);
    look->worst = "G-test";
    // The score test on log p (power against a temperature error) and the band-conditional
    // score test on log p - E[log p | band] (power against mass moved inside a power-of-two
    // band, which the pooled band cells cannot see). Exact saddle-point tails.
    const ScoreSummary s = ScoreValues(*null);
    double sum_score = 0, sum_band = 0;
    for (int64_t t : *tokens) {
      sum_score += s.score[static_cast<std::size_t>(t)];
      sum_band += s.band[static_cast<std::size_t>(t)];
    }
    const double nd = static_cast<double>(draws);
    auto test = [&](const std::vector<double>& y, double sum, double var, ScoreResult* out,
                    const char* name) {
      // A statistic with (numerically) no variance carries no information: left out.
      if (!(var > 1e-12)) return false;
      std::vector<double> values, probs;
      for (std::size_t i = 0; i < y.size(); ++i) {
        if ((*null)[i] > 0) {
          values.push_back(y[i]);
          probs.push_back(static_cast<double>((*null)[i]));
        }
      }
      const ScoreComponent comp{nd, std::move(values), std::move(probs)};
      *out = ScoreTest(std::span(&comp, 1), sum);
      const double p = std::min(1.0, share * out->p_value);
      if (p < look->p_value) {
        look->p_value = p;
        look->worst = name;
      }
      return true;
    };
    look->score_var = s.score_var;
    look->band_var = s.band_var;
    look->has_score = test(s.score, sum_score, s.score_var, &look->score, "score test on log p");
    look->has_band = test(s.band, sum_band, s.band_var, &look->band,
                          "band-conditional score test on log p - E[log p | band]");
    return std::nullopt;
  };
  auto describe = [](const Look& l) {
    std::string d =
        fmt::format("G = {:.1f} on {} cells (p = {:.3g})", l.g.statistic, l.g.cells, l.g.p_value);
    if (l.has_score)
      d += fmt::format("; score z = {:.2f} (p = {:.3g})", l.score.z, l.score.p_value);
    if (l.has_band) {
      d +=
          fmt::format("; band-conditional score z = {:.2f} (p = {:.3g})", l.band.z, l.band.p_value);
    }
    return d;
  };
  const uint64_t n = item.draws;
  const double sub_level = item.level / share;
  Look first;
  if (auto err = run_test(item.seed, n, &first)) return fail(*err);
  const GofResult& g = first.g;
  r.draws = n;
  r.cases = 1;
  r.p_value = first.p_value;
  r.observed = g.observed;
  r.expected = g.expected;
  double worst_dev = 0;
  for (std::size_t c = 0; c < g.observed.size(); ++c) {
    worst_dev = std::max(worst_dev, std::fabs(g.observed[c] - g.expected[c]) /
                                        std::sqrt(std::max(g.expected[c], 1.0)));
  }
  r.worst_error = worst_dev;  // the largest standardized cell deviation
  if (first.p_value < item.level) {
    // Suspicious: re-run from a fresh seed with the plan's re-run draws at the reserve's level.
    // A failure needs both; the false-alarm rate stays within the first test's level.
    Look second;
    const uint64_t n2 = item.rerun_draws;
    if (auto err = run_test(Mix(item.seed, 1), n2, &second)) return fail(*err);
    if (second.p_value < item.rerun_level) {
      r.observed = second.g.observed;
      r.expected = second.g.expected;
      r.p_value = second.p_value;
      r.draws = n2;
      return fail(fmt::format(
          "draws do not follow the reference ({} draws): {}; worst: {}, adjusted p = {:.3g} < "
          "{:.3g} (first look: {}, adjusted p = {:.3g} < {:.3g})",
          n2, describe(second), second.worst, second.p_value, item.rerun_level, describe(first),
          first.p_value, item.level));
    }
    r.note = fmt::format(
        "first look p = {:.3g} below the level; the re-run ({} draws) gave p = "
        "{:.3g}. ",
        first.p_value, n2, second.p_value);
  }
  // Power, stated against named alternatives (each at its sub-test's level, w.p. 0.9).
  const double nd = static_cast<double>(n);
  if (g.cells >= 3) {
    r.power_tv = DetectableTv(g.df, sub_level, n);
  } else if (g.cells == 2) {
    const double total = g.expected[0] + g.expected[1];
    r.power_tv = total > 0 ? DetectableShiftBinomial(n, g.expected[0] / total, sub_level) : 1;
  } else {
    // A point mass: any other token drawn is an exact failure, missed only if none of n draws
    // lands on it.
    r.power_tv = 1 - PortableExp(PortableLog(0.1) / nd);
  }
  r.note += fmt::format("{}. Detects w.p. 0.9: TV {:.3g} on its {} cell(s)", describe(first),
                        r.power_tv, g.cells);
  if (first.has_score) {
    r.note += fmt::format(
        "; a temperature error of {:.3g}%",
        100 * DetectableMeanShift(nd * first.score_var, sub_level) / (nd * first.score_var));
  }
  if (first.has_band) {
    r.note += fmt::format("; a shift of E[log p | band] by {:.3g} nats inside the bands",
                          DetectableMeanShift(nd * first.band_var, sub_level) / nd);
  }
  if (r.power_tv > plan.profile.required_tv) {
    r.status = Status::kInconclusive;
    r.note += fmt::format(" (the profile requires TV {:.3g})", plan.profile.required_tv);
  }
  return {r};
}

}  // namespace sampcert::properties

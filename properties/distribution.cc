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

DistributionLook EvaluateDistributionLook(std::span<const int64_t> tokens,
                                          std::span<const long double> null, int subtests,
                                          std::span<const double> token_error) {
  const double share = static_cast<double>(std::max(1, subtests));
  DistributionLook look;
  const Cells c = MakeCells(null, tokens.size());
  look.tolerant = !token_error.empty();
  look.g = GTest(tokens, c, token_error);
  look.p_value = std::min(1.0, share * look.g.p_value);
  look.worst = "G-test";
  // The score test on log p (power against a temperature error) and the band-conditional
  // score test on log p - E[log p | band] (power against mass moved inside a power-of-two
  // band, which the pooled band cells cannot see). Exact saddle-point tails.
  const ScoreSummary s = ScoreValues(null);
  double sum_score = 0, sum_band = 0;
  for (int64_t t : tokens) {
    sum_score += s.score[static_cast<std::size_t>(t)];
    sum_band += s.band[static_cast<std::size_t>(t)];
  }
  const double nd = static_cast<double>(tokens.size());
  auto test = [&](const std::vector<double>& y, double sum, double var, double* tol_out,
                  ScoreResult* out, const char* name) {
    // A statistic with (numerically) no variance carries no information: left out.
    if (!(var > 1e-12)) return false;
    std::vector<double> values, probs;
    for (std::size_t i = 0; i < y.size(); ++i) {
      if (null[i] > 0) {
        values.push_back(y[i]);
        probs.push_back(static_cast<double>(null[i]));
      }
    }
    const ScoreComponent comp{nd, std::move(values), std::move(probs)};
    *tol_out = ScoreMeanTolerance(y, null, token_error);
    *out = ScoreTest(std::span(&comp, 1), sum, nd * *tol_out);
    const double p = std::min(1.0, share * out->p_value);
    if (p < look.p_value) {
      look.p_value = p;
      look.worst = name;
    }
    return true;
  };
  look.score_var = s.score_var;
  look.band_var = s.band_var;
  look.has_score =
      test(s.score, sum_score, s.score_var, &look.score_tol, &look.score, "score test on log p");
  look.has_band = test(s.band, sum_band, s.band_var, &look.band_tol, &look.band,
                       "band-conditional score test on log p - E[log p | band]");
  return look;
}

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
  // One run: the sequential looks on one stream of draws (look k draws up to looks[k]), each
  // look checking its new draws exactly first (a token outside [0, V), outside the support, or
  // of null probability 0: an exact failure), then the three sub-tests on all draws so far.
  struct Run {
    int rejected = -1;  // the look that rejected, -1: none
    uint64_t drawn = 0;
    DistributionLook last;  // the last look evaluated
  };
  auto run = [&](uint64_t test_seed, const std::vector<uint64_t>& looks,
                 const std::vector<double>& levels, Run* out) -> std::optional<std::string> {
    std::vector<int64_t> tokens;
    std::vector<uint8_t> k = kept;
    std::optional<std::string> error;
    out->rejected = FirstRejectingLook(looks, levels, [&](uint64_t n) {
      const std::size_t checked = tokens.size();
      if (auto err = DrawMore(sampler, row, test_seed, n, &tokens)) {
        error = "sampler error: " + err->message;
        return -1.0;
      }
      out->drawn = tokens.size();
      for (std::size_t i = checked; i < tokens.size(); ++i) {
        const int64_t t = tokens[i];
        if (t < 0 || static_cast<std::size_t>(t) >= row.vocab()) {
          error = fmt::format("RANGE-1: drew token id {} outside [0, {})", t, row.vocab());
          return -1.0;
        }
        const KeepClass c = ref->keep[static_cast<std::size_t>(t)];
        if (c == KeepClass::kOutsideSupport || c == KeepClass::kMustDrop) {
          error = fmt::format("SUPP-2: drew token {} (reference probability {:.3g})", t,
                              static_cast<double>(ref->probs[static_cast<std::size_t>(t)]));
          return -1.0;
        }
        if (c == KeepClass::kMayKeep) k[static_cast<std::size_t>(t)] = 1;
      }
      auto null = ref->RenormalizedOver(k);
      if (!null.ok()) {
        error = "SUPP-2: " + null.error().message;
        return -1.0;
      }
      for (int64_t t : tokens) {
        if (!((*null)[static_cast<std::size_t>(t)] > 0)) {
          error = fmt::format("SUPP-2: drew token {}, of probability 0 under the reference", t);
          return -1.0;
        }
      }
      // bf16 / fp16 classes: the null admits the class's tolerance (TOL-7); fp32: empty.
      out->last =
          EvaluateDistributionLook(tokens, *null, item.subtests,
                                   NullTolerance(*null, ref->log_weights, info.policies.accuracy));
      return out->last.p_value;
    });
    return error;
  };
  auto describe = [](const DistributionLook& l) {
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
  auto look_name = [](const std::vector<uint64_t>& looks, int k) {
    return fmt::format("look {} of {} ({} draws)", k + 1, looks.size(),
                       looks[static_cast<std::size_t>(k)]);
  };
  auto fill = [&](const DistributionLook& l) {
    r.p_value = l.p_value;
    r.observed = l.g.observed;
    r.expected = l.g.expected;
    double worst_dev = 0;
    for (std::size_t c = 0; c < l.g.observed.size(); ++c) {
      worst_dev = std::max(worst_dev, std::fabs(l.g.observed[c] - l.g.expected[c]) /
                                          std::sqrt(std::max(l.g.expected[c], 1.0)));
    }
    r.worst_error = worst_dev;  // the largest standardized cell deviation
  };
  r.cases = 1;
  Run first;
  if (auto err = run(item.seed, item.looks, item.look_levels, &first)) return fail(*err);
  fill(first.last);
  r.draws = first.drawn;
  // The run whose last look states the power: the first, or the re-run when the first stopped.
  Run stated = first;
  uint64_t stated_n = item.draws;
  double stated_level = item.look_levels.back();
  if (first.rejected >= 0) {
    // A look rejected: re-run from a fresh seed with the plan's re-run draws and looks at the
    // reserve's level; a failure needs both (SPEC STAT-4).
    Run second;
    if (auto err = run(Mix(item.seed, 1), item.rerun_looks, item.rerun_look_levels, &second)) {
      return fail(*err);
    }
    r.draws = first.drawn + second.drawn;
    const std::size_t fk = static_cast<std::size_t>(first.rejected);
    if (second.rejected >= 0) {
      fill(second.last);
      const std::size_t sk = static_cast<std::size_t>(second.rejected);
      return fail(fmt::format(
          "draws do not follow the reference ({} draws in all): re-run {}: {}; worst: {}, adjusted "
          "p = {:.3g} < {:.3g} (first run {}: {}, adjusted p = {:.3g} < {:.3g})",
          r.draws, look_name(item.rerun_looks, second.rejected), describe(second.last),
          second.last.worst, second.last.p_value, item.rerun_look_levels[sk],
          look_name(item.looks, first.rejected), describe(first.last), first.last.p_value,
          item.look_levels[fk]));
    }
    r.note = fmt::format(
        "first run {} gave p = {:.3g} below its level {:.3g}; the re-run ({} draws) passed every "
        "look (last p = {:.3g}). ",
        look_name(item.looks, first.rejected), first.last.p_value, item.look_levels[fk],
        second.drawn, second.last.p_value);
    stated = second;
    stated_n = item.rerun_draws;
    stated_level = item.rerun_look_levels.back();
  }
  // Power at the last look, stated against named alternatives (each at its sub-test's share of
  // the last look's level, w.p. 0.9).
  const DistributionLook& last = stated.last;
  const GofResult& g = last.g;
  const double sub_level = stated_level / static_cast<double>(std::max(1, item.subtests));
  const double nd = static_cast<double>(stated_n);
  if (g.cells >= 3) {
    r.power_tv = DetectableTv(g.df, sub_level, stated_n, g.delta);
  } else if (g.cells == 2) {
    const double total = g.expected[0] + g.expected[1];
    r.power_tv = !(total > 0) ? 1
                 : last.tolerant
                     ? DetectableShiftBinomial(stated_n, g.expected[0] / total, sub_level,
                                               g.interval_lo, g.interval_hi)
                     : DetectableShiftBinomial(stated_n, g.expected[0] / total, sub_level);
  } else {
    // A point mass: any other token drawn is an exact failure, missed only if none of n draws
    // lands on it.
    r.power_tv = 1 - PortableExp(PortableLog(0.1) / nd);
  }
  if (last.tolerant) {
    r.note += fmt::format("Null admits the {} class's tolerance (chi-square radius {:.3g}{}). ",
                          adapters::NameOrThrow(info.policies.accuracy), g.delta,
                          g.cells == 2 ? fmt::format(", cell 0 mass in [{:.6g}, {:.6g}]",
                                                     g.interval_lo, g.interval_hi)
                                       : std::string());
  }
  r.note +=
      fmt::format("{} looks, last ({} draws): {}. Detects w.p. 0.9: TV {:.3g} on its {} cell(s)",
                  item.looks.size(), stated_n, describe(last), r.power_tv, g.cells);
  if (last.has_score) {
    r.note +=
        fmt::format("; a temperature error of {:.3g}%",
                    100 * DetectableMeanShift(nd * last.score_var, sub_level, nd * last.score_tol) /
                        (nd * last.score_var));
  }
  if (last.has_band) {
    r.note +=
        fmt::format("; a shift of E[log p | band] by {:.3g} nats inside the bands",
                    DetectableMeanShift(nd * last.band_var, sub_level, nd * last.band_tol) / nd);
  }
  const double required_tv = RequiredTv(plan, item);
  r.note += fmt::format("; powered for TV {:.3g}", required_tv);
  if (required_tv != plan.profile.required_tv) {
    r.note += fmt::format(
        " (the {} class's requirement: the profile's {:.3g} is out of reach under its "
        "tolerance)",
        adapters::NameOrThrow(info.policies.accuracy), plan.profile.required_tv);
  }
  if (r.power_tv > required_tv) {
    r.status = Status::kInconclusive;
    r.note += fmt::format(" (requires TV {:.3g}", required_tv);
    if (item.draws < item.required_draws) {
      r.note += fmt::format(
          "; the draw budget capped this test at {} draws, its power needs {}: raise --max-draws "
          "or lower the declared draw cost to reach it",
          item.draws, item.required_draws);
    }
    r.note += ")";
  }
  return {r};
}

}  // namespace sampcert::properties

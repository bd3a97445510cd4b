// DIST-1 and DIST-2 (SPEC.md sections 10 and 12): the draws on a planned row follow the
// reference; at a truncation boundary, the reference renormalized over must-keep plus the
// may-keep tokens the sampler kept. Three sub-tests share the item's level: the G-test with
// Williams' correction on cells fixed before drawing (exact binomial with two cells), the score
// test on log p, and the band-conditional score test.
// The draw counts, seeds and levels are the plan's (REPRO-1); the run / re-run / power rule is
// the one of every test (sequential_rule.h).
#include "properties/distribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "adapters/declarations.h"
#include "properties/draw_planning.h"
#include "properties/families.h"
#include "properties/plan.h"
#include "properties/portable_random.h"
#include "properties/sequential_rule.h"
#include "properties/statistics/binomial.h"
#include "properties/statistics/cells.h"
#include "properties/statistics/chi_square.h"
#include "properties/statistics/score.h"
#include "properties/statistics/tolerant_null.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {

using results::Status;
using results::TestResult;

Expected<std::vector<int64_t>> Draw(adapters::Sampler& sampler, const RowCase& row, uint64_t seed,
                                    uint64_t n) {
  std::vector<int64_t> all;
  all.reserve(n);
  if (auto err = DrawMore(sampler, row, seed, n, &all)) return *err;
  return all;
}

std::optional<Error> DrawMore(adapters::Sampler& sampler, const RowCase& row, uint64_t seed,
                              uint64_t n, std::vector<int64_t>* tokens, uint64_t offset) {
  const uint64_t chunk = 1 << 20;
  for (uint64_t first = tokens->size(); first < n; first += std::min(chunk, n - first)) {
    auto got = sampler.Sample(OneRow(row), seed, offset + first, std::min(chunk, n - first));
    if (!got.ok()) return got.error();
    tokens->insert(tokens->end(), got->begin(), got->end());
  }
  return std::nullopt;
}

DistributionLook EvaluateDistributionLook(std::span<const int64_t> tokens,
                                          std::span<const long double> null, int subtests,
                                          std::span<const double> token_error) {
  const double share = static_cast<double>(std::max(1, subtests));
  DistributionLook look;
  const Cells c = MakeCells(null, tokens.size());
  look.tolerant = !token_error.empty();
  look.g = GTest(tokens, c, token_error);
  if (c.label.size() == look.g.observed.size()) look.labels = c.label;
  const std::size_t labelled = std::min(look.g.observed.size(), c.label.size());
  for (std::size_t k : results::MostDeviatingCells(std::span(look.g.observed).first(labelled),
                                                   look.g.expected, 3)) {
    look.evidence.push_back(
        {c.label[k], c.token[k], c.probability[k], look.g.observed[k], look.g.expected[k]});
  }
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

std::string DescribeEvidence(const std::vector<CellEvidence>& evidence, const RowCase* row) {
  std::string d;
  for (const CellEvidence& e : evidence) {
    if (!d.empty()) d += "; ";
    d += fmt::format("{} (p = {:.3g}", e.label, e.probability);
    if (row != nullptr && e.token >= 0 && static_cast<std::size_t>(e.token) < row->vocab()) {
      d += fmt::format(", logit {}", row->Logit(static_cast<std::size_t>(e.token)));
    }
    d += fmt::format("): {:.0f} drawn, {:.1f} expected", e.observed, e.expected);
  }
  return d;
}

PlannedCells PlanCells(const ReferenceDistribution& ref, uint64_t max_draws,
                       AccuracyClass accuracy) {
  PlannedCells out;
  // At a boundary the sampler may keep every may-keep token, adding cells: plan the draws for
  // the larger of the two cell sets.
  std::vector<long double> planned_null = ref.probs;
  out.cells = MakeCells(ref.probs, max_draws);
  std::vector<uint8_t> all_kept(ref.keep.size(), 0);
  for (std::size_t i = 0; i < all_kept.size(); ++i) {
    all_kept[i] = ref.keep[i] == KeepClass::kMustKeep || ref.keep[i] == KeepClass::kMayKeep;
  }
  if (auto wide = ref.RenormalizedOver(all_kept); wide.ok()) {
    Cells more = MakeCells(*wide, max_draws);
    if (more.probability.size() > out.cells.probability.size()) {
      out.cells = std::move(more);
      planned_null = *wide;
    }
  }
  // bf16 / fp16: the null admits the class's tolerance (TOL-7): a chi-square radius for the
  // G-test, an interval of masses for a two-cell test. Empty (fp32): the reference.
  out.tolerance = NullTolerance(planned_null, ref.log_weights, accuracy);
  out.delta = ChiSquareRadius(out.cells, out.tolerance);
  const Cells& c = out.cells;
  if (c.probability.size() == 2) {
    const double total = c.probability[0] + c.probability[1];
    double e0 = 0, e1 = 0;
    for (std::size_t i = 0; i < out.tolerance.size(); ++i) {
      (c.cell_of[i] == 0 ? e0 : e1) += c.cell_of[i] >= 0 ? out.tolerance[i] : 0;
    }
    out.interval = AdmissibleMass(c.probability[0] / total, e0, e1);
  }
  out.df = static_cast<double>(c.probability.size()) - 1;
  return out;
}

void PlanDistribution(const PlanContext& ctx, PlanItem* it) {
  const Profile& profile = ctx.profile;
  it->subtests = 3;
  it->required_draws = 4096;
  if (!ctx.ref) return;
  const PlannedCells pc = PlanCells(*ctx.ref, profile.max_draws, ctx.info.policies.accuracy);
  const Cells& cells = pc.cells;
  // The G-test's share of the last look's level, where the stated power must hold.
  const double g_level = kLookShare[kLooks - 1] * it->level / it->subtests;
  if (pc.tolerant() && cells.probability.size() == 2) {
    const double p0 = cells.probability[0] / (cells.probability[0] + cells.probability[1]);
    auto detects = [&](uint64_t n) {
      return BinomialDetects(n, p0, kSlack * profile.required_tv, g_level, pc.interval);
    };
    it->required_draws = SmallestDraws(4096, profile.max_draws, detects);
    if (!detects(it->required_draws)) {
      it->required_tv = RoundUpTwoDigits(DetectableShiftBinomial(
          it->required_draws, p0, g_level, pc.interval.first, pc.interval.second));
    }
  } else if (pc.tolerant() && pc.delta > 0) {
    const uint64_t needed = DrawsForTv(pc.df, g_level, profile.required_tv, pc.delta);
    it->required_draws = std::min(profile.max_draws, std::max<uint64_t>(needed, 4096));
    if (needed > profile.max_draws) {
      it->required_tv =
          RoundUpTwoDigits(DetectableTv(pc.df, g_level, it->required_draws, pc.delta));
    }
  } else if (cells.probability.size() == 2) {
    // Two cells: the exact binomial's own power.
    const double p0 = cells.probability[0] / (cells.probability[0] + cells.probability[1]);
    it->required_draws = SmallestDraws(4096, profile.max_draws, [&](uint64_t n) {
      return BinomialDetects(n, p0, kSlack * profile.required_tv, g_level);
    });
  } else {
    it->required_draws =
        std::min(profile.max_draws,
                 std::max<uint64_t>(DrawsForTv(pc.df, g_level, profile.required_tv), 4096));
  }
}

namespace {

std::string DescribeLook(const DistributionLook& l) {
  std::string d =
      fmt::format("G = {:.1f} on {} cells (p = {:.3g})", l.g.statistic, l.g.cells, l.g.p_value);
  if (l.has_score) d += fmt::format("; score z = {:.2f} (p = {:.3g})", l.score.z, l.score.p_value);
  if (l.has_band) {
    d += fmt::format("; band-conditional score z = {:.2f} (p = {:.3g})", l.band.z, l.band.p_value);
  }
  return d;
}

void FillLook(const DistributionLook& l, TestResult* r) {
  r->p_value = l.p_value;
  r->observed = l.g.observed;
  r->expected = l.g.expected;
  r->cells = l.labels;
  double worst_dev = 0;
  for (std::size_t c = 0; c < l.g.observed.size(); ++c) {
    worst_dev = std::max(worst_dev, std::fabs(l.g.observed[c] - l.g.expected[c]) /
                                        std::sqrt(std::max(l.g.expected[c], 1.0)));
  }
  r->worst_error = worst_dev;  // the largest standardized cell deviation
}

// Checks the draws tokens[checked..] exactly (a token outside [0, V), outside the support, or
// must-drop is an exact failure) and marks the may-keep tokens seen as kept.
std::optional<std::string> CheckDraws(const std::vector<int64_t>& tokens, std::size_t checked,
                                      const ReferenceDistribution& ref, std::size_t v,
                                      std::vector<uint8_t>* kept) {
  for (std::size_t i = checked; i < tokens.size(); ++i) {
    const int64_t t = tokens[i];
    if (t < 0 || static_cast<std::size_t>(t) >= v) {
      return fmt::format("RANGE-1: drew token id {} outside [0, {})", t, v);
    }
    const KeepClass c = ref.keep[static_cast<std::size_t>(t)];
    if (c == KeepClass::kOutsideSupport || c == KeepClass::kMustDrop) {
      return fmt::format("SUPP-2: drew token {} (reference probability {:.3g})", t,
                         static_cast<double>(ref.probs[static_cast<std::size_t>(t)]));
    }
    if (c == KeepClass::kMayKeep) (*kept)[static_cast<std::size_t>(t)] = 1;
  }
  return std::nullopt;
}

// The stated power of the deciding run's last look, appended to the note: the TV on its cells,
// the temperature error and the band shift it detects w.p. 0.9.
double StatePower(const DistributionLook& last, uint64_t n, double level, const ItemRun& ctx,
                  TestResult* r) {
  const GofResult& g = last.g;
  const double sub_level = level / static_cast<double>(std::max(1, ctx.item.subtests));
  const double nd = static_cast<double>(n);
  if (g.cells >= 3) {
    r->power_tv = DetectableTv(g.df, sub_level, n, g.delta);
  } else if (g.cells == 2) {
    const double total = g.expected[0] + g.expected[1];
    r->power_tv = !(total > 0)    ? 1
                  : last.tolerant ? DetectableShiftBinomial(n, g.expected[0] / total, sub_level,
                                                            g.interval_lo, g.interval_hi)
                                  : DetectableShiftBinomial(n, g.expected[0] / total, sub_level);
  } else {
    // A point mass: any other token drawn is an exact failure, missed only if none of n draws
    // lands on it.
    r->power_tv = 1 - PortableExp(PortableLog(0.1) / nd);
  }
  if (last.tolerant) {
    r->note += fmt::format("Null admits the {} class's tolerance (chi-square radius {:.3g}{}). ",
                           adapters::NameOrThrow(ctx.sampler.info().policies.accuracy), g.delta,
                           g.cells == 2 ? fmt::format(", cell 0 mass in [{:.6g}, {:.6g}]",
                                                      g.interval_lo, g.interval_hi)
                                        : std::string());
  }
  r->note +=
      fmt::format("{} looks, last ({} draws): {}. Detects w.p. 0.9: TV {:.3g} on its {} cell(s)",
                  ctx.item.looks.size(), n, DescribeLook(last), r->power_tv, g.cells);
  if (last.has_score) {
    r->note +=
        fmt::format("; a temperature error of {:.3g}%",
                    100 * DetectableMeanShift(nd * last.score_var, sub_level, nd * last.score_tol) /
                        (nd * last.score_var));
  }
  if (last.has_band) {
    r->note +=
        fmt::format("; a shift of E[log p | band] by {:.3g} nats inside the bands",
                    DetectableMeanShift(nd * last.band_var, sub_level, nd * last.band_tol) / nd);
  }
  return r->power_tv;
}

}  // namespace

std::vector<TestResult> RunDistribution(const ItemRun& ctx) {
  const RowCase& row = *ctx.row;
  const PlanItem& item = ctx.item;
  const adapters::SamplerInfo& info = ctx.sampler.info();
  const Expected<ReferenceDistribution> ref = ComputeReference(row.view(), info.policies);
  TestResult r = ctx.base;
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
    auto p = ctx.sampler.Probabilities(OneRow(row));
    if (!p.ok()) {
      FailItem(r, "probabilities: " + p.error().message, ctx);
      return {r};
    }
    for (std::size_t i = 0; i < row.vocab(); ++i) {
      if ((*p)[i] > 0 && ref->keep[i] == KeepClass::kMayKeep) kept[i] = 1;
    }
  }
  using Run = SequentialRun<DistributionLook>;
  StatisticalTest<DistributionLook> test;
  // One run: the sequential looks on one stream of draws (look k draws up to looks[k]), each
  // look checking its new draws exactly first, then the three sub-tests on all draws so far.
  test.run = [&](uint64_t seed, const std::vector<uint64_t>& looks,
                 const std::vector<double>& levels, Run* out) -> std::optional<std::string> {
    std::vector<int64_t> tokens;
    std::vector<uint8_t> k = kept;
    std::optional<std::string> error;
    out->rejected = FirstRejectingLook(looks, levels, [&](uint64_t n) {
      const std::size_t checked = tokens.size();
      if (auto err = DrawMore(ctx.sampler, row, seed, n, &tokens)) {
        error = "sampler error: " + err->message;
        return -1.0;
      }
      out->drawn = tokens.size();
      if ((error = CheckDraws(tokens, checked, *ref, row.vocab(), &k))) return -1.0;
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
  test.fill = FillLook;
  test.p_value = [](const DistributionLook& l) { return l.p_value; };
  const char* what = r.property == "LIM-2"   ? "the +inf logits are not drawn uniformly"
                     : r.property == "LIM-1" ? "the arg-max set is not drawn per the tie-break"
                                             : "draws do not follow the reference";
  test.failure = [&row, what](const Run& first, const Run& second, const auto& why) {
    return fmt::format(
        "{} ({} draws in all): re-run {}: {}; worst: {}, adjusted p = {:.3g} < {:.3g} (first "
        "run {}: {}, adjusted p = {:.3g} < {:.3g}); largest deviations (re-run): {}",
        what, why.all_draws, why.second_look, DescribeLook(second.last), second.last.worst,
        why.second_p, why.second_level, why.first_look, DescribeLook(first.last), why.first_p,
        why.first_level, DescribeEvidence(second.last.evidence, &row));
  };
  test.power = [&](const DistributionLook& last, uint64_t n, double level, TestResult* out) {
    return StatePower(last, n, level, ctx, out);
  };
  test.requirement = {"TV ", "TV ", RequiredTv(ctx.plan, item), ctx.plan.profile.required_tv};
  return RunStatisticalTest(ctx, std::move(r), test);
}

}  // namespace sampcert::properties

// DIST-1 and DIST-2 (SPEC.md sections 10 and 12): the draws on a planned row follow the
// reference (G-test with Williams' correction on cells fixed before drawing); at a truncation
// boundary, the reference renormalized over must-keep plus the may-keep tokens the sampler kept.
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
  auto run_test = [&](uint64_t test_seed, uint64_t draws,
                      GofResult* g) -> std::optional<std::string> {
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
    const Cells c = MakeCells(*null, draws);
    *g = GTest(*tokens, c);
    return std::nullopt;
  };
  const uint64_t n = item.draws;
  GofResult g;
  if (auto err = run_test(item.seed, n, &g)) return fail(*err);
  r.draws = n;
  r.cases = 1;
  r.p_value = g.p_value;
  r.power_tv = DetectableTv(g.df, item.level, n);
  r.observed = g.observed;
  r.expected = g.expected;
  double worst_dev = 0;
  for (std::size_t c = 0; c < g.observed.size(); ++c) {
    worst_dev = std::max(worst_dev, std::fabs(g.observed[c] - g.expected[c]) /
                                        std::sqrt(std::max(g.expected[c], 1.0)));
  }
  r.worst_error = worst_dev;  // the largest standardized cell deviation
  if (g.p_value < item.level) {
    // Suspicious: re-run from a fresh seed with the plan's re-run draws at the reserve's level.
    // A failure needs both; the false-alarm rate stays within the first test's level.
    GofResult g2;
    const uint64_t n2 = item.rerun_draws;
    if (auto err = run_test(Mix(item.seed, 1), n2, &g2)) return fail(*err);
    if (g2.p_value < item.rerun_level) {
      r.observed = g2.observed;
      r.expected = g2.expected;
      r.p_value = g2.p_value;
      r.draws = n2;
      return fail(
          fmt::format("draws do not follow the reference: G = {:.1f} on {} cells, p = "
                      "{:.3g} < {:.3g} (first look p = {:.3g} < {:.3g})",
                      g2.statistic, g2.cells, g2.p_value, item.rerun_level, g.p_value, item.level));
    }
    r.note = fmt::format(
        "first look p = {:.3g} below the level; the re-run ({} draws) gave p = "
        "{:.3g}",
        g.p_value, n2, g2.p_value);
  }
  if (g.df >= 1 && r.power_tv > plan.profile.required_tv) {
    r.status = Status::kInconclusive;
    r.note = fmt::format("{} draws detect TV {:.3g}, the profile requires {:.3g}", n, r.power_tv,
                         plan.profile.required_tv);
  }
  if (g.df < 1) r.note = "one cell: the exact checks cover this row";
  return {r};
}

}  // namespace sampcert::properties

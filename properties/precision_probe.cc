// The precision probe (SPEC.md section 12, TOL-7): DIST-1 on a two-token row whose
// probabilities lie a quarter of a bf16 ulp from bf16 rounding boundaries, planned for its own
// alternative (a sampler carrying its probabilities in bf16 while declaring more) rather than
// the profile's TV. It runs as a distribution test (RunDistribution).
#include <algorithm>

#include "properties/distribution.h"
#include "properties/draw_planning.h"
#include "properties/families.h"
#include "properties/plan.h"
#include "properties/statistics/binomial.h"
#include "properties/statistics/cells.h"
#include "properties/statistics/tolerant_null.h"

namespace sampcert::properties {

std::vector<std::pair<std::string, RowCase>> PrecisionProbeRows(DType dtype, uint32_t) {
  // Two tokens at (0.50183, 0.49817): a sampler that carries its probabilities in bf16 draws
  // 0.50098 : 0.49902 (TV 8.5e-4). The logit 2^-7 - 2^-11 is exact in every dtype.
  return {{"rounding_probe_V2", MakeRow(dtype, {0x1p-7f - 0x1p-11f, 0.0f}, 1.0f, 114)}};
}

void PlanPrecisionProbe(const PlanContext& ctx, PlanItem* it) {
  const Profile& profile = ctx.profile;
  it->subtests = 3;
  it->required_draws = 4096;
  if (!ctx.ref) return;
  // The probe's target is far below the profile's TV: 16x its draws (two cells, cheap).
  it->required_draws = 16 * profile.max_draws;
  const PlannedCells pc = PlanCells(*ctx.ref, profile.max_draws, ctx.info.policies.accuracy);
  const Cells& cells = pc.cells;
  if (!pc.tolerant() || cells.probability.size() != 2) return;
  // Under a tolerant class whose interval excludes the probe's bf16 rounding (fp16), as many
  // more (up to 64x) as detecting that rounding beyond the interval w.p. 0.9 needs.
  const double g_level = kLookShare[kLooks - 1] * it->level / it->subtests;
  const double b0 = RoundBf16(cells.probability[0]);
  const double b1 = RoundBf16(cells.probability[1]);
  const double target = b0 / (b0 + b1);
  if (target >= pc.interval.first && target <= pc.interval.second) return;
  while (it->required_draws < 64 * profile.max_draws &&
         BinomialIntervalPower(it->required_draws, pc.interval.first, pc.interval.second, target,
                               g_level) < 0.9) {
    it->required_draws *= 2;
  }
}

}  // namespace sampcert::properties

// DEV-1 (SPEC.md section 10, POL-5): a declared greedy threshold is a Warning with its size.
#include <fmt/format.h>

#include "properties/families.h"
#include "properties/plan.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

using results::Status;
using results::TestResult;

bool DeviationApplies(const adapters::SamplerInfo& info) {
  return info.policies.greedy_threshold > 0;
}

ResultKeys DeviationKeys(const Plan&, const PlanItem&, const adapters::SamplerInfo&, int64_t) {
  return {{"DEV-1", "greedy_threshold"}};
}

std::vector<TestResult> RunDeviation(const ItemRun& run) {
  adapters::Sampler& sampler = run.sampler;
  const PlanItem& item = run.item;
  TestResult r;
  r.property = "DEV-1";
  r.dtype = item.dtype;
  r.family = "greedy_threshold";
  const float g = sampler.info().policies.greedy_threshold;
  const RowCase row = MakeRow(DTypeFromName(item.dtype), {0.0f, 0.5f, 1.0f}, 1.0f, 0);
  RowCase tiny = row;
  tiny.SetLogit(1, 0.0f);
  tiny.SetLogit(2, g / 4);  // one token ahead by g/4 at T = g/2: weights 1 : e^0.5
  tiny.temperature = g / 2;
  Policies exact = sampler.info().policies;
  exact.greedy_threshold = 0;
  auto a = ComputeReference(tiny.view(), exact);
  auto b = ComputeReference(tiny.view(), sampler.info().policies);
  r.status = Status::kWarning;
  r.cases = 1;
  if (a.ok() && b.ok()) r.worst_error = static_cast<double>(TotalVariation(a->probs, b->probs));
  r.worst_input = Describe(tiny);
  r.note = fmt::format(
      "declared greedy threshold {}: temperatures below it are treated as 0; "
      "at T = {} this moves {:.3g} of the mass (total variation)",
      g, g / 2, r.worst_error);
  return {r};
}

}  // namespace sampcert::properties

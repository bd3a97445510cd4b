#include "properties/reproduction.h"

#include <fmt/format.h>

namespace sampcert::properties {

std::string ReproductionCommand(const std::string& sampler_arg, const Plan& plan,
                                const PlanItem& item, int64_t only_case) {
  std::string out = fmt::format("sampcert run --sampler {} --profile {} --seed {}", sampler_arg,
                                plan.profile.name, plan.seed);
  if (plan.options.max_draws > 0) out += fmt::format(" --max-draws {}", plan.options.max_draws);
  if (FamilyOf(item.kind).placement == Placement::kPerDtype && item.name.empty()) {
    out += fmt::format(" --dtype {}", item.dtype);
    if (only_case >= 0) out += fmt::format(" --case {}", only_case);
  } else {
    out += fmt::format(" --item {}", item.Id());
  }
  return out;
}

}  // namespace sampcert::properties

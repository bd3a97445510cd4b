#include "properties/reproduction.h"

#include <fmt/format.h>

namespace sampcert::properties {

namespace {
std::string& ToolCommandStorage() {
  static std::string command = "sampcert";
  return command;
}
}  // namespace

void SetToolCommand(std::string command) { ToolCommandStorage() = std::move(command); }
const std::string& ToolCommand() { return ToolCommandStorage(); }

std::string ReproductionCommand(const std::string& sampler_arg, const Plan& plan,
                                const PlanItem& item, int64_t only_case) {
  std::string out = fmt::format("{} run --sampler {} --profile {} --seed {}", ToolCommand(),
                                sampler_arg, plan.profile.name, plan.seed);
  if (plan.options.max_draws > 0) out += fmt::format(" --max-draws {}", plan.options.max_draws);
  if (plan.options.draw_time_s > 0) out += fmt::format(" --draw-time {}", plan.options.draw_time_s);
  if (FamilyOf(item.kind).placement == Placement::kPerDtype && item.name.empty()) {
    out += fmt::format(" --dtype {}", item.dtype);
    if (only_case >= 0) out += fmt::format(" --case {}", only_case);
  } else {
    out += fmt::format(" --item {}", item.Id());
  }
  return out;
}

}  // namespace sampcert::properties

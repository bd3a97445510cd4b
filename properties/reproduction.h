// The reproduction command of a plan item, or of one generated case of it: the one line every
// failure, crash and ABI-1 result carries (SPEC section 11). It names everything that fixes the
// plan (profile, seed, --max-draws, --draw-time) and what selects the item, so that pasting it
// re-runs the same test on the same draws.
#ifndef SAMPCERT_PROPERTIES_REPRODUCTION_H_
#define SAMPCERT_PROPERTIES_REPRODUCTION_H_

#include <cstdint>
#include <string>

#include "properties/plan.h"

namespace sampcert::properties {

// `sampler_arg` is the sampler's words, already shell-quoted (with its --sampler-config).
// Generated-rows items are selected by --dtype (and --case when only_case >= 0), the others by
// --item.
std::string ReproductionCommand(const std::string& sampler_arg, const Plan& plan,
                                const PlanItem& item, int64_t only_case = -1);

// The tool's words at the start of every reproduction command, shell-quoted: "sampcert" unless
// the tool sets another (cli/sampcert_main.cc: its own path where `sampcert` on PATH is not
// this tool). Set once, before any run, from the main thread.
void SetToolCommand(std::string command);
const std::string& ToolCommand();

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_REPRODUCTION_H_

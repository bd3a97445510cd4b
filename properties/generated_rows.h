// The deterministic item of a dtype: the profile's generated rows (RapidCheck generators, from
// the plan's seed), every deterministic property on each (case_check.h), results aggregated per
// (property, row family), the first failures shrunk within a bound on steps (never on time).
#ifndef SAMPCERT_PROPERTIES_GENERATED_ROWS_H_
#define SAMPCERT_PROPERTIES_GENERATED_ROWS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "adapters/sampler.h"
#include "properties/plan.h"
#include "results/test_result.h"

namespace sampcert::properties {

std::vector<results::TestResult> RunGeneratedRows(adapters::Sampler& sampler,
                                                  const std::string& sampler_arg, const Plan& plan,
                                                  const PlanItem& item, int64_t only_case);

// The (property, family) keys RunGeneratedRows returns, from the plan and declaration alone.
std::vector<std::pair<std::string, std::string>> GeneratedRowKeys(const Plan& plan,
                                                                  const PlanItem& item,
                                                                  const adapters::SamplerInfo& info,
                                                                  int64_t only_case);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_GENERATED_ROWS_H_

// What the statistical items (distribution.cc, tail.cc) share: the planned row of an item, its
// result skeleton, draws in chunks, and a failure with its reproduction command.
#ifndef SAMPCERT_PROPERTIES_STATISTICAL_ITEM_H_
#define SAMPCERT_PROPERTIES_STATISTICAL_ITEM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/sampler.h"
#include "properties/plan.h"
#include "properties/row_case.h"
#include "results/test_result.h"
#include "sampcert/error.h"

namespace sampcert::properties {

// The planned row an item tests, if the declaration has it.
std::optional<RowCase> PlannedRow(const PlanItem& item, uint32_t capabilities);

// The property a statistical item reports: TAIL-1, DIST-2 (a truncated row) or DIST-1.
std::string StatisticalProperty(const PlanItem& item, const std::optional<RowCase>& row);

// n draws of one row (in chunks of 2^20), or the sampler's error.
Expected<std::vector<int64_t>> Draw(adapters::Sampler& sampler, const RowCase& row, uint64_t seed,
                                    uint64_t n);

// Marks `r` failed with the message and the item's reproduction command.
void FailItem(results::TestResult& r, std::string message, const RowCase& row,
              const std::string& sampler_arg, const Plan& plan, const PlanItem& item);

std::vector<results::TestResult> RunDistribution(adapters::Sampler& sampler,
                                                 const std::string& sampler_arg, const Plan& plan,
                                                 const PlanItem& item, results::TestResult r,
                                                 const RowCase& row);
std::vector<results::TestResult> RunTail(adapters::Sampler& sampler, const std::string& sampler_arg,
                                         const Plan& plan, const PlanItem& item,
                                         results::TestResult r, const RowCase& row);
std::vector<results::TestResult> RunDeviation(adapters::Sampler& sampler, const PlanItem& item);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_STATISTICAL_ITEM_H_

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
#include "properties/statistics/score.h"
#include "results/test_result.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

// The family's run, planning and keys are declared in families.h.

// The row families whose own DIST-3 test the item runs: those with a valid row in the plan.
std::vector<std::string> DistributionFamilies(const Plan& plan, const PlanItem& item,
                                              const adapters::SamplerInfo& info);

// DIST-3 (SPEC.md section 12): the draws of every valid generated row of an item, pooled. Each
// row's draws get a randomized probability integral transform (tokens in decreasing reference
// probability, ties by index: u = F(before t) + U p(t), exactly uniform under the null) and
// their log p; rows with may-keep tokens are tested against the reference restricted to the
// must-keep tokens, draws of may-keep tokens left out. A row with an exact failure (a token out
// of range or of probability 0) is left out (its exact property fails).
class PooledDistribution {
 public:
  static constexpr int kBins = 16;
  void Add(const ReferenceDistribution& ref, const std::vector<int64_t>& tokens, uint64_t seed);
  results::TestResult Result(const PlanItem& item) const;

 private:
  std::vector<double> bins_ = std::vector<double>(kBins, 0);
  double top_ = 0;  // draws with u >= 1 - 1/1024: the least probable 1/1024 of the mass
  double n_ = 0;
  uint64_t rows_ = 0;
  double score_sum_ = 0;
  std::vector<ScoreComponent> components_;
};

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_GENERATED_ROWS_H_

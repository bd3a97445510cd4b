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

namespace rc {
template <typename T>
class Shrinkable;
}  // namespace rc

namespace sampcert::properties {

struct RowCase;

// The family's run, planning and keys are declared in families.h.

// The minimal row of a failure: RapidCheck's greedy strategy, each step taking the first of the
// current row's shrinks on which `property` still fails in the same way (its Outcome's `kind`,
// case_check.h), until none does or a bound is reached (`max_steps` candidates; `max_work`
// logits over the candidates tried, each costing at least 1024). Work, never seconds: the same
// minimal row on any machine and under any load (REPRO-1).
RowCase Shrink(adapters::Sampler& sampler, const rc::Shrinkable<RowCase>& start,
               const std::string& property, const std::string& kind, uint64_t seed, int max_steps,
               uint64_t max_work);

// The row families whose own DIST-3 test the item runs: those with a valid row in the plan.
std::vector<std::string> DistributionFamilies(const Plan& plan, const PlanItem& item,
                                              const adapters::SamplerInfo& info);

// DIST-3 (SPEC.md section 12): the draws of every valid generated row of an item, pooled. Each
// row's draws get a randomized probability integral transform (tokens in decreasing reference
// probability, a tie one segment: u = F(above p(t)) + U m(p(t)), exactly uniform under the null
// and invariant to the order inside a tie), their position inside a finite tie, and their log p;
// rows with may-keep tokens are tested against the reference restricted to the must-keep tokens,
// draws of may-keep tokens left out. A row with an exact failure (a token out of range or of
// probability 0) is left out (its exact property fails).
class PooledDistribution {
 public:
  static constexpr int kBins = 16;
  // What one row added, so that a failure names the rows that contribute most.
  struct RowEvidence {
    int64_t case_index = -1;  // its --case
    std::string family;
    std::size_t vocab = 0;
    uint64_t draws = 0;
    uint64_t top = 0;        // draws in the top bin
    double pit_chi2 = 0;     // sum over the 16 bins of (O - E)^2 / E, this row's draws alone
    double score_dev = 0;    // sum log p - its mean under the null, in nats: its part of the
                             // pooled score statistic's deviation
    double score_z = 0;      // score_dev / its standard deviation, this row alone (0: none)
    uint64_t tie_draws = 0;  // draws of a token inside a finite tie
    double tie_chi2 = 0;     // the same chi-square as pit_chi2 on their in-tie positions
  };
  void Add(const ReferenceDistribution& ref, const std::vector<int64_t>& tokens, uint64_t seed,
           int64_t case_index = -1, const std::string& family = {});
  // On a failure, `worst_rows` (when given) gets the (at most 3) rows that contribute most to the
  // sub-test that failed, most first: their case indices are what the failure's row file names.
  results::TestResult Result(const PlanItem& item,
                             std::vector<RowEvidence>* worst_rows = nullptr) const;

 private:
  std::vector<RowEvidence> rows_evidence_;
  std::vector<double> bins_ = std::vector<double>(kBins, 0);
  // The position inside its tie (by index) of each draw of a token that ties with others in the
  // finite regime, (rank + U) / m: uniform under the null; a sampler that favours tokens of a
  // tie by their position (a float running sum, a first- or last-wins fallback) moves it.
  std::vector<double> tie_bins_ = std::vector<double>(kBins, 0);
  double tie_n_ = 0;
  double top_ = 0;  // draws with u >= 1 - 1/1024: the least probable 1/1024 of the mass
  double n_ = 0;
  uint64_t rows_ = 0;
  double score_sum_ = 0;
  std::vector<ScoreComponent> components_;
};

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_GENERATED_ROWS_H_

// What the statistical items (distribution.cc, tail.cc) share: the planned row of an item, its
// result skeleton, draws in chunks, and a failure with its reproduction command.
#ifndef SAMPCERT_PROPERTIES_STATISTICAL_ITEM_H_
#define SAMPCERT_PROPERTIES_STATISTICAL_ITEM_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "adapters/sampler.h"
#include "properties/plan.h"
#include "properties/row_case.h"
#include "properties/statistics/chi_square.h"
#include "properties/statistics/score.h"
#include "results/test_result.h"
#include "sampcert/error.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

// The planned row an item tests, if the declaration has it.
std::optional<RowCase> PlannedRow(const PlanItem& item, uint32_t capabilities);

// The property a statistical item reports: TAIL-1, DIST-2 (a truncated row) or DIST-1.
std::string StatisticalProperty(const PlanItem& item, const std::optional<RowCase>& row);

// n draws of one row (in chunks of 2^20), or the sampler's error.
Expected<std::vector<int64_t>> Draw(adapters::Sampler& sampler, const RowCase& row, uint64_t seed,
                                    uint64_t n);

// Appends draws tokens->size() .. n-1 of the (seed, row) stream to `tokens`: the draws of a
// later look extend those of the earlier ones (one stream, SPEC STAT-4).
std::optional<Error> DrawMore(adapters::Sampler& sampler, const RowCase& row, uint64_t seed,
                              uint64_t n, std::vector<int64_t>* tokens);

// Marks `r` failed with the message and the item's reproduction command.
void FailItem(results::TestResult& r, std::string message, const RowCase& row,
              const std::string& sampler_arg, const Plan& plan, const PlanItem& item);

// One look of a distribution test (STAT-3) on draws against the null (the reference
// renormalized over the kept set): the G-test on cells fixed for this many draws, the score test
// on log p and the band-conditional score test, each p-value from one call; p_value is the
// Bonferroni-adjusted `subtests` x the smallest. Tokens must all have null probability > 0.
struct DistributionLook {
  GofResult g;
  ScoreResult score, band;
  bool has_score = false, has_band = false;
  double p_value = 1;
  std::string worst;                   // which sub-test
  double score_var = 0, band_var = 0;  // per draw, under the null
  double score_tol = 0, band_tol = 0;  // the mean shift the declared class admits, per draw
  bool tolerant = false;               // the null admits the class's tolerance (TOL-7)
};
// token_error: NullTolerance's e_i for a bf16 / fp16 class (empty for fp32: the reference).
DistributionLook EvaluateDistributionLook(std::span<const int64_t> tokens,
                                          std::span<const long double> null, int subtests,
                                          std::span<const double> token_error = {});

// The sequential looks of one run of a test (SPEC STAT-4): look k tests the first looks[k]
// draws at levels[k]; evaluate(n) returns the adjusted p-value of the first n draws. The index
// of the first look that rejects, or -1 when none does (every look ran).
template <typename Evaluate>
int FirstRejectingLook(const std::vector<uint64_t>& looks, const std::vector<double>& levels,
                       Evaluate&& evaluate) {
  for (std::size_t k = 0; k < looks.size(); ++k) {
    if (evaluate(looks[k]) < levels[k]) return static_cast<int>(k);
  }
  return -1;
}

std::vector<results::TestResult> RunDistribution(adapters::Sampler& sampler,
                                                 const std::string& sampler_arg, const Plan& plan,
                                                 const PlanItem& item, results::TestResult r,
                                                 const RowCase& row);
// TAIL-1's nested tail sets of a row, fixed from the reference before drawing: the tokens below
// 1e-4, below 1e-7, and below 2^-24 of the most probable token (where an fp32 exponential race
// loses everything), each kept when it has mass and differs from the set before it.
struct TailSet {
  std::string label;
  std::vector<uint8_t> member;  // per token
  std::size_t tokens = 0;
  double mass = 0;
};
std::vector<TailSet> TailSets(const ReferenceDistribution& ref);
// Per tail set, the interval of drawn masses the declared class admits (TOL-6, renormalized:
// AdmissibleMass with the set's summed token errors against the rest's); a point at the set's
// mass when token_error is empty (fp32).
std::vector<std::pair<double, double>> TailIntervals(const std::vector<TailSet>& sets,
                                                     std::span<const double> token_error);

std::vector<results::TestResult> RunTail(adapters::Sampler& sampler, const std::string& sampler_arg,
                                         const Plan& plan, const PlanItem& item,
                                         results::TestResult r, const RowCase& row);
std::vector<results::TestResult> RunDeviation(adapters::Sampler& sampler, const PlanItem& item);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_STATISTICAL_ITEM_H_

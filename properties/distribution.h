// DIST-1 and DIST-2's statistics (SPEC STAT-3): one look of a distribution test, and the cells
// and null a planned row's test is planned on. The family's run and planning are declared in
// families.h.
#ifndef SAMPCERT_PROPERTIES_DISTRIBUTION_H_
#define SAMPCERT_PROPERTIES_DISTRIBUTION_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "adapters/sampler.h"
#include "properties/row_case.h"
#include "properties/statistics/cells.h"
#include "properties/statistics/chi_square.h"
#include "properties/statistics/score.h"
#include "sampcert/error.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

// n draws of one row (in chunks of 2^20), or the sampler's error.
Expected<std::vector<int64_t>> Draw(adapters::Sampler& sampler, const RowCase& row, uint64_t seed,
                                    uint64_t n);

// Appends draws tokens->size() .. n-1 of the (seed, row) stream to `tokens`: the draws of a
// later look extend those of the earlier ones (one stream, SPEC STAT-4). With an offset, the
// stream's draws offset + tokens->size() .. offset + n - 1 (INDEP-1's later call).
std::optional<Error> DrawMore(adapters::Sampler& sampler, const RowCase& row, uint64_t seed,
                              uint64_t n, std::vector<int64_t>* tokens, uint64_t offset = 0);

// One look of a distribution test (STAT-3) on draws against the null (the reference
// renormalized over the kept set): the G-test on cells fixed for this many draws, the score test
// on log p and the band-conditional score test, each p-value from one call; p_value is the
// Bonferroni-adjusted `subtests` x the smallest. Tokens must all have null probability > 0.
// A cell of the G-test that deviates most, in the sampler's terms (a failure names it).
struct CellEvidence {
  std::string label;       // the cell's label ("token 17", "band 2^-12..2^-9 (40 tokens)")
  int64_t token = -1;      // the cell's one token, or -1 for a band
  double probability = 0;  // the cell's mass under the null
  double observed = 0, expected = 0;
};
struct DistributionLook {
  GofResult g;
  std::vector<CellEvidence> evidence;  // the (at most 3) cells of largest |O - E| / sqrt(E)
  std::vector<std::string> labels;     // per cell of g: "token 17", "band 2^-12..2^-9", ...
  ScoreResult score, band;
  bool has_score = false, has_band = false;
  double p_value = 1;
  std::string worst;                   // which sub-test
  double score_var = 0, band_var = 0;  // per draw, under the null
  double score_tol = 0, band_tol = 0;  // the mean shift the declared class admits, per draw
  bool tolerant = false;               // the null admits the class's tolerance (TOL-7)
};
// token_error: NullTolerance's e_i for a bf16 / fp16 class (empty for fp32: the reference).
// "token 4 (p = 0.333, logit +inf): 5637 drawn, 1879 expected; ...": the evidence, with each
// single token's logit from `row` (nullptr: no logits).
std::string DescribeEvidence(const std::vector<CellEvidence>& evidence, const RowCase* row);
DistributionLook EvaluateDistributionLook(std::span<const int64_t> tokens,
                                          std::span<const long double> null, int subtests,
                                          std::span<const double> token_error = {});

// The cells a planned row's test is planned on (at a boundary, the larger of the must-keep and
// the all-kept cell sets), with the declared class's tolerance on them (TOL-7): a chi-square
// radius for the G-test, an interval of cell 0's mass for a two-cell test.
struct PlannedCells {
  Cells cells;
  std::vector<double> tolerance;  // NullTolerance over the planned null; empty: fp32
  double delta = 0;               // ChiSquareRadius
  std::pair<double, double> interval{0, 0};
  double df = 0;
  bool tolerant() const { return !tolerance.empty(); }
};
PlannedCells PlanCells(const ReferenceDistribution& ref, uint64_t max_draws,
                       AccuracyClass accuracy);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_DISTRIBUTION_H_

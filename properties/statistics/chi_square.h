// Goodness of fit by the G-test with Williams' correction on fixed cells (SPEC.md section 12,
// STAT-3), its central and noncentral chi-square tails, and its power (STAT-5): the smallest
// total variation on its cells detected with probability 0.9, and the draws that reach one.
#ifndef SAMPCERT_PROPERTIES_STATISTICS_CHI_SQUARE_H_
#define SAMPCERT_PROPERTIES_STATISTICS_CHI_SQUARE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "properties/statistics/cells.h"

namespace sampcert::properties {

struct GofResult {
  std::size_t cells = 0;
  double statistic = 0;  // G / Williams' q
  double df = 0;
  double p_value = 1;
  double delta = 0;                         // ChiSquareRadius of the tolerance on the cells
  double interval_lo = 0, interval_hi = 0;  // two cells: cell 0's admissible mass
  std::vector<double> observed;             // per cell
  std::vector<double> expected;             // per cell
};

// The G-test of `tokens` against `cells` (with two cells, the exact binomial tail instead).
// Tokens outside every cell are not counted (the caller fails them exactly first). With a
// token_error (NullTolerance), the null admits the tolerance: the p-value is the tail of the
// noncentral chi-square with noncentrality n * delta (delta = ChiSquareRadius), and with two
// cells the exact binomial against cell 0's AdmissibleMass interval (BinomialTwoSidedInterval).
// An empty token_error gives exactly the central test.
GofResult GTest(std::span<const int64_t> tokens, const Cells& cells,
                std::span<const double> token_error = {});

// Smallest total variation (on the test's cells) detected with probability 0.9 by a level-alpha
// chi-square-type test with df degrees of freedom after n draws: noncentrality
// lambda >= 4 n TV^2 (Cauchy-Schwarz), lambda from Boost's non_central_chi_squared.
// With a radius delta > 0 the critical value is the noncentral chi-square's at n * delta.
double DetectableTv(double df, double alpha, uint64_t n, double delta = 0);

// Draws needed to detect `tv` with probability 0.9 at level alpha (radius delta: UINT64_MAX
// when no number of draws up to 2^40 reaches it).
uint64_t DrawsForTv(double df, double alpha, double tv, double delta = 0);

// The p-value of the noncentral chi-square null: P(X >= statistic), X ~ chi2'(df, lambda);
// lambda = 0 is the central chi-square.
double ChiSquareUpper(double statistic, double df, double lambda = 0);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_STATISTICS_CHI_SQUARE_H_

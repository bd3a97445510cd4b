// The statistics of SPEC.md section 12: goodness of fit by the G-test with Williams'
// correction on cells fixed from the reference before drawing (every expected count >= 50),
// exact binomial tails for count-in-a-set tests, and the power of each test (the smallest
// total variation on its cells detected with probability 0.9).
#ifndef SAMPCERT_PROPERTIES_STATISTICS_H_
#define SAMPCERT_PROPERTIES_STATISTICS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sampcert::properties {

// Cells fixed before drawing: tokens with n * p >= min_expected are cells of their own; the
// other tokens are pooled by probability band floor(-log2 p); bands below min_expected are merged
// with the next band, and a short remainder into the last cell. Tokens of probability 0 belong
// to no cell (-1): drawing one is an exact failure, not a statistic.
struct Cells {
  std::vector<int32_t> cell_of;     // per token, -1 for probability 0
  std::vector<double> probability;  // per cell
  std::vector<std::string> label;   // per cell: "token 17" or "band 2^-12..2^-9"
};
// At most max_token_cells tokens get cells of their own (the most probable ones), so that the
// degrees of freedom, and with them the draws needed for a given power, stay bounded.
Cells MakeCells(std::span<const long double> probs, uint64_t draws, double min_expected = 50,
                std::size_t max_token_cells = 64);

struct GofResult {
  std::size_t cells = 0;
  double statistic = 0;  // G / Williams' q
  double df = 0;
  double p_value = 1;
  std::vector<double> observed;  // per cell
  std::vector<double> expected;  // per cell
};

// The G-test of `tokens` against `cells` (with two cells, the exact binomial tail instead).
// Tokens outside every cell are not counted (the caller fails them exactly first).
GofResult GTest(std::span<const int64_t> tokens, const Cells& cells);

// Smallest total variation (on the test's cells) detected with probability 0.9 by a level-alpha
// chi-square-type test with df degrees of freedom after n draws: noncentrality
// lambda >= 4 n TV^2 (Cauchy-Schwarz), lambda from Boost's non_central_chi_squared.
double DetectableTv(double df, double alpha, uint64_t n);

// Draws needed to detect `tv` with probability 0.9 at level alpha.
uint64_t DrawsForTv(double df, double alpha, double tv);

// Two-sided exact binomial p-value of k successes in n trials of probability p (Boost.Math):
// twice the smaller tail, capped at 1.
double BinomialTwoSided(uint64_t k, uint64_t n, double p);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_STATISTICS_H_

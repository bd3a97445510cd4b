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
// twice the smaller tail, capped at 1. With k = 0 this is the zero-count test, 2 (1 - p)^n.
double BinomialTwoSided(uint64_t k, uint64_t n, double p);

// Exact power of BinomialTwoSided at level alpha when the true probability is p1, not p0.
double BinomialPower(uint64_t n, double p0, double p1, double alpha);

// The smallest shift d of a probability p0 such that the level-alpha exact binomial test of n
// draws detects p0 - d and p0 + d with probability 0.9 (a direction that leaves [0, 1] is not
// required); +inf when no shift is detectable. A two-cell test's detectable TV is this d.
double DetectableShiftBinomial(uint64_t n, double p0, double alpha);

// A score statistic: the sum over draws of y(token), where component r contributes n draws of a
// discrete variable taking values[i] with probability probs[i] under the null (a planned row:
// one component; DIST-3: one per generated row). Its null distribution is known exactly through
// the cumulant generating function K(t) = sum_r n_r log sum_i p_i e^(t y_i); the p-value is the
// saddle-point (Lugannani-Rice) tail of K, two-sided (twice the smaller tail, capped at 1).
struct ScoreComponent {
  double n = 0;
  std::vector<double> values;
  std::vector<double> probs;  // sums to 1
};
struct ScoreResult {
  double mean = 0;      // K'(0)
  double variance = 0;  // K''(0)
  double observed = 0;
  double z = 0;  // (observed - mean) / sd
  double p_value = 1;
};
ScoreResult ScoreTest(std::span<const ScoreComponent> components, double observed);
// The two-sided saddle-point p-value alone (also used by the calibration tests).
double SaddlePointTwoSided(std::span<const ScoreComponent> components, double observed);

// The per-token values of the two score statistics of a distribution: score = log p (its sum
// is the score statistic for the temperature: a relative temperature error e moves its mean
// by about e Var(log p) per draw) and band = log p - E[log p | band of the token], where the
// band is floor(-log2 p) (its mean is 0 under the null whatever the band masses; evening out or
// tilting the probabilities inside a band moves it). 0 for tokens of probability 0.
struct ScoreSummary {
  std::vector<double> score, band;
  double score_var = 0, band_var = 0;  // per draw, under the null
};
ScoreSummary ScoreValues(std::span<const long double> probs);

// The mean shift (in units of y) a two-sided level-alpha score test detects with probability
// 0.9, for a statistic of variance `variance` (normal approximation: (z_{alpha/2} + z_0.9) sd).
double DetectableMeanShift(double variance, double alpha);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_STATISTICS_H_

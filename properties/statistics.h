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
#include <utility>
#include <vector>

#include "sampcert/policies.h"

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

// The declared accuracy class in the null (TOL-7, STAT-6). For the bf16 and fp16 classes a
// sampler may draw from any q whose reported probabilities p^_i lie within e_i of the
// reference p_i (TOL-3 relative error, plus TOL-4's absolute error below the class's floor),
// renormalized as it draws (q = p^ / sum p^). NullTolerance returns e_i per token of `null`
// (log_weights: the reference's, for sigma(l) of TOL-1); it is empty for the fp32 class, whose
// null stays the reference itself (its TOL-5 deviation is far below any planned test's reach).
std::vector<double> NullTolerance(std::span<const long double> null,
                                  std::span<const long double> log_weights, AccuracyClass accuracy);

// The interval of a set's drawn mass q_R that the tolerance admits, for reference mass m,
// admissible error e_set of its reported mass and e_rest of the other tokens' (TOL-6 with the
// renormalization): [(m - e) / (m - e + 1 - m + e_rest), (m + e) / (m + e + 1 - m - e_rest)],
// clamped to [0, 1]. A point (m, m) when both errors are 0.
std::pair<double, double> AdmissibleMass(double m, double e_set, double e_rest);

// The chi-square-divergence radius of the tolerance on `cells`: an upper bound of
// sum_c (Q_c - P_c)^2 / P_c over every admissible q (each cell at the far end of its
// AdmissibleMass interval). 0 when token_error is empty.
double ChiSquareRadius(const Cells& cells, std::span<const double> token_error);

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

// Two-sided exact binomial p-value of k successes in n trials of probability p (Boost.Math):
// twice the smaller tail, capped at 1. With k = 0 this is the zero-count test, 2 (1 - p)^n.
double BinomialTwoSided(uint64_t k, uint64_t n, double p);

// The exact binomial against an interval null p in [lo, hi] (the tolerance's AdmissibleMass):
// each side one-sided at its end of the interval, P(K <= k | lo) and P(K >= k | hi), and twice
// the smaller, capped at 1. lo == hi is BinomialTwoSided exactly.
double BinomialTwoSidedInterval(uint64_t k, uint64_t n, double lo, double hi);

// Exact power of BinomialTwoSided at level alpha when the true probability is p1, not p0
// (of BinomialTwoSidedInterval against [lo, hi] in the second form).
double BinomialPower(uint64_t n, double p0, double p1, double alpha);
double BinomialIntervalPower(uint64_t n, double lo, double hi, double p1, double alpha);

// The smallest shift d of a probability p0 such that the level-alpha exact binomial test of n
// draws detects p0 - d and p0 + d with probability 0.9 (a direction that leaves [0, 1] is not
// required); +inf when no shift is detectable. A two-cell test's detectable TV is this d.
// With an interval null [lo, hi] around p0 the test is BinomialTwoSidedInterval's; a direction
// in which even the far end of [0, 1] is not detected gives that direction's whole range.
double DetectableShiftBinomial(uint64_t n, double p0, double alpha);
double DetectableShiftBinomial(uint64_t n, double p0, double alpha, double lo, double hi);

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
// With mean_tolerance > 0 the null admits a mean anywhere in K'(0) +- mean_tolerance (a
// location shift of the null's tail: the upper tail at observed - tolerance, the lower at
// observed + tolerance); 0 is exactly the test above.
ScoreResult ScoreTest(std::span<const ScoreComponent> components, double observed,
                      double mean_tolerance = 0);
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

// The largest shift of the mean of y per draw that an admissible q can cause (the score tests'
// tolerance, per draw): sum_i e_i |y_i - E_p y| / (1 - sum_i e_i), since
// E_q y - E_p y = sum_i (p^_i - p_i)(y_i - E_p y) / sum p^. 0 when token_error is empty.
double ScoreMeanTolerance(std::span<const double> y, std::span<const long double> null,
                          std::span<const double> token_error);

// The mean shift (in units of y) a two-sided level-alpha score test detects with probability
// 0.9, for a statistic of variance `variance` (normal approximation: (z_{alpha/2} + z_0.9) sd),
// beyond a null that admits mean_tolerance (added).
double DetectableMeanShift(double variance, double alpha, double mean_tolerance = 0);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_STATISTICS_H_

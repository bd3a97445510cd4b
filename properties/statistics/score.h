// The score tests of SPEC.md section 12 (STAT-3): a sum of per-draw values with a known null,
// its saddle-point (Lugannani-Rice) two-sided tail, the per-token values of the score and
// band-conditional statistics, and the mean shift a score test detects.
#ifndef SAMPCERT_PROPERTIES_STATISTICS_SCORE_H_
#define SAMPCERT_PROPERTIES_STATISTICS_SCORE_H_

#include <span>
#include <vector>

namespace sampcert::properties {

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
// The mean shift (in units of y) a two-sided level-alpha score test detects with probability
// 0.9, for a statistic of variance `variance` (normal approximation: (z_{alpha/2} + z_0.9) sd),
// beyond a null that admits mean_tolerance (added).
double DetectableMeanShift(double variance, double alpha, double mean_tolerance = 0);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_STATISTICS_SCORE_H_

// The score tests: the saddle-point tail against exact tails at the real levels, and the
// band-conditional values (mean 0 under the null, moved when a band is evened out).
#include "properties/statistics/score.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "properties/statistics/binomial.h"
#include "tests/support/zipf.h"

namespace sampcert::properties {
namespace {

using testing_support::Zipf;

// The saddle-point tail against exact tails at the real per-test levels (1e-5 and beyond):
// a two-valued variable (the sum is binomial: a lattice, the hardest case for the formula) and
// a three-valued non-lattice one (exact by enumerating the counts).
TEST(SaddlePoint, MatchesExactTailsAtTheRealLevels) {
  {
    const uint64_t n = 2000;
    const ScoreComponent comp{static_cast<double>(n), {0.0, 1.0}, {0.7, 0.3}};
    for (uint64_t k : {700u, 710u, 520u, 540u}) {
      const double exact = BinomialTwoSided(k, n, 0.3);
      const double sp = SaddlePointTwoSided(std::span(&comp, 1), static_cast<double>(k));
      std::printf("[saddle-point] binomial k=%llu: exact %.4g, saddle point %.4g\n",
                  static_cast<unsigned long long>(k), exact, sp);
      // Lattice: without a continuity correction the formula sits between P(S > k) and
      // P(S >= k); at these levels that is within a factor 1.6 of the exact tail.
      EXPECT_GT(sp, exact / 1.6) << k;
      EXPECT_LT(sp, exact * 1.6) << k;
    }
  }
  {
    // y in {0, 1, sqrt 2} with probabilities 0.5, 0.3, 0.2; n = 300: exact upper tail by
    // summing the multinomial over (k1, k2).
    const int n = 300;
    const double r2 = std::sqrt(2.0);
    const ScoreComponent comp{static_cast<double>(n), {0.0, 1.0, r2}, {0.5, 0.3, 0.2}};
    auto exact_upper = [&](double s) {
      double total = 0;
      for (int k1 = 0; k1 <= n; ++k1) {
        for (int k2 = 0; k1 + k2 <= n; ++k2) {
          if (k1 + k2 * r2 < s) continue;
          const int k0 = n - k1 - k2;
          total += std::exp(std::lgamma(n + 1.0) - std::lgamma(k0 + 1.0) - std::lgamma(k1 + 1.0) -
                            std::lgamma(k2 + 1.0) + k0 * std::log(0.5) + k1 * std::log(0.3) +
                            k2 * std::log(0.2));
        }
      }
      return total;
    };
    const double mean = n * (0.3 + 0.2 * r2);
    for (double s : {mean + 45.0, mean + 60.0, mean + 75.0}) {
      const double exact = std::min(1.0, 2 * exact_upper(s));
      const double sp = SaddlePointTwoSided(std::span(&comp, 1), s);
      std::printf("[saddle-point] three-valued s=%.1f: exact %.4g, saddle point %.4g\n", s, exact,
                  sp);
      EXPECT_GT(sp, exact / 1.25) << s;
      EXPECT_LT(sp, exact * 1.25) << s;
    }
  }
}

// The band-conditional statistic has mean 0 under the null and moves when a band is evened out.
TEST(ScoreValues, BandConditionalSeesEvenedBands) {
  const auto p = Zipf(1000, 1.1);
  const ScoreSummary s = ScoreValues(p);
  long double mean = 0, evened = 0;
  std::map<int, std::pair<long double, int>> bands;
  for (std::size_t i = 0; i < p.size(); ++i) {
    mean += p[i] * s.band[i];
    int e = 0;
    std::frexp(static_cast<double>(p[i]), &e);
    bands[e].first += p[i];
    bands[e].second += 1;
  }
  for (std::size_t i = 0; i < p.size(); ++i) {
    int e = 0;
    std::frexp(static_cast<double>(p[i]), &e);
    evened += bands[e].first / bands[e].second * s.band[i];
  }
  EXPECT_NEAR(static_cast<double>(mean), 0.0, 1e-12);
  EXPECT_GT(s.band_var, 0.0);
  // Evening out moves the mean by many standard errors of 10^5 draws.
  EXPECT_LT(static_cast<double>(evened), -6 * std::sqrt(s.band_var / 1e5));
}

}  // namespace
}  // namespace sampcert::properties

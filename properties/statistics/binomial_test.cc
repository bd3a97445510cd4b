// The exact binomial: its two-sided tails, and its power at the shift DetectableShiftBinomial
// states (exact both ways, and by Monte Carlo).
#include "properties/statistics/binomial.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace sampcert::properties {
namespace {

TEST(Binomial, TwoSidedTails) {
  EXPECT_NEAR(BinomialTwoSided(50, 100, 0.5), 1.0, 1e-12);
  EXPECT_LT(BinomialTwoSided(0, 100000, 0.001), 1e-40);  // the tail never drawn: caught
  EXPECT_LT(BinomialTwoSided(80, 100, 0.5), 1e-8);
  EXPECT_EQ(BinomialTwoSided(0, 10, 0.0), 1.0);
  EXPECT_EQ(BinomialTwoSided(1, 10, 0.0), 0.0);
}

// The exact binomial's power: at the stated shift it is at least 0.9 both ways, just below it
// it is not, and a Monte Carlo run of the alternative agrees.
TEST(Power, BinomialShiftIsExact) {
  const uint64_t n = 100000;
  const double p0 = 0.3, alpha = 1e-5;
  const double d = DetectableShiftBinomial(n, p0, alpha);
  EXPECT_GE(BinomialPower(n, p0, p0 + d, alpha), 0.9);
  EXPECT_GE(BinomialPower(n, p0, p0 - d, alpha), 0.9);
  EXPECT_LT(std::min(BinomialPower(n, p0, p0 + 0.95 * d, alpha),
                     BinomialPower(n, p0, p0 - 0.95 * d, alpha)),
            0.9);
  std::mt19937_64 rng(11);
  std::binomial_distribution<uint64_t> alt(n, p0 + d);
  int detected = 0;
  for (int i = 0; i < 400; ++i) detected += BinomialTwoSided(alt(rng), n, p0) < alpha;
  EXPECT_GE(detected, 0.9 * 400 - 3 * std::sqrt(400 * 0.09)) << detected;
  // A near point mass: moving 0.02 to the other tokens is seen in a few thousand draws.
  EXPECT_LT(DetectableShiftBinomial(4096, 1 - 3.7e-6, 1e-5), 0.01);
}

}  // namespace
}  // namespace sampcert::properties

// The comparisons of the case checks (properties/case_check.h).
#include "properties/case_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace sampcert::properties {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

TEST(SameProbabilities, EqualValuesAndMatchingNansAreTheSame) {
  const std::vector<double> a = {0.25, 0.75, 0.0};
  EXPECT_TRUE(SameProbabilities(a, a));
  // -0 and +0 are the same probability.
  EXPECT_TRUE(SameProbabilities(std::vector<double>{0.0, 1.0}, std::vector<double>{-0.0, 1.0}));
  // A NaN alone and the same NaN batched is no batch dependence (whatever its payload).
  const double other_nan = -std::nan("7");
  EXPECT_TRUE(
      SameProbabilities(std::vector<double>{kNan, kNan}, std::vector<double>{kNan, other_nan}));
}

TEST(SameProbabilities, AnyDifferenceIsADifference) {
  const std::vector<double> a = {0.25, 0.75};
  EXPECT_FALSE(SameProbabilities(a, std::vector<double>{0.25, std::nextafter(0.75, 1.0)}));
  EXPECT_FALSE(SameProbabilities(a, std::vector<double>{0.25, kNan}));
  EXPECT_FALSE(SameProbabilities(std::vector<double>{kNan, 0.75}, a));
  EXPECT_FALSE(SameProbabilities(a, std::vector<double>{0.25}));  // a different length
}

}  // namespace
}  // namespace sampcert::properties

// The hand-written vector exp and reductions against long double.
#include "impls/stable_cpu/vector_kernels.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace sampcert::impls::kernels {
namespace {

TEST(Exp2NonPositive, WithinTwoUlpOverTheNormalRange) {
  double worst_ulps = 0;
  for (float y = -126.0f; y <= 0.0f; y += 0.000731f) {
    const float got = Exp2NonPositive(y);
    const long double want = std::exp2(static_cast<long double>(y));
    const double ulp = std::ldexp(1.0, std::ilogb(static_cast<double>(want)) - 23);
    worst_ulps = std::max(worst_ulps, std::fabs(static_cast<double>(got - want)) / ulp);
  }
  EXPECT_LE(worst_ulps, 2.0);  // SPEC BAND-1 assumes an exp within 2 ulps
  RecordProperty("worst_ulps", std::to_string(worst_ulps));
}

TEST(Exp2NonPositive, ExactAtTheEnds) {
  EXPECT_EQ(Exp2NonPositive(0.0f), 1.0f);  // the maximum's weight is exactly 1 (min-p relies on it)
  EXPECT_EQ(Exp2NonPositive(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(Exp2NonPositive(-150.0f), 0.0f);
  EXPECT_EQ(Exp2NonPositive(-1e30f), 0.0f);
  for (float y = -149.9f; y < -126.0f; y += 0.01f) {
    const float got = Exp2NonPositive(y);
    EXPECT_GE(got, 0.0f);
    EXPECT_LT(got, 0x1p-125f);  // tiny, never garbage
  }
}

TEST(Kernels, VectorAndScalarPathsAgree) {
  std::vector<float> x(1000 + kLanes / 2);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -0.037f * static_cast<float>(i);
  x[13] = std::numeric_limits<float>::quiet_NaN();
  bool nan = false;
  EXPECT_EQ(MaxAndNan(x.data(), x.size(), &nan), 0.0f);
  EXPECT_TRUE(nan);
  x[13] = -1.0f;
  EXPECT_EQ(MaxAndNan(x.data() + 1, x.size() - 1, &nan), -0.037f);
  EXPECT_FALSE(nan);
  std::vector<float> w(x.size());
  std::vector<double> sums(x.size() / 64 + 1);
  WeightsAndBlockSums(x.data(), x.size(), 0.0f, 1.0f, w.data(), 64, sums.data());
  double total = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(w[i], Exp2NonPositive(x[i])) << i;  // lane and scalar tail give the same bits
    total += w[i];
  }
  double block_total = 0;
  for (double s : sums) block_total += s;
  EXPECT_NEAR(block_total, total, 1e-5 * total);
}

// Exhaustive: every f16 and bf16 bit pattern widens to the exact f32 (NaNs to a NaN of the same
// sign), on whichever path this build compiled (F16C, or the portable bit manipulation).
TEST(Widen, EveryHalfPatternIsExact) {
  std::vector<uint16_t> all(65536 + 5);  // + a tail that is no multiple of 8
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> f16(all.size()), bf16(all.size());
  WidenF16(all.data(), all.size(), f16.data());
  WidenBF16(all.data(), all.size(), bf16.data());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const float want16 = static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(all[i]));
    const float want_bf = static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(all[i]));
    if (std::isnan(want16)) {
      ASSERT_TRUE(std::isnan(f16[i])) << i;
      ASSERT_EQ(std::signbit(f16[i]), std::signbit(want16)) << i;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(f16[i]), std::bit_cast<uint32_t>(want16)) << i;
    }
    if (std::isnan(want_bf)) {
      ASSERT_TRUE(std::isnan(bf16[i])) << i;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(bf16[i]), std::bit_cast<uint32_t>(want_bf)) << i;
    }
  }
}

}  // namespace
}  // namespace sampcert::impls::kernels

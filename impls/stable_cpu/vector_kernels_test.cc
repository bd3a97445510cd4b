// The Highway kernels on every target this CPU runs: accuracy against long double, and the same
// bits as the portable fallback (stable_cpu's cross-device determinism, SPEC POL-6).
#include "impls/stable_cpu/vector_kernels.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace sampcert::impls::kernels {
namespace {

// Each test runs once per compiled target the CPU runs; the portable fallback is the last.
class Kernels : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_TRUE(UseTarget(GetParam())); }
  void TearDown() override { UseTarget(""); }
};

std::vector<std::string> Targets() { return CompiledTargets(); }
std::string Fallback() { return Targets().back(); }

float Exp2(float y) {
  float out = 0;
  Exp2NonPositive(&y, 1, &out);
  return out;
}

TEST_P(Kernels, RunsOnTheChosenTarget) { EXPECT_EQ(CurrentTarget(), GetParam()); }

TEST_P(Kernels, Exp2WithinTwoUlpOverTheNormalRange) {
  std::vector<float> y;
  for (float v = -126.0f; v <= 0.0f; v += 0.000731f) y.push_back(v);
  std::vector<float> got(y.size());
  Exp2NonPositive(y.data(), y.size(), got.data());
  double worst_ulps = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const long double want = std::exp2(static_cast<long double>(y[i]));
    const double ulp = std::ldexp(1.0, std::ilogb(static_cast<double>(want)) - 23);
    worst_ulps = std::max(worst_ulps, std::fabs(static_cast<double>(got[i] - want)) / ulp);
  }
  EXPECT_LE(worst_ulps, 2.0);  // SPEC BAND-1 assumes an exp within 2 ulps
  RecordProperty("worst_ulps", std::to_string(worst_ulps));
}

TEST_P(Kernels, Exp2ExactAtTheEnds) {
  EXPECT_EQ(Exp2(0.0f), 1.0f);  // the maximum's weight is exactly 1 (min-p relies on it)
  EXPECT_EQ(Exp2(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(Exp2(-150.0f), 0.0f);
  EXPECT_EQ(Exp2(-1e30f), 0.0f);
  for (float y = -149.9f; y < -126.0f; y += 0.01f) {
    const float got = Exp2(y);
    EXPECT_GE(got, 0.0f);
    EXPECT_LT(got, 0x1p-125f);  // tiny, never garbage
  }
}

// A row of every kind of logit: wide finite ranges, near-ties, -inf, and a length that is no
// multiple of any vector width, so that the tails are exercised.
std::vector<float> MixedRow(std::size_t n) {
  std::mt19937_64 gen(20261205);
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t r = gen();
    switch (r % 4) {
      case 0: x[i] = -static_cast<float>(r >> 40) * 0x1p-14f; break;  // [-1024, 0]
      case 1: x[i] = -static_cast<float>(r >> 40) * 0x1p-22f; break;  // [-4, 0], dense
      case 2: x[i] = std::bit_cast<float>(static_cast<uint32_t>(r >> 32) | 0x80000000u); break;
      default: x[i] = -std::numeric_limits<float>::infinity();
    }
    if (std::isnan(x[i])) x[i] = -1.0f;
  }
  x[n / 2] = 0.0f;
  return x;
}

struct KernelOutputs {
  float max = 0;
  bool nan = false;
  std::vector<float> w;
  std::vector<double> sums, resums;
  std::vector<float> f16, bf16;
  float f16_max = 0, bf16_max = 0;
  bool f16_nan = false, bf16_nan = false;
};

KernelOutputs RunAll(const std::vector<float>& x, const std::vector<uint16_t>& halves) {
  KernelOutputs o;
  o.max = MaxAndNan(x.data(), x.size(), &o.nan);
  o.w.resize(x.size());
  o.sums.resize(x.size() / 64 + 1);
  o.resums.resize(o.sums.size());
  WeightsAndBlockSums(x.data(), x.size(), 0.0f, 1.4426950f / 0.37f, o.w.data(), 64, o.sums.data());
  BlockSums(o.w.data(), o.w.size(), 64, o.resums.data());
  o.f16.resize(halves.size());
  o.bf16.resize(halves.size());
  o.f16_max = WidenF16(halves.data(), halves.size(), o.f16.data(), &o.f16_nan);
  o.bf16_max = WidenBF16(halves.data(), halves.size(), o.bf16.data(), &o.bf16_nan);
  return o;
}

std::vector<uint16_t> AllHalves() {
  std::vector<uint16_t> all(65536 + 5);  // + a tail that is no multiple of any width
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  return all;
}

template <typename T>
bool SameBits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Every kernel's output on this target, bit for bit the fallback's.
TEST_P(Kernels, SameBitsAsTheFallback) {
  const std::vector<float> x = MixedRow(100003);
  const std::vector<uint16_t> halves = AllHalves();
  const KernelOutputs got = RunAll(x, halves);
  ASSERT_TRUE(UseTarget(Fallback()));
  const KernelOutputs want = RunAll(x, halves);
  EXPECT_EQ(std::bit_cast<uint32_t>(got.max), std::bit_cast<uint32_t>(want.max));
  EXPECT_EQ(got.nan, want.nan);
  EXPECT_TRUE(SameBits(got.w, want.w));
  EXPECT_TRUE(SameBits(got.sums, want.sums));
  EXPECT_TRUE(SameBits(got.resums, want.resums));
  EXPECT_TRUE(SameBits(got.f16, want.f16));
  EXPECT_TRUE(SameBits(got.bf16, want.bf16));
  EXPECT_EQ(got.f16_nan, want.f16_nan);  // (the maximum of a row with NaN is unspecified)
  EXPECT_EQ(got.bf16_nan, want.bf16_nan);
}

TEST_P(Kernels, MaxNanAndSums) {
  std::vector<float> x(1000 + 7);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -0.037f * static_cast<float>(i);
  x[13] = std::numeric_limits<float>::quiet_NaN();
  bool nan = false;
  EXPECT_EQ(MaxAndNan(x.data(), x.size(), &nan), 0.0f);
  EXPECT_TRUE(nan);
  x[13] = -1.0f;
  EXPECT_EQ(MaxAndNan(x.data() + 1, x.size() - 1, &nan), -0.037f);
  EXPECT_FALSE(nan);
  x[x.size() - 2] = std::numeric_limits<float>::quiet_NaN();  // in the scalar tail
  EXPECT_EQ(MaxAndNan(x.data(), x.size(), &nan), 0.0f);
  EXPECT_TRUE(nan);
  x[x.size() - 2] = -2.0f;
  std::vector<float> w(x.size()), each(x.size());
  std::vector<double> sums(x.size() / 64 + 1);
  WeightsAndBlockSums(x.data(), x.size(), 0.0f, 1.0f, w.data(), 64, sums.data());
  Exp2NonPositive(x.data(), x.size(), each.data());
  long double total = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(w[i], each[i]) << i;  // lanes and padded tail give the same bits
    EXPECT_NEAR(w[i], std::exp2(static_cast<double>(x[i])), 3e-7 * w[i]) << i;
    total += w[i];
  }
  long double block_total = 0;
  for (double s : sums) block_total += s;
  EXPECT_NEAR(static_cast<double>(block_total), static_cast<double>(total),
              1e-5 * static_cast<double>(total));
}

// Exhaustive: every f16 and bf16 bit pattern widens to the exact f32 (NaNs to a NaN of the same
// sign).
TEST_P(Kernels, WidenEveryHalfPatternExactly) {
  const std::vector<uint16_t> all = AllHalves();
  std::vector<float> f16(all.size()), bf16(all.size());
  bool nan16 = false, nan_bf = false;
  // Every pattern: there are NaNs (the maximum is then unspecified).
  WidenF16(all.data(), all.size(), f16.data(), &nan16);
  WidenBF16(all.data(), all.size(), bf16.data(), &nan_bf);
  EXPECT_TRUE(nan16);
  EXPECT_TRUE(nan_bf);
  // Without NaN (and +inf): the finite maximum, no NaN; 0x7bff is f16's largest finite value,
  // 0x7f7f bf16's, here in the tail past the vectors.
  std::vector<uint16_t> finite(1003, 0x3c00);  // 1.0
  finite[1001] = 0x7bff;
  std::vector<float> out(finite.size());
  EXPECT_EQ(WidenF16(finite.data(), finite.size(), out.data(), &nan16), 65504.0f);
  EXPECT_FALSE(nan16);
  finite[1001] = 0x3f80;  // bf16 1.0
  finite[7] = 0x7f7f;
  EXPECT_EQ(WidenBF16(finite.data(), finite.size(), out.data(), &nan_bf),
            std::bit_cast<float>(0x7f7f0000u));
  EXPECT_FALSE(nan_bf);
  finite[5] = 0xffff;  // a NaN among the vectors
  WidenBF16(finite.data(), finite.size(), out.data(), &nan_bf);
  EXPECT_TRUE(nan_bf);
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

TEST(KernelTargets, TheFallbackIsCompiledAndUnknownNamesAreRefused) {
  const std::vector<std::string> t = Targets();
  ASSERT_FALSE(t.empty());
  EXPECT_TRUE(t.back() == "EMU128" || t.back() == "SCALAR") << t.back();
  EXPECT_FALSE(UseTarget("NO_SUCH_TARGET"));
  UseTarget("");
  EXPECT_EQ(CurrentTarget(), t.front());  // the best one by default
}

INSTANTIATE_TEST_SUITE_P(Target, Kernels, testing::ValuesIn(Targets()),
                         [](const testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace sampcert::impls::kernels

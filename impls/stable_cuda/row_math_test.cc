// stable_cuda's shared host/device math, run on the CPU (no nvcc, no GPU): the pieces against
// stable_cpu's and the reference's, and the whole kernel pipeline (host_model.h) against the
// reference's probabilities and stable_cpu's tokens on rows with limits, ties, masks, top-k,
// top-p cut mid-gap and min-p.
#include "impls/stable_cuda/row_math.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "adapters/sampler.h"
#include "impls/stable_cpu/stable_cpu_sampler.h"
#include "impls/stable_cpu/vector_kernels.h"
#include "impls/stable_cuda/host_model.h"
#include "properties/probability_check.h"
#include "registry/open_sampler.h"
#include "sampcert/canonical_draw.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/reference_sampler.h"
#include "sampcert/tolerance.h"
#include "tests/support/test_rows.h"

namespace sampcert::impls::cuda_math {
namespace {

using testing_support::TestRow;
constexpr float kInf = std::numeric_limits<float>::infinity();

HostModelRow Model(const TestRow& row) {
  const RowView v = row.view();
  return HostModelRow(HostRowInput{v.logits, static_cast<uint32_t>(v.dtype), v.mask,
                                   static_cast<int64_t>(v.vocab), v.temperature, v.top_k, v.top_p,
                                   v.min_p});
}

std::vector<double> ModelProbabilities(const TestRow& row) {
  const HostModelRow m = Model(row);
  EXPECT_EQ(m.status(), RowStatus::kOk);
  std::vector<double> p(row.vocab());
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = m.Probability(static_cast<int64_t>(i));
  return p;
}

properties::ProbabilityCheck CheckAgainstReference(const TestRow& row) {
  const auto ref = ComputeReference(row.view(), StableCpuSampler::DeclaredPolicies());
  EXPECT_TRUE(ref.ok()) << ref.error().message;
  if (!ref.ok()) return {};
  return properties::CheckProbabilities(*ref, ModelProbabilities(row),
                                        AccuracyFor(AccuracyClass::kF32));
}

TEST(StableCudaMath, Exp2IsStableCpusPolynomialBitForBit) {
  // This translation unit is compiled without contraction, like the device's explicit
  // round-to-nearest intrinsics: the two must agree on every bit, on every CPU target.
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> y(-160.0f, 0.0f);
  std::vector<float> ys(200000);
  for (std::size_t n = 0; n < ys.size(); ++n) {
    ys[n] = n < 3 ? std::array<float, 3>{0.0f, -0.0f, -kInf}[n] : y(rng);
  }
  for (const std::string& target : kernels::CompiledTargets()) {
    ASSERT_TRUE(kernels::UseTarget(target));
    std::vector<float> cpu(ys.size());
    kernels::Exp2NonPositive(ys.data(), ys.size(), cpu.data());
    for (std::size_t n = 0; n < ys.size(); ++n) {
      ASSERT_EQ(FloatBits(Exp2NonPositive(ys[n])), FloatBits(cpu[n])) << ys[n] << " " << target;
    }
  }
  kernels::UseTarget("");
  EXPECT_EQ(Exp2NonPositive(0.0f), 1.0f);
  EXPECT_EQ(Exp2NonPositive(-kInf), 0.0f);
  EXPECT_EQ(Exp2NonPositive(-150.0f), 0.0f);
  // Accuracy where it matters (normal results): within 2 ulp of exp2.
  for (float v = -125.0f; v <= 0.0f; v += 0.0137f) {
    const double want = std::exp2(static_cast<double>(v));
    EXPECT_LE(std::fabs(Exp2NonPositive(v) - want) / want, 2 * 0x1p-24) << v;
  }
}

TEST(StableCudaMath, HalfWidensExactlyForAll65536Patterns) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float want =
        static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(static_cast<uint16_t>(h)));
    const float got = WidenF16(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
    } else {
      ASSERT_EQ(FloatBits(got), FloatBits(want)) << h;
    }
    const float bf =
        static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(static_cast<uint16_t>(h)));
    if (!std::isnan(bf)) {
      ASSERT_EQ(FloatBits(WidenBF16(static_cast<uint16_t>(h))), FloatBits(bf));
    }
  }
}

TEST(StableCudaMath, OrderedKeyIsMonotoneAndZerosTie) {
  EXPECT_EQ(OrderedKey(0.0f), OrderedKey(-0.0f));
  std::vector<float> v = {-kInf, -3e38f, -1.0f, -1e-45f, 0.0f, 1e-45f, 1e-30f, 2.0f, 3e38f, kInf};
  for (std::size_t i = 1; i < v.size(); ++i) EXPECT_LT(OrderedKey(v[i - 1]), OrderedKey(v[i]));
  std::mt19937 rng(2);
  for (int n = 0; n < 100000; ++n) {
    const float a = BitsFloat(static_cast<uint32_t>(rng()));
    const float b = BitsFloat(static_cast<uint32_t>(rng()));
    if (std::isnan(a) || std::isnan(b)) continue;
    ASSERT_EQ(a < b, OrderedKey(a) < OrderedKey(b)) << a << " " << b;
    ASSERT_EQ(a == b, OrderedKey(a) == OrderedKey(b)) << a << " " << b;
  }
}

TEST(StableCudaMath, RegimesAndLimits) {
  EXPECT_EQ(MakeRowSetup(3.0f, 0.0f).mode, Mode::kLimit);
  EXPECT_EQ(MakeRowSetup(kInf, 0.7f).mode, Mode::kLimit);
  EXPECT_EQ(MakeRowSetup(3.0f, 0.7f).mode, Mode::kNormal);
  EXPECT_EQ(MakeRowSetup(3.0f, 1e-45f).mode, Mode::kDouble);  // log2(e) / T overflows
  EXPECT_EQ(MakeRowSetup(3.0f, 1e38f).mode, Mode::kDouble);   // x - m could overflow
  EXPECT_EQ(MakeRowSetup(-3.0f, 3e38f).mode, Mode::kDouble);  // scale below FLT_MIN
  // T = 0: uniform over the tied maxima, masked maximum excluded.
  const auto p0 = ModelProbabilities(TestRow({1, 3, 3, 2, 3}).T(0.0f).Mask({1, 1, 0, 1, 1}));
  EXPECT_EQ(p0, (std::vector<double>{0, 0.5, 0, 0, 0.5}));
  // +inf wins uniformly, at any temperature, over finite logits and -inf.
  const auto pinf = ModelProbabilities(TestRow({1, kInf, -kInf, kInf}).T(1e30f));
  EXPECT_EQ(pinf, (std::vector<double>{0, 0.5, 0, 0.5}));
  // The brief's f16 row: 30000 / 0.1 would overflow f16; max subtracted first gives token 0.
  const auto ph = ModelProbabilities(TestRow({30000, -5, 20, 100}, DType::kF16).T(0.1f));
  EXPECT_EQ(ph[0], 1.0);
  // Invalid rows are flagged for the host's exact error message.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(Model(TestRow({1, nan})).status(), RowStatus::kNanLogit);
  EXPECT_EQ(Model(TestRow({1, nan}).Mask({1, 0})).status(), RowStatus::kOk);
  EXPECT_EQ(Model(TestRow({1, 2}).Mask({0, 0})).status(), RowStatus::kEmptySupport);
  EXPECT_EQ(Model(TestRow({-kInf, -kInf})).status(), RowStatus::kEmptySupport);
}

TEST(StableCudaMath, TopKRadixSelectKeepsAllTiesAtTheKthValue) {
  std::mt19937_64 rng(3);
  for (int n = 0; n < 300; ++n) {
    const std::size_t v = 1 + rng() % 3000;
    // Few distinct values so that ties at the k-th value are common; -0 and +0 among them.
    std::vector<float> values = {-0.0f, 0.0f, 1.5f, -2.25f, 7.0f, -kInf, 1e-40f, -1e-40f, 3e38f};
    std::vector<float> x(v);
    for (float& f : x) f = (rng() % 2) ? values[rng() % values.size()] : float(rng() % 64) / 8;
    std::vector<uint8_t> mask(v);
    for (auto& b : mask) b = rng() % 5 != 0;
    mask[rng() % v] = 1;
    x[rng() % v] = 7.5f;  // a finite maximum, so the support is never empty
    const int64_t k = 1 + static_cast<int64_t>(rng() % (v + 2));
    TestRow row = TestRow(x).TopK(k);
    const bool masked = rng() % 2;
    if (masked) row.Mask(mask);
    const HostModelRow m = Model(row);
    if (m.status() != RowStatus::kOk) continue;
    // Expected: keep x >= the k-th largest support value (all kept if fewer than k).
    std::vector<float> support;
    for (std::size_t i = 0; i < v; ++i) {
      if ((!masked || mask[i]) && x[i] != -kInf) support.push_back(x[i]);
    }
    std::sort(support.begin(), support.end(), std::greater<float>());
    const float kth = static_cast<std::size_t>(k) <= support.size() && k < int64_t(v)
                          ? support[static_cast<std::size_t>(k - 1)]
                          : -kInf;
    for (std::size_t i = 0; i < v; ++i) {
      const bool in_support = (!masked || mask[i]) && x[i] != -kInf;
      // The threshold, not the weight: far below a 3e38 maximum every weight underflows to 0.
      const bool kept = in_support && OrderedKey(x[i]) >= m.thresholds().top_k_key;
      ASSERT_EQ(kept, in_support && x[i] >= kth) << "row " << n << " token " << i << " k " << k;
    }
  }
}

// top-p against a direct sort of the same fixed-point masses: the radix search finds the
// same cut, ties at the cut kept.
TEST(StableCudaMath, TopPSearchMatchesASortOfTheSameMasses) {
  std::mt19937_64 rng(4);
  for (int n = 0; n < 150; ++n) {  // O(V^2) check: modest rows
    const std::size_t v = 1 + rng() % 1200;
    std::vector<float> x(v);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    for (float& f : x) f = rng() % 3 == 0 ? std::round(normal(rng)) : normal(rng);  // ties
    const float p = std::uniform_real_distribution<float>(0.01f, 0.999f)(rng);
    const float t = std::uniform_real_distribution<float>(0.2f, 3.0f)(rng);
    const TestRow row = TestRow(x).T(t).TopP(p);  // the model reads the row's logits
    const HostModelRow m = Model(row);
    ASSERT_EQ(m.status(), RowStatus::kOk);
    const RowSetup s = MakeRowSetup(*std::max_element(x.begin(), x.end()), t);
    uint64_t z = 0;
    for (float f : x) z += FixedMass(BaseWeight(f, s));
    const double target = TopPTarget(p, z);
    for (std::size_t i = 0; i < v; ++i) {
      uint64_t before = 0;  // mass of strictly larger values
      for (float f : x) before += f > x[i] ? FixedMass(BaseWeight(f, s)) : 0;
      const bool want = static_cast<double>(before) < target;
      ASSERT_EQ(m.Weight(static_cast<int64_t>(i)) > 0.0f, want)
          << "row " << n << " token " << i << " x " << x[i] << " before " << before << " target "
          << target << " z " << z << " key " << OrderedKey(x[i]) << " cut key "
          << m.thresholds().top_p_key << " w " << m.Weight(static_cast<int64_t>(i));
    }
  }
}

// A top-p cut mid-gap (BAND-3's off-by-one row): exactly the tokens before the cut.
TEST(StableCudaMath, TopPCutMidGapKeepsExactlyThePrefix) {
  // Probabilities 0.4, 0.3, 0.2, 0.1 (log-weights at T = 1); p = 0.75 lies mid-gap between
  // the cumulative 0.7 and 0.9: three tokens, never two or four.
  const TestRow row =
      TestRow({std::log(0.3f), std::log(0.1f), std::log(0.4f), std::log(0.2f)}).TopP(0.75f);
  const auto p = ModelProbabilities(row);
  EXPECT_GT(p[0], 0);
  EXPECT_EQ(p[1], 0);
  EXPECT_GT(p[2], 0);
  EXPECT_GT(p[3], 0);
  const properties::ProbabilityCheck c = CheckAgainstReference(row);
  EXPECT_TRUE(c.ok) << c.property << ": " << c.failure;
}

std::vector<TestRow> ExtremeRows() {
  const float fmax = std::numeric_limits<float>::max();
  std::vector<TestRow> rows;
  rows.push_back(TestRow({30000, -5, 20, 100}, DType::kF16).T(0.1f));
  rows.push_back(TestRow({30000, -5, 20, 100}, DType::kBF16).T(0.1f));
  rows.push_back(TestRow({65504, -65504, 65472, 0, 1e-7f}, DType::kF16).T(1000.0f));
  rows.push_back(TestRow({fmax, -fmax, fmax, 0}).T(1e38f));
  rows.push_back(TestRow({fmax, std::nextafter(fmax, 0.0f), 1e38f}).T(3e31f));
  rows.push_back(TestRow({1, 2, 3, 4}).T(1e-30f));
  rows.push_back(TestRow({1, 2, 3, 3}).T(0.0f));
  rows.push_back(TestRow({1, kInf, 3, kInf}).T(0.7f));
  rows.push_back(TestRow({1, kInf, 3, kInf}).T(0.7f).Mask({1, 0, 1, 1}));
  rows.push_back(TestRow({-kInf, -kInf, 0.5f, -kInf}).T(2.0f));
  rows.push_back(TestRow({9, -3, 100, 7}).Mask({0, 1, 0, 0}).T(1e-30f));
  rows.push_back(TestRow({0.0f, 1e-45f, 3e-45f}).T(1e-45f));
  rows.push_back(TestRow({1, 2, 3, 4, 5, 6}).TopK(3));
  rows.push_back(TestRow({1, 2, 3, 3, 3, 0}).TopK(2));       // tie at the k-th value: keep all
  rows.push_back(TestRow({-0.0f, 0.0f, -1, 0.0f}).TopK(1));  // -0 and +0 tie
  rows.push_back(TestRow({0.1f, 2.3f, -1.7f, 0.9f, 1.4f}).T(0.8f).TopP(0.7f));
  rows.push_back(TestRow({0.1f, 2.3f, -1.7f, 0.9f, 1.4f}).T(0.8f).MinP(0.2f));
  rows.push_back(TestRow({0.1f, 2.3f, -1.7f, 0.9f, 1.4f, 2.2f}).TopK(4).TopP(0.8f).MinP(0.1f));
  rows.push_back(TestRow(std::vector<float>(1000, 0.5f)).T(0.3f).TopP(0.5f));  // all tied
  rows.push_back(TestRow({2, 2, 1, 1, 0}).TopP(0.3f).Mask({1, 0, 1, 1, 1}));
  return rows;
}

TEST(StableCudaMath, PipelineWithinToleranceOnExtremeRows) {
  double worst = 0;
  for (const TestRow& row : ExtremeRows()) {
    const properties::ProbabilityCheck c = CheckAgainstReference(row);
    EXPECT_TRUE(c.ok) << c.property << ": " << c.failure;
    worst = std::max(worst, c.worst_ratio);
  }
  std::printf("[stable_cuda model] extreme rows: worst error / allowed = %.3g\n", worst);
}

TEST(StableCudaMath, PipelineWithinToleranceOnRandomRows) {
  std::mt19937_64 rng(20261201);
  double worst = 0;
  const std::vector<std::size_t> sizes = {1, 3, 17, 255, 256, 257, 1000, 4097, 32768, 131072};
  for (int n = 0; n < 150; ++n) {
    const std::size_t v = sizes[rng() % sizes.size()];
    const double scale = std::pow(10.0, std::uniform_real_distribution<double>(-2, 3)(rng));
    std::normal_distribution<float> normal(0.0f, static_cast<float>(scale));
    std::vector<float> logits(v);
    for (float& f : logits) f = normal(rng);
    TestRow row(logits, static_cast<DType>(rng() % 3));
    row.T(static_cast<float>(std::pow(10.0, std::uniform_real_distribution<double>(-3, 2)(rng))));
    if (rng() % 4 == 0) row.TopK(static_cast<int64_t>(1 + rng() % v));
    if (rng() % 4 == 0) row.TopP(std::uniform_real_distribution<float>(0.05f, 0.99f)(rng));
    if (rng() % 4 == 0) row.MinP(std::uniform_real_distribution<float>(0.0f, 0.3f)(rng));
    if (rng() % 4 == 0) {
      std::vector<uint8_t> mask(v);
      for (auto& b : mask) b = rng() % 3 != 0;
      mask[0] = 1;
      row.Mask(mask);
    }
    const properties::ProbabilityCheck c = CheckAgainstReference(row);
    EXPECT_TRUE(c.ok) << "row " << n << " V=" << v << " " << c.property << ": " << c.failure;
    worst = std::max(worst, c.worst_ratio);
  }
  std::printf("[stable_cuda model] random rows: worst error / allowed = %.3g\n", worst);
}

// cross-device determinism: the model draws stable_cpu's tokens for the same seed and row id,
// except where u lies within the samplers' cumulative error of a boundary (DRAW-4).
TEST(StableCudaMath, DrawsStableCpusTokens) {
  auto cpu = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(cpu.ok());
  std::mt19937_64 rng(5);
  std::size_t draws = 0, differ = 0;
  for (std::size_t v : {2u, 10u, 1000u, 32768u, 262144u}) {
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<float> logits(v);
    for (float& f : logits) f = normal(rng);
    for (int variant = 0; variant < 3; ++variant) {
      TestRow row = TestRow(logits, static_cast<DType>(variant)).T(0.9f).RowId(1000 + v);
      if (variant == 1) row.TopK(static_cast<int64_t>(v / 2 + 1)).MinP(0.01f);
      if (variant == 2) row.TopP(0.9f);
      const auto ref = ComputeReference(row.view(), StableCpuSampler::DeclaredPolicies());
      ASSERT_TRUE(ref.ok());
      std::vector<long double> cdf(v);
      long double c = 0;
      for (std::size_t i = 0; i < v; ++i) cdf[i] = c += ref->probs[i];
      const uint64_t n = v > 100000 ? 2000 : 10000;
      auto want = (*cpu)->Sample(adapters::Batch{row.dtype(), v, {row.view()}}, 77, 0, n);
      ASSERT_TRUE(want.ok()) << want.error().message;
      const HostModelRow m = Model(row);
      const double slack = 2 * TotalVariationTolerance(AccuracyFor(AccuracyClass::kF32), v);
      for (uint64_t j = 0; j < n; ++j) {
        const double u = CanonicalUniform(77, 1000 + v, j);
        const int64_t have = m.Draw(u);
        ++draws;
        ASSERT_GT(m.Weight(have), 0.0f);
        if (have == (*want)[j]) continue;
        ++differ;
        const std::size_t boundary = static_cast<std::size_t>(std::min(have, (*want)[j]));
        EXPECT_LE(std::fabs(u - static_cast<double>(cdf[boundary])), slack)
            << "V " << v << " draw " << j << ": stable_cpu " << (*want)[j] << ", model " << have;
      }
    }
  }
  std::printf("[stable_cuda model] %zu of %zu draws differ from stable_cpu (inside bands)\n",
              differ, draws);
  EXPECT_LE(differ, draws / 1000);
}

TEST(StableCudaMath, DrawNeverReturnsAZeroWeightToken) {
  // Zero weights at both ends and in the middle; u at its extremes (DRAW-2) and everywhere.
  const TestRow row = TestRow({-kInf, 1, -kInf, 2, 1, -kInf}).Mask({1, 1, 1, 1, 0, 1});
  const HostModelRow m = Model(row);
  EXPECT_EQ(m.Draw(0x1p-53), 1);
  EXPECT_EQ(m.Draw(1 - 0x1p-53), 3);
  for (double u = 0.001; u < 1; u += 0.001) {
    const int64_t t = m.Draw(u);
    ASSERT_TRUE(t == 1 || t == 3) << u;
  }
}

TEST(StableCudaMath, ChunkSumsAreAccurateAndDependOnTheDataOnly) {
  std::mt19937 rng(6);
  std::vector<float> w(kChunk);
  for (float& f : w) f = std::uniform_real_distribution<float>(0, 1)(rng);
  long double exact = 0;
  for (float f : w) exact += f;
  for (int64_t n : {1, 31, 32, 33, 255, 256}) {
    long double e = 0;
    for (int64_t i = 0; i < n; ++i) e += w[static_cast<std::size_t>(i)];
    const double s =
        ChunkSumWarpOrder([&](int64_t i) { return w[static_cast<std::size_t>(i)]; }, 0, n);
    EXPECT_LE(std::fabs(static_cast<long double>(s) - e) / e, 1e-15L) << n;
  }
}

}  // namespace
}  // namespace sampcert::impls::cuda_math

// stable_cpu against the reference: probabilities within SPEC.md's tolerances on extreme and
// random rows, the reference sampler's tokens for the same seed and row id (except inside
// rounding bands), batch independence, and the reference's errors for invalid input.
#include "impls/stable_cpu/stable_cpu_sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "adapters/sampler.h"
#include "properties/probability_check.h"
#include "registry/open_sampler.h"
#include "sampcert/canonical_draw.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/reference_sampler.h"
#include "sampcert/row_validation.h"
#include "sampcert/tolerance.h"
#include "tests/support/test_rows.h"

namespace sampcert::impls {
namespace {

using adapters::Batch;
using testing_support::TestRow;

constexpr float kInf = std::numeric_limits<float>::infinity();

class StableCpu : public testing::Test {
 protected:
  void SetUp() override {
    auto s = registry::OpenSampler("stable_cpu");
    ASSERT_TRUE(s.ok()) << s.error().message;
    sampler_ = std::move(s.value());
  }
  static Batch One(const TestRow& row) { return Batch{row.dtype(), row.vocab(), {row.view()}}; }

  // Probabilities of one row checked against the reference (PROB-1 and friends).
  properties::ProbabilityCheck Check(const TestRow& row) {
    const auto ref = ComputeReference(row.view(), StableCpuSampler::DeclaredPolicies());
    EXPECT_TRUE(ref.ok()) << ref.error().message;
    auto probs = sampler_->Probabilities(One(row));
    EXPECT_TRUE(probs.ok()) << probs.error().message;
    if (!ref.ok() || !probs.ok()) return {};
    return properties::CheckProbabilities(*ref, *probs, AccuracyFor(AccuracyClass::kF32));
  }

  std::unique_ptr<adapters::Sampler> sampler_;
};

std::vector<TestRow> ExtremeRows() {
  const float fmax = std::numeric_limits<float>::max();
  std::vector<TestRow> rows;
  rows.push_back(TestRow({30000, -5, 20, 100}, DType::kF16).T(0.1f));  // the brief's row
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
  rows.push_back(TestRow({1, 2, 3, 3, 3, 0}).TopK(2));  // tie at the k-th value: keep all
  rows.push_back(TestRow({0.1f, 2.3f, -1.7f, 0.9f, 1.4f}).T(0.8f).TopP(0.7f));
  rows.push_back(TestRow({0.1f, 2.3f, -1.7f, 0.9f, 1.4f}).T(0.8f).MinP(0.2f));
  rows.push_back(TestRow({0.1f, 2.3f, -1.7f, 0.9f, 1.4f, 2.2f}).TopK(4).TopP(0.8f).MinP(0.1f));
  rows.push_back(TestRow(std::vector<float>(1000, 0.5f)).T(0.3f).TopP(0.5f));
  return rows;
}

TEST_F(StableCpu, ProbabilitiesWithinToleranceOnExtremeRows) {
  double worst = 0;
  for (const TestRow& row : ExtremeRows()) {
    const properties::ProbabilityCheck c = Check(row);
    EXPECT_TRUE(c.ok) << c.property << ": " << c.failure;
    worst = std::max(worst, c.worst_ratio);
  }
  std::printf("[stable_cpu] extreme rows: worst error / allowed = %.3g\n", worst);
}

TEST_F(StableCpu, ProbabilitiesWithinToleranceOnRandomRows) {
  std::mt19937_64 rng(20261129);
  double worst = 0, worst_rel = 0, worst_tv_ratio = 0;
  const std::vector<std::size_t> sizes = {1, 3, 17, 255, 257, 1000, 4097, 32768, 131072};
  for (int n = 0; n < 200; ++n) {
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
    const properties::ProbabilityCheck c = Check(row);
    EXPECT_TRUE(c.ok) << "row " << n << " V=" << v << " " << c.property << ": " << c.failure;
    worst = std::max(worst, c.worst_ratio);
    worst_rel = std::max(worst_rel, c.worst_rel_error);
    worst_tv_ratio = std::max(worst_tv_ratio, c.total_variation / c.tv_tolerance);
  }
  std::printf(
      "[stable_cpu] random rows: worst error / allowed = %.3g, worst relative error "
      "%.3g, worst TV / allowed = %.3g\n",
      worst, worst_rel, worst_tv_ratio);
  RecordProperty("worst_error_ratio", std::to_string(worst));
}

// The same tokens as the reference sampler for the same seed and row id; a difference is only
// allowed where u lies within the sampler's cumulative error (2 * TV tolerance) of a boundary.
TEST_F(StableCpu, SameTokensAsTheReferenceSampler) {
  std::mt19937_64 rng(5);
  std::size_t draws = 0, differ = 0;
  for (std::size_t v : {2u, 10u, 1000u, 32768u}) {
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<float> logits(v);
    for (float& f : logits) f = normal(rng);
    const TestRow row = TestRow(logits).T(0.9f).RowId(1000 + v);
    const auto ref = ComputeReference(row.view(), StableCpuSampler::DeclaredPolicies());
    ASSERT_TRUE(ref.ok());
    const ReferenceSampler ref_sampler(ref->probs);
    std::vector<long double> cdf(v);
    long double c = 0;
    for (std::size_t i = 0; i < v; ++i) cdf[i] = c += ref->probs[i];
    const uint64_t n = 20000;
    auto got = sampler_->Sample(One(row), 77, 0, n);
    ASSERT_TRUE(got.ok()) << got.error().message;
    const double slack = 2 * TotalVariationTolerance(AccuracyFor(AccuracyClass::kF32), v);
    for (uint64_t j = 0; j < n; ++j) {
      const int64_t want = ref_sampler.Draw(77, 1000 + v, j);
      const int64_t have = (*got)[j];
      ++draws;
      if (want == have) continue;
      ++differ;
      const double u = CanonicalUniform(77, 1000 + v, j);
      const std::size_t boundary = static_cast<std::size_t>(std::min(want, have));
      EXPECT_LE(std::fabs(u - static_cast<double>(cdf[boundary])), slack)
          << "draw " << j << ": reference " << want << ", stable_cpu " << have;
    }
  }
  std::printf(
      "[stable_cpu] %zu of %zu draws differ from the reference sampler (all inside "
      "rounding bands)\n",
      differ, draws);
  EXPECT_LT(differ, draws / 1000);
}

TEST_F(StableCpu, RowsAreIndependentOfTheBatch) {
  TestRow a = TestRow({0.5f, 1.5f, -2, 3, 0}).T(0.7f).RowId(11);
  TestRow b = TestRow({9, 9, 9, 9, -kInf}).T(0.0f).RowId(12);
  TestRow c = TestRow({1, 2, 3, 4, 5}).T(2.0f).TopK(2).RowId(13).Mask({1, 1, 0, 1, 1});
  auto alone = sampler_->Sample(One(a), 3, 0, 500);
  auto alone_p = sampler_->Probabilities(One(a));
  ASSERT_TRUE(alone.ok() && alone_p.ok());
  Batch batch{DType::kF32, 5, {b.view(), a.view(), c.view()}};
  auto together = sampler_->Sample(batch, 3, 0, 500);
  auto together_p = sampler_->Probabilities(batch);
  ASSERT_TRUE(together.ok() && together_p.ok());
  EXPECT_TRUE(std::equal(alone->begin(), alone->end(), together->begin() + 500));
  EXPECT_TRUE(std::equal(alone_p->begin(), alone_p->end(), together_p->begin() + 5));
}

TEST_F(StableCpu, DrawsAreReproducibleAndRandomAccess) {
  const TestRow row = TestRow({0.1f, 0.2f, 0.3f, 0.4f}).RowId(9);
  auto first = sampler_->Sample(One(row), 5, 0, 100);
  auto again = sampler_->Sample(One(row), 5, 0, 100);
  auto tail = sampler_->Sample(One(row), 5, 60, 40);
  auto other = sampler_->Sample(One(row), 6, 0, 100);
  ASSERT_TRUE(first.ok() && again.ok() && tail.ok() && other.ok());
  EXPECT_EQ(*first, *again);
  EXPECT_TRUE(std::equal(tail->begin(), tail->end(), first->begin() + 60));
  EXPECT_NE(*first, *other);
}

TEST_F(StableCpu, TheBriefsHalfOverflowRowSamplesTokenZero) {
  const TestRow row = TestRow({30000, -5, 20, 100}, DType::kF16).T(0.1f);
  auto tokens = sampler_->Sample(One(row), 1, 0, 1000);
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  for (int64_t t : *tokens) ASSERT_EQ(t, 0);
}

TEST_F(StableCpu, NeverDrawsOutsideTheKeptSet) {
  const TestRow row =
      TestRow({5, -kInf, 5, 1, 5, 0}).Mask({1, 1, 0, 1, 1, 1}).T(0.5f).TopK(2).RowId(4);
  auto tokens = sampler_->Sample(One(row), 8, 0, 20000);
  ASSERT_TRUE(tokens.ok());
  for (int64_t t : *tokens) ASSERT_TRUE(t == 0 || t == 4) << t;
}

TEST_F(StableCpu, InvalidInputGivesTheReferenceError) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<TestRow> rows = {
      TestRow({1, 2}).T(nan),       TestRow({1, 2}).T(-1),       TestRow({1, 2}).T(kInf),
      TestRow({1, 2}).TopK(-3),     TestRow({1, 2}).TopP(0),     TestRow({1, 2}).TopP(1.01f),
      TestRow({1, 2}).MinP(1),      TestRow({1, 2}).MinP(-0.5f), TestRow({1, nan}),
      TestRow({1, 2}).Mask({0, 0}), TestRow({-kInf, -kInf}),     TestRow({nan, 3}, DType::kF16),
  };
  for (const TestRow& row : rows) {
    const Error want = ValidateRow(row.view(), StableCpuSampler::DeclaredPolicies(), 0);
    ASSERT_NE(want.code, ErrorCode::kOk);
    auto got = sampler_->Sample(One(row), 1, 0, 1);
    ASSERT_FALSE(got.ok()) << want.message;
    EXPECT_EQ(got.error().code, want.code) << got.error().message;
    EXPECT_EQ(got.error().message, want.message);
    EXPECT_EQ(got.error().row, 0);
  }
  // In a batch, the error names the offending row.
  const TestRow good({1, 2});
  const TestRow bad = TestRow({1, 2}).T(-1);
  Batch batch{DType::kF32, 2, {good.view(), good.view(), bad.view()}};
  auto got = sampler_->Sample(batch, 1, 0, 1);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().row, 2);
  EXPECT_NE(got.error().message.find("row 2:"), std::string::npos) << got.error().message;
}

// ---- The penalties (SPEC section 16) ----

std::vector<TestRow> PenalizedRows() {
  const float fmax = std::numeric_limits<float>::max();
  std::vector<TestRow> rows;
  // The sign rule on both signs, a token seen three times (once for the repetition rule).
  rows.push_back(TestRow({2.0f, -1.5f, 0.7f, -0.2f, 1.9f})
                     .History({0}, {1, 1, 1, 3})
                     .Penalties(1.8f, 0.0f, 0.0f));
  // Presence and frequency, output only: the prompt's token 4 untouched.
  rows.push_back(TestRow({2.0f, -1.5f, 0.7f, -0.2f, 1.9f})
                     .History({4, 4}, {0, 2, 2})
                     .Penalties(1.0f, 0.6f, 0.35f));
  // All three, negative additive penalties (a bonus), f16 and bf16 logits, a temperature.
  rows.push_back(TestRow({3.5f, -2.0f, 1.0f, 0.0f, 2.5f}, DType::kF16)
                     .T(0.6f)
                     .History({0, 1}, {2, 3, 3})
                     .Penalties(1.3f, -0.5f, 0.25f));
  rows.push_back(TestRow({3.5f, -2.0f, 1.0f, 0.0f, 2.5f}, DType::kBF16)
                     .T(1.7f)
                     .History({}, {0, 0, 4})
                     .Penalties(0.8f, 0.5f, -0.125f));
  // Truncation on the penalized logits: top-k and top-p see x', not x.
  rows.push_back(TestRow({5, 4, 3, 2, 1, 0}).TopK(2).History({}, {0}).Penalties(1.0f, 1.5f, 0));
  rows.push_back(TestRow({0.1f, 2.3f, -1.7f, 0.9f, 1.4f})
                     .T(0.8f)
                     .TopP(0.7f)
                     .History({1}, {4})
                     .Penalties(1.5f, 0.1f, 0.1f));
  // Greedy on the penalized logits; a +inf token stays +inf; masked tokens stay masked.
  rows.push_back(TestRow({3, 2.9f, 1, 0}).T(0.0f).History({}, {0}).Penalties(1.1f, 0, 0));
  rows.push_back(TestRow({1, kInf, 3, kInf}).History({1}, {1}).Penalties(2, 1, 1));
  rows.push_back(
      TestRow({9, -3, 100, 7}).Mask({1, 1, 0, 1}).History({2}, {2, 0}).Penalties(1.2f, 0.5f, 0.5f));
  // PEN-4's overflow: f32 logits near FLT_MAX divided by r = 0.5 exceed FLT_MAX exactly.
  rows.push_back(
      TestRow({fmax, 0.9f * fmax, 1.0f}).T(1e38f).History({}, {0, 1}).Penalties(0.5f, 0, 0));
  // A wide vocabulary with a long history.
  std::vector<float> wide(3000);
  std::vector<int64_t> seen;
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = std::sin(0.37f * static_cast<float>(i));
  for (int64_t i = 0; i < 900; ++i) seen.push_back((i * 7919) % 3000);
  rows.push_back(TestRow(wide).T(0.3f).History({1, 2, 3}, seen).Penalties(1.2f, 0.3f, 0.1f));
  return rows;
}

TEST_F(StableCpu, PenalizedRowsWithinTolerance) {
  double worst = 0;
  for (const TestRow& row : PenalizedRows()) {
    const properties::ProbabilityCheck c = Check(row);
    EXPECT_TRUE(c.ok) << c.property << ": " << c.failure;
    worst = std::max(worst, c.worst_ratio);
  }
  std::printf("[stable_cpu] penalized rows: worst error / allowed = %.3g\n", worst);
}

TEST_F(StableCpu, PenalizedRandomRowsWithinTolerance) {
  std::mt19937_64 rng(20261205);
  double worst = 0;
  for (int n = 0; n < 60; ++n) {
    const std::size_t v = 1 + rng() % 700;
    std::normal_distribution<float> normal(0.0f, 4.0f);
    std::vector<float> logits(v);
    for (float& f : logits) f = normal(rng);
    std::vector<int64_t> prompt(rng() % 20), output(rng() % 40);
    for (int64_t& t : prompt) t = static_cast<int64_t>(rng() % v);
    for (int64_t& t : output) t = static_cast<int64_t>(rng() % v);
    TestRow row(logits, static_cast<DType>(rng() % 3));
    row.T(std::uniform_real_distribution<float>(0.05f, 3.0f)(rng)).History(prompt, output);
    row.Penalties(std::uniform_real_distribution<float>(0.5f, 2.0f)(rng),
                  std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng),
                  std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng));
    if (rng() % 3 == 0) row.TopK(static_cast<int64_t>(1 + rng() % v));
    if (rng() % 3 == 0) row.TopP(std::uniform_real_distribution<float>(0.05f, 0.99f)(rng));
    const properties::ProbabilityCheck c = Check(row);
    EXPECT_TRUE(c.ok) << "row " << n << " V=" << v << " " << c.property << ": " << c.failure;
    worst = std::max(worst, c.worst_ratio);
  }
  std::printf("[stable_cpu] random penalized rows: worst error / allowed = %.3g\n", worst);
}

TEST_F(StableCpu, PenaltiesOffChangeNothingBitForBit) {
  // PEN-4: with r = 1 (or 0) and alpha = beta = 0 the history is not read at all.
  for (const TestRow& base : ExtremeRows()) {
    TestRow with = base;
    with.History({0, 0}, {0}).Penalties(0.0f, 0.0f, 0.0f);
    auto a = sampler_->Probabilities(One(base));
    auto b = sampler_->Probabilities(One(with));
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b);
  }
}

TEST_F(StableCpu, InvalidPenaltiesGiveTheReferenceError) {
  const std::vector<TestRow> rows = {
      TestRow({1, 2}).Penalties(-1.0f, 0, 0),
      TestRow({1, 2}).Penalties(1, std::numeric_limits<float>::quiet_NaN(), 0),
      TestRow({1, 2}).History({}, {2}).Penalties(1.2f, 0, 0),
  };
  for (const TestRow& row : rows) {
    const Error want = ValidateRow(row.view(), StableCpuSampler::DeclaredPolicies(), 0);
    auto got = sampler_->Sample(One(row), 1, 0, 1);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code, ErrorCode::kInvalidPenalty);
    EXPECT_EQ(got.error().message, want.message);
  }
}

}  // namespace
}  // namespace sampcert::impls

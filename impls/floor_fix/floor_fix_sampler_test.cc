// floor_fix is right on the easy cases and the suite shows where it is not: +inf logits lose,
// T = 0 becomes a uniform draw over the whole row, an all-masked row returns a token instead of
// an error, and a masked outlier makes the -1e4 floor outrank every legitimate token.
#include "impls/floor_fix/floor_fix_sampler.h"

#include <gtest/gtest.h>

#include <limits>
#include <set>

#include "adapters/sampler.h"
#include "properties/probability_check.h"
#include "registry/open_sampler.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/tolerance.h"
#include "tests/support/test_rows.h"

namespace sampcert::impls {
namespace {

using adapters::Batch;
using testing_support::TestRow;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::unique_ptr<adapters::Sampler> FloorFix() {
  auto s = registry::OpenSampler("floor_fix");
  EXPECT_TRUE(s.ok());
  return std::move(s.value());
}

Batch One(const TestRow& row) { return Batch{row.dtype(), row.vocab(), {row.view()}}; }

properties::ProbabilityCheck Check(adapters::Sampler& s, const TestRow& row) {
  auto probs = s.Probabilities(One(row));
  EXPECT_TRUE(probs.ok());
  Policies pol;
  pol.nan_policy = NanPolicy::kMasked;  // what floor_fix declares
  const auto ref = ComputeReference(row.view(), pol);
  EXPECT_TRUE(ref.ok()) << ref.error().message;
  return properties::CheckProbabilities(*ref, *probs, AccuracyFor(AccuracyClass::kF32));
}

TEST(FloorFix, EasyRowsAreRight) {
  auto s = FloorFix();
  EXPECT_TRUE(Check(*s, TestRow({0.1f, 0.7f, -0.4f, 1.3f}).T(0.9f)).ok);
  EXPECT_TRUE(Check(*s, TestRow({30000, -5, 20, 100}, DType::kF16).T(0.1f)).ok);
  EXPECT_TRUE(Check(*s, TestRow({1, 2, 3, 4, 5}).TopK(2)).ok);
}

TEST(FloorFix, PositiveInfinityLoses) {
  auto s = FloorFix();
  const auto c = Check(*s, TestRow({1, kInf, 3}));
  EXPECT_FALSE(c.ok);  // SPEC SEM-4: token 1 wins; floor_fix draws all three uniformly
  EXPECT_EQ(c.property, "SUPP-2");
}

TEST(FloorFix, TemperatureZeroIsUniformOverTheRow) {
  auto s = FloorFix();
  auto tokens = s->Sample(One(TestRow({1, 2, 3}).T(0.0f)), 1, 0, 3000);
  ASSERT_TRUE(tokens.ok());
  const std::set<int64_t> seen(tokens->begin(), tokens->end());
  EXPECT_EQ(seen, (std::set<int64_t>{0, 1, 2}));  // SPEC SEM-3 wants only token 2
}

TEST(FloorFix, AllMaskedRowReturnsATokenInsteadOfAnError) {
  auto s = FloorFix();
  const TestRow row = TestRow({1, 2, 3}).Mask({0, 0, 0});
  auto tokens = s->Sample(One(row), 1, 0, 1);
  EXPECT_TRUE(tokens.ok());  // SPEC INV-6 wants EmptySupport
  EXPECT_FALSE(ComputeReference(row.view(), Policies{}).ok());
}

TEST(FloorFix, MaskedOutlierMakesTheFloorOutrankLegitimateTokens) {
  // The masked token's logit sets the maximum; at T = 0.01 every allowed token scales below
  // -1e4, so the masked ones (at exactly -1e4) win.
  auto s = FloorFix();
  const TestRow row = TestRow({1000, 0, 1, 2}).Mask({0, 1, 1, 1}).T(0.01f);
  auto tokens = s->Sample(One(row), 1, 0, 100);
  ASSERT_TRUE(tokens.ok());
  std::size_t masked_draws = 0;
  for (int64_t t : *tokens) masked_draws += t == 0;
  EXPECT_EQ(masked_draws, 100u);  // every draw is the masked token
}

}  // namespace
}  // namespace sampcert::impls

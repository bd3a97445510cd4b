// naive shows its documented failures: the brief's fp16 row overflows and the draw fails the
// way torch.multinomial does, while the same row in bf16 and f32 samples fine; T = 0 divides by
// zero; a negative temperature silently draws the least likely token; fp16 probabilities miss
// the fp32 tolerance it declares.
#include "impls/naive/naive_sampler.h"

#include <gtest/gtest.h>

#include <string>

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

std::unique_ptr<adapters::Sampler> Naive() {
  auto s = registry::OpenSampler("naive");
  EXPECT_TRUE(s.ok());
  return std::move(s.value());
}

Batch One(const TestRow& row) { return Batch{row.dtype(), row.vocab(), {row.view()}}; }

TEST(Naive, HalfOverflowGivesNanAndTheMultinomialError) {
  auto s = Naive();
  const TestRow row = TestRow({30000, -5, 20, 100}, DType::kF16).T(0.1f);
  auto tokens = s->Sample(One(row), 1, 0, 1);
  ASSERT_FALSE(tokens.ok());
  EXPECT_EQ(tokens.error().code, ErrorCode::kNumericalFailure);
  EXPECT_NE(tokens.error().message.find("probability tensor contains either inf, nan or element "
                                        "< 0"),
            std::string::npos)
      << tokens.error().message;
  EXPECT_NE(tokens.error().message.find("nan"), std::string::npos) << tokens.error().message;
  // The reference says this row is fine: all mass on token 0.
  const auto ref = ComputeReference(row.view(), Policies{});
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->probs[0], 1);
}

TEST(Naive, SameRowInBF16AndF32SamplesFine) {
  auto s = Naive();
  for (DType dt : {DType::kBF16, DType::kF32}) {
    const TestRow row = TestRow({30000, -5, 20, 100}, dt).T(0.1f);
    auto tokens = s->Sample(One(row), 1, 0, 100);
    ASSERT_TRUE(tokens.ok()) << tokens.error().message;
    for (int64_t t : *tokens) EXPECT_EQ(t, 0);
  }
}

TEST(Naive, TemperatureZeroDividesByZero) {
  auto s = Naive();
  auto tokens = s->Sample(One(TestRow({1, 2, 3}).T(0.0f)), 1, 0, 1);
  ASSERT_FALSE(tokens.ok());  // x / 0 = inf, inf - inf = NaN: an error where SPEC wants argmax
  EXPECT_EQ(tokens.error().code, ErrorCode::kNumericalFailure);
}

TEST(Naive, NegativeTemperatureIsASilentWrongToken) {
  auto s = Naive();
  auto tokens = s->Sample(One(TestRow({0, 10}).T(-1.0f)), 1, 0, 50);
  ASSERT_TRUE(tokens.ok());  // SPEC INV-1 wants an error; naive samples the wrong end instead
  for (int64_t t : *tokens) EXPECT_EQ(t, 0);
}

TEST(Naive, HalfPrecisionProbabilitiesMissTheDeclaredTolerance) {
  auto s = Naive();
  const TestRow row = TestRow({0.1f, 0.7f, -0.4f, 1.3f, 0.2f}, DType::kF16).T(0.9f);
  auto probs = s->Probabilities(One(row));
  ASSERT_TRUE(probs.ok()) << probs.error().message;
  const auto ref = ComputeReference(row.view(), Policies{});
  ASSERT_TRUE(ref.ok());
  const auto c = properties::CheckProbabilities(*ref, *probs, AccuracyFor(AccuracyClass::kF32));
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.property == "NORM-1" || c.property == "PROB-1") << c.property;
  // fp16 rounding: errors of the order of 2^-11, far beyond fp32's 1e-6.
  EXPECT_GT(c.worst_rel_error, 1e-4);
}

TEST(Naive, EasyF32RowIsRight) {
  auto s = Naive();
  const TestRow row = TestRow({0.1f, 0.7f, -0.4f, 1.3f, 0.2f}).T(0.9f);
  auto probs = s->Probabilities(One(row));
  ASSERT_TRUE(probs.ok());
  const auto ref = ComputeReference(row.view(), Policies{});
  ASSERT_TRUE(ref.ok());
  const auto c = properties::CheckProbabilities(*ref, *probs, AccuracyFor(AccuracyClass::kF32));
  EXPECT_TRUE(c.ok) << c.failure;
}

}  // namespace
}  // namespace sampcert::impls

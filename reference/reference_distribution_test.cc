// Unit tests of the reference's semantics: every invalid-input case, every policy, the limits
// and the boundary sets. Accuracy against MPFR is in reference_mpfr_test.cc.
#include "sampcert/reference_distribution.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "sampcert/tolerance.h"
#include "tests/support/test_rows.h"

namespace sampcert {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

using Row = testing_support::TestRow;

ReferenceDistribution Ok(const Row& row, const Policies& pol = {}) {
  Expected<ReferenceDistribution> r = ComputeReference(row.view(), pol, 3);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : ReferenceDistribution{};
}

Error Err(const Row& row, const Policies& pol = {}) {
  Expected<ReferenceDistribution> r = ComputeReference(row.view(), pol, 3);
  EXPECT_FALSE(r.ok());
  return r.ok() ? Error{} : r.error();
}

using KC = KeepClass;

// ---------------------------------------------------------------------------------------------
// Invalid input (SPEC section 5): every case is an error naming the row and the cause.

struct InvalidCase {
  std::string name;
  Row row;
  Policies policies;
  ErrorCode code;
  std::string cause;  // a fragment the message must contain
};

std::vector<InvalidCase> InvalidCases() {
  Policies masked_nan;
  masked_nan.nan_policy = NanPolicy::kMasked;
  Policies bad_order;
  bad_order.truncation_order = {TruncationStep::kTopK, TruncationStep::kTopK,
                                TruncationStep::kMinP};
  Policies bad_threshold;
  bad_threshold.greedy_threshold = kNan;
  Row null_logits = Row({1.0f}).NullLogits();
  Row bad_dtype = Row({1.0f}).RawDType(7);
  return {
      {"NanTemperature", Row({1, 2}).T(kNan), {}, ErrorCode::kInvalidTemperature, "NaN"},
      {"NegativeTemperature", Row({1, 2}).T(-0.5f), {}, ErrorCode::kInvalidTemperature, "-0.5"},
      {"InfiniteTemperature", Row({1, 2}).T(kInf), {}, ErrorCode::kInvalidTemperature, "inf"},
      {"NegativeTopK", Row({1, 2}).TopK(-1), {}, ErrorCode::kInvalidTopK, "-1"},
      {"ZeroTopP", Row({1, 2}).TopP(0.0f), {}, ErrorCode::kInvalidTopP, "(0, 1]"},
      {"TopPAboveOne", Row({1, 2}).TopP(1.5f), {}, ErrorCode::kInvalidTopP, "1.5"},
      {"NanTopP", Row({1, 2}).TopP(kNan), {}, ErrorCode::kInvalidTopP, "NaN"},
      {"NegativeMinP", Row({1, 2}).MinP(-0.1f), {}, ErrorCode::kInvalidMinP, "-0.1"},
      {"MinPOne", Row({1, 2}).MinP(1.0f), {}, ErrorCode::kInvalidMinP, "[0, 1)"},
      {"NanMinP", Row({1, 2}).MinP(kNan), {}, ErrorCode::kInvalidMinP, "NaN"},
      {"NanLogitStrict", Row({1, kNan, 2}), {}, ErrorCode::kNanLogit, "logit 1 is NaN"},
      {"AllMasked", Row({1, 2}).Mask({0, 0}), {}, ErrorCode::kEmptySupport, "2 masked"},
      {"AllNegInf", Row({-kInf, -kInf}), {}, ErrorCode::kEmptySupport, "2 -inf"},
      {"AllNanAsMasked", Row({kNan, kNan}), masked_nan, ErrorCode::kEmptySupport, "2 NaN"},
      {"MaskedAndNegInf",
       Row({-kInf, 5}).Mask({1, 0}),
       {},
       ErrorCode::kEmptySupport,
       "1 masked, 1 -inf"},
      {"EmptyVocab", Row({}), {}, ErrorCode::kEmptyVocab, "vocabulary size is 0"},
      {"NullLogits", null_logits, {}, ErrorCode::kEmptyVocab, "null"},
      {"BadTruncationOrder", Row({1, 2}), bad_order, ErrorCode::kInvalidArgument, "once each"},
      {"NanGreedyThreshold", Row({1, 2}), bad_threshold, ErrorCode::kInvalidArgument,
       "greedy threshold"},
      {"UnknownDType", bad_dtype, {}, ErrorCode::kInvalidArgument, "dtype"},
  };
}

// Test names show the case's name, not its bytes.
void PrintTo(const InvalidCase& c, std::ostream* os) { *os << c.name; }

class InvalidInput : public testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidInput, IsATypedErrorNamingRowAndCause) {
  const InvalidCase& c = GetParam();
  const Error e = Err(c.row, c.policies);
  EXPECT_EQ(e.code, c.code) << e.message;
  EXPECT_NE(e.message.find("row 3:"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find(c.cause), std::string::npos) << e.message;
}

INSTANTIATE_TEST_SUITE_P(Reference, InvalidInput, testing::ValuesIn(InvalidCases()),
                         [](const auto& param_info) { return param_info.param.name; });

TEST(Validation, NanInMaskedPositionIsNotAnError) {
  const auto d = Ok(Row({kNan, 1, 2}).Mask({0, 1, 1}));
  EXPECT_EQ(d.keep[0], KC::kOutsideSupport);
  EXPECT_EQ(d.support_size, 2u);
}

TEST(Validation, NanAsMaskedPolicyDropsIt) {
  Policies pol;
  pol.nan_policy = NanPolicy::kMasked;
  const auto d = Ok(Row({kNan, 0, std::log(3.0f)}), pol);
  EXPECT_EQ(d.keep[0], KC::kOutsideSupport);
  EXPECT_EQ(d.probs[0], 0);
  EXPECT_NEAR(static_cast<double>(d.probs[2]), 0.75, 1e-7);
}

TEST(Validation, NegativeZeroTemperatureIsGreedy) {
  const auto d = Ok(Row({1, 3, 2}).T(-0.0f));
  EXPECT_EQ(d.regime, Regime::kGreedy);
  EXPECT_EQ(d.probs[1], 1);
}

// ---------------------------------------------------------------------------------------------
// Exact semantics (SEM-*).

TEST(Semantics, SoftmaxOfKnownRow) {
  // exp(0) : exp(ln 2) : exp(ln 5) within fp32 rounding of the logs; check against the same
  // float values exactly in long double.
  const float a = 0.0f, b = std::log(2.0f), c = std::log(5.0f);
  const auto d = Ok(Row({a, b, c}));
  const long double wa = 1, wb = std::exp(static_cast<long double>(b)),
                    wc = std::exp(static_cast<long double>(c));
  const long double z = wa + wb + wc;
  EXPECT_NEAR(static_cast<double>(d.probs[0] / (wa / z) - 1), 0, 1e-17);
  EXPECT_NEAR(static_cast<double>(d.probs[1] / (wb / z) - 1), 0, 1e-17);
  EXPECT_NEAR(static_cast<double>(d.probs[2] / (wc / z) - 1), 0, 1e-17);
  EXPECT_NEAR(static_cast<double>(d.probs[2]), 5.0 / 8.0, 1e-6);
}

TEST(Semantics, TemperatureScales) {
  const auto d = Ok(Row({0, 1}).T(0.5f));
  const long double r = std::exp(2.0L);
  EXPECT_NEAR(static_cast<double>(d.probs[1]), static_cast<double>(r / (1 + r)), 1e-18);
}

TEST(Semantics, HalfOverflowRowIsFineInTheReference) {
  // The brief's reproducer: fp16 [30000, -5, 20, 100] / 0.1 overflows in fp16. The exact
  // distribution puts all its mass on token 0 (the rest is below e^-2999000).
  const auto d = Ok(Row({30000, -5, 20, 100}, DType::kF16).T(0.1f));
  EXPECT_EQ(d.regime, Regime::kFinite);
  EXPECT_EQ(d.probs[0], 1);
  EXPECT_EQ(d.probs[3], 0);
  EXPECT_EQ(d.keep[3], KC::kMustKeep);  // in the support, just negligible
}

TEST(Semantics, GreedyUniformOverTies) {
  const auto d = Ok(Row({5, 7, 7, 1, 7}).T(0));
  EXPECT_EQ(d.regime, Regime::kGreedy);
  for (int i : {1, 2, 4}) EXPECT_NEAR(static_cast<double>(d.probs[i]), 1.0 / 3, 1e-18);
  EXPECT_EQ(d.probs[0], 0);
  EXPECT_EQ(d.keep[0], KC::kMustDrop);
  EXPECT_EQ(d.keep[1], KC::kMustKeep);
}

TEST(Semantics, GreedyLowestIndexTieBreak) {
  Policies pol;
  pol.greedy_tie_break = GreedyTieBreak::kLowestIndex;
  const auto d = Ok(Row({5, 7, 7, 1, 7}).T(0), pol);
  EXPECT_EQ(d.probs[1], 1);
  EXPECT_EQ(d.keep[1], KC::kMustKeep);
  EXPECT_EQ(d.keep[2], KC::kMustDrop);
  EXPECT_EQ(d.keep[4], KC::kMustDrop);
}

TEST(Semantics, GreedyAnyLeavesTheWinnersOpen) {
  // POL-1 `any` (ABI MINOR 1): every winner may be drawn, none must be; the rest never.
  Policies pol;
  pol.greedy_tie_break = GreedyTieBreak::kAny;
  const auto d = Ok(Row({5, 7, 7, 1, 7}).T(0), pol);
  EXPECT_TRUE(d.any_greedy_ties);
  for (int i : {1, 2, 4}) EXPECT_EQ(d.keep[i], KC::kMayKeep) << i;
  for (int i : {0, 3}) EXPECT_EQ(d.keep[i], KC::kMustDrop) << i;
  EXPECT_EQ(d.probs[1], 1);  // the nominal: the lowest-index winner
  // Whatever winners the sampler keeps, the null is a distribution on them (the tests then
  // check only the support).
  const std::vector<uint8_t> kept{0, 0, 1, 0, 1};
  auto null = d.RenormalizedOver(kept);
  ASSERT_TRUE(null.ok()) << null.error().message;
  EXPECT_EQ((*null)[2] + (*null)[4], 1);
  // One winner: nothing open.
  const auto single = Ok(Row({5, 7, 6}).T(0), pol);
  EXPECT_FALSE(single.any_greedy_ties);
  EXPECT_EQ(single.keep[1], KC::kMustKeep);
}

TEST(Semantics, PerStepTieRules) {
  // ABI MINOR 1: Hugging Face keeps ties at the k-th value and breaks them at the top-p cut.
  Policies hf;
  hf.tie_rule = TieRule::kExactLowestIndex;  // overridden for both steps below
  hf.top_k_tie_rule = TieRule::kKeepAll;
  hf.top_p_tie_rule = TieRule::kExactAny;
  const auto k = Ok(Row({3, 2, 2, 2, 1}).TopK(2), hf);
  for (int i : {1, 2, 3}) EXPECT_EQ(k.keep[i], KC::kMustKeep) << i;
  EXPECT_EQ(k.kept_size, 4u);
  const float a = std::log(0.4f), b = std::log(0.2f);
  const auto p = Ok(Row({b, a, b, b}).TopP(0.5f), hf);
  for (int i : {0, 2, 3}) EXPECT_EQ(p.keep[i], KC::kMayKeep) << i;
  // Unset steps follow tie_rule.
  Policies lowest;
  lowest.tie_rule = TieRule::kExactLowestIndex;
  lowest.top_p_tie_rule = TieRule::kKeepAll;
  const auto k2 = Ok(Row({2, 3, 2, 2, 1}).TopK(2), lowest);
  EXPECT_EQ(k2.keep[2], KC::kMustDrop);
  EXPECT_EQ(k2.kept_size, 2u);
}

TEST(Semantics, PositiveInfinityWinsUniformly) {
  const auto d = Ok(Row({1e30f, kInf, 3, kInf}).T(2.0f));
  EXPECT_EQ(d.regime, Regime::kPositiveInf);
  EXPECT_EQ(d.probs[1], 0.5L);
  EXPECT_EQ(d.probs[3], 0.5L);
  EXPECT_EQ(d.probs[0], 0);
  EXPECT_EQ(d.keep[0], KC::kMustDrop);
}

TEST(Semantics, MaskedPositiveInfinityDoesNotWin) {
  const auto d = Ok(Row({1, kInf, 3}).Mask({1, 0, 1}));
  EXPECT_EQ(d.regime, Regime::kFinite);
  EXPECT_EQ(d.keep[1], KC::kOutsideSupport);
  EXPECT_GT(d.probs[2], d.probs[0]);
}

TEST(Semantics, NegativeInfinityIsOutsideSupport) {
  const auto d = Ok(Row({-kInf, 0, 0}));
  EXPECT_EQ(d.keep[0], KC::kOutsideSupport);
  EXPECT_EQ(d.probs[1], 0.5L);
}

TEST(Semantics, SubnormalTemperatureResolvesSubnormalLogits) {
  // Logits 1e-45 apart at T = 1e-45 still differ by e^1 in weight.
  const float t = std::numeric_limits<float>::denorm_min();
  const auto d = Ok(Row({0.0f, t}).T(t));
  const long double e = std::exp(1.0L);
  EXPECT_NEAR(static_cast<double>(d.probs[1]), static_cast<double>(e / (1 + e)), 1e-18);
}

TEST(Semantics, SingleAllowedToken) {
  const auto d = Ok(Row({9, -3, 100}).Mask({0, 1, 0}).T(1e-30f));
  EXPECT_EQ(d.probs[1], 1);
  EXPECT_EQ(d.kept_size, 1u);
}

TEST(Semantics, GreedyThresholdIsADeclaredDeviation) {
  Policies pol;
  pol.greedy_threshold = 1e-5f;
  const auto d = Ok(Row({0, 1e-6f}).T(1e-6f), pol);
  EXPECT_TRUE(d.greedy_threshold_applied);
  EXPECT_EQ(d.regime, Regime::kGreedy);
  EXPECT_EQ(d.probs[1], 1);
  // Without the threshold the exact answer is e/(1+e) on token 1: the deviation has a size.
  const auto exact = Ok(Row({0, 1e-6f}).T(1e-6f));
  EXPECT_FALSE(exact.greedy_threshold_applied);
  EXPECT_NEAR(static_cast<double>(TotalVariation(d.probs, exact.probs)),
              1.0 / (1.0 + std::exp(1.0)), 1e-6);
}

// ---------------------------------------------------------------------------------------------
// Top-k (SEM-6, POL-2, BAND-2).

TEST(TopK, KeepsKLargestAndRenormalizes) {
  const auto d = Ok(Row({1, 4, 2, 3}).TopK(2));
  EXPECT_EQ(d.keep[1], KC::kMustKeep);
  EXPECT_EQ(d.keep[3], KC::kMustKeep);
  EXPECT_EQ(d.keep[0], KC::kMustDrop);
  EXPECT_EQ(d.keep[2], KC::kMustDrop);
  const long double e = std::exp(1.0L);
  EXPECT_NEAR(static_cast<double>(d.probs[1]), static_cast<double>(e / (1 + e)), 1e-18);
}

TEST(TopK, KLargerThanVocabIsNoOp) {
  const auto d = Ok(Row({1, 2}).TopK(50));
  EXPECT_EQ(d.keep[0], KC::kMustKeep);
  EXPECT_EQ(d.kept_size, 2u);
}

TEST(TopK, TieKeepAll) {
  const auto d = Ok(Row({3, 2, 2, 2, 1}).TopK(2));
  EXPECT_EQ(d.keep[0], KC::kMustKeep);
  for (int i : {1, 2, 3}) EXPECT_EQ(d.keep[i], KC::kMustKeep) << i;
  EXPECT_EQ(d.keep[4], KC::kMustDrop);
  EXPECT_EQ(d.kept_size, 4u);
}

TEST(TopK, TieExactLowestIndex) {
  Policies pol;
  pol.tie_rule = TieRule::kExactLowestIndex;
  const auto d = Ok(Row({2, 3, 2, 2, 1}).TopK(2), pol);
  EXPECT_EQ(d.keep[1], KC::kMustKeep);
  EXPECT_EQ(d.keep[0], KC::kMustKeep);
  EXPECT_EQ(d.keep[2], KC::kMustDrop);
  EXPECT_EQ(d.keep[3], KC::kMustDrop);
  EXPECT_EQ(d.kept_size, 2u);
}

TEST(TopK, TieExactAnyLeavesTheTiesOpen) {
  Policies pol;
  pol.tie_rule = TieRule::kExactAny;
  const auto d = Ok(Row({2, 3, 2, 2, 1}).TopK(2), pol);
  EXPECT_EQ(d.keep[1], KC::kMustKeep);
  for (int i : {0, 2, 3}) EXPECT_EQ(d.keep[i], KC::kMayKeep) << i;
  EXPECT_EQ(d.keep[4], KC::kMustDrop);
  EXPECT_EQ(d.kept_size, 2u);  // nominally the lowest indices
  EXPECT_GT(d.probs[0], 0);
}

TEST(TopK, NearTieWithinRoundingIsMayKeep) {
  // 1 and 1 + 2^-23 differ by one fp32 ulp: an fp32 sampler cannot be held to their order.
  const float a = 1.0f, b = std::nextafter(1.0f, 2.0f);
  const auto d = Ok(Row({3, a, b}).TopK(2));
  EXPECT_EQ(d.keep[0], KC::kMustKeep);
  EXPECT_EQ(d.keep[1], KC::kMayKeep);
  EXPECT_EQ(d.keep[2], KC::kMayKeep);
  // A clear gap is decided exactly.
  const auto e = Ok(Row({3, 1.0f, 1.01f}).TopK(2));
  EXPECT_EQ(e.keep[1], KC::kMustDrop);
  EXPECT_EQ(e.keep[2], KC::kMustKeep);
}

TEST(TopK, GreedyRegimeWithTies) {
  Policies pol;
  pol.tie_rule = TieRule::kExactLowestIndex;
  const auto d = Ok(Row({7, 7, 7}).T(0).TopK(1), pol);
  EXPECT_EQ(d.probs[0], 1);
  EXPECT_EQ(d.keep[1], KC::kMustDrop);
}

// ---------------------------------------------------------------------------------------------
// Top-p (SEM-6, BAND-3).

// Masses 0.5, 0.25, 0.125, 0.125 (logits are logs of them).
Row Dyadic() { return Row({std::log(0.5f), std::log(0.25f), std::log(0.125f), std::log(0.125f)}); }

TEST(TopP, SmallestPrefixReachingP) {
  const auto d = Ok(Row({std::log(0.6f), std::log(0.3f), std::log(0.1f)}).TopP(0.8f));
  EXPECT_EQ(d.keep[0], KC::kMustKeep);
  EXPECT_EQ(d.keep[1], KC::kMustKeep);
  EXPECT_EQ(d.keep[2], KC::kMustDrop);
  EXPECT_NEAR(static_cast<double>(d.probs[0]), 2.0 / 3, 1e-6);
}

TEST(TopP, OneIsOff) {
  const auto d = Ok(Dyadic().TopP(1.0f));
  EXPECT_EQ(d.kept_size, 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(d.keep[i], KC::kMustKeep);
}

TEST(TopP, TinyPKeepsOnlyTheTop) {
  const auto d = Ok(Dyadic().TopP(1e-30f));
  EXPECT_EQ(d.kept_size, 1u);
  EXPECT_EQ(d.keep[0], KC::kMustKeep);
  EXPECT_EQ(d.keep[1], KC::kMustDrop);
}

TEST(TopP, CutExactlyAtACumulativeSumIsMayKeep) {
  // Cumulative 0.5, 0.75, ... : p = 0.75 is reached by the first two tokens exactly, so the
  // third is nominally dropped, but an fp32 cumulative sum may land either side.
  const auto d = Ok(Dyadic().TopP(0.75f));
  EXPECT_EQ(d.keep[0], KC::kMustKeep);
  EXPECT_EQ(d.keep[1], KC::kMustKeep);
  EXPECT_EQ(d.keep[2], KC::kMayKeep);
  EXPECT_EQ(d.keep[3], KC::kMayKeep);  // tied with 2
}

TEST(TopP, OffByOneIsAViolationAwayFromTheCut) {
  // p between cumulative sums by far more than the band: keeping one too many or one too few
  // lands on a must-drop or must-keep token.
  const auto d = Ok(Dyadic().TopP(0.6f));
  EXPECT_EQ(d.keep[0], KC::kMustKeep);
  EXPECT_EQ(d.keep[1], KC::kMustKeep);  // one too few would drop a must-keep
  EXPECT_EQ(d.keep[2], KC::kMustDrop);  // one too many would keep a must-drop
}

TEST(TopP, TiesAtTheCut) {
  // Masses 0.4, 0.2, 0.2, 0.2 with p = 0.5: the prefix needs one of the tied tokens.
  const float a = std::log(0.4f), b = std::log(0.2f);
  Policies keep_all, lowest, any;
  lowest.tie_rule = TieRule::kExactLowestIndex;
  any.tie_rule = TieRule::kExactAny;
  const auto d_all = Ok(Row({b, a, b, b}).TopP(0.5f), keep_all);
  EXPECT_EQ(d_all.kept_size, 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(d_all.keep[i], KC::kMustKeep);
  const auto d_low = Ok(Row({b, a, b, b}).TopP(0.5f), lowest);
  EXPECT_EQ(d_low.keep[0], KC::kMustKeep);
  EXPECT_EQ(d_low.keep[2], KC::kMustDrop);
  EXPECT_EQ(d_low.keep[3], KC::kMustDrop);
  const auto d_any = Ok(Row({b, a, b, b}).TopP(0.5f), any);
  for (int i : {0, 2, 3}) EXPECT_EQ(d_any.keep[i], KC::kMayKeep) << i;
  EXPECT_EQ(d_any.kept_size, 2u);
}

TEST(TopP, RenormalizesAfterTopK) {
  // Masses ~ 0.4, 0.3, 0.2, 0.1. Top-k 3 leaves 4/9, 3/9, 2/9; top-p 0.7 then needs two tokens
  // (4/9 + 3/9 = 0.78). Without renormalization 0.4 + 0.3 = 0.7 would sit on the cut.
  const auto d =
      Ok(Row({std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.1f)}).TopK(3).TopP(0.75f));
  EXPECT_EQ(d.keep[0], KC::kMustKeep);
  EXPECT_EQ(d.keep[1], KC::kMustKeep);
  EXPECT_EQ(d.keep[2], KC::kMustDrop);
  EXPECT_EQ(d.keep[3], KC::kMustDrop);
  // The other order: top-p 0.75 on the full row keeps 0.4, 0.3, 0.2 (0.7 < 0.75).
  Policies pol;
  pol.truncation_order = {TruncationStep::kTopP, TruncationStep::kTopK, TruncationStep::kMinP};
  const auto e =
      Ok(Row({std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.1f)}).TopK(3).TopP(0.75f),
         pol);
  EXPECT_EQ(e.keep[2], KC::kMustKeep);
  EXPECT_EQ(e.keep[3], KC::kMustDrop);
}

TEST(TopP, PipelineOrderChangesTheCut) {
  // At T = 0.5 the masses sharpen: exp(2 * log m) ~ m^2: 0.36, 0.09, 0.01 -> 0.783, 0.196,
  // 0.022. Temperature first with p = 0.9: two tokens. Truncation first (T = 1 masses 0.6,
  // 0.3, 0.1): 0.6 + 0.3 = 0.9 reaches 0.9... use 0.85 to stay off the band: two tokens.
  // With p = 0.95: temperature first keeps two (0.979), truncation first keeps three.
  Row row({std::log(0.6f), std::log(0.3f), std::log(0.1f)});
  row.T(0.5f).TopP(0.95f);
  const auto tf = Ok(row);
  EXPECT_EQ(tf.keep[2], KC::kMustDrop);
  Policies pol;
  pol.order = PipelineOrder::kTruncationFirst;
  const auto lf = Ok(row, pol);
  EXPECT_EQ(lf.keep[2], KC::kMustKeep);
  // The final distribution is still tempered: weights m^2 over the three kept tokens.
  EXPECT_NEAR(static_cast<double>(lf.probs[0]), 0.36 / 0.46, 1e-6);
}

TEST(TopP, GreedyRegimeUniformTies) {
  // T = 0 over 4 tied maxima: top-p 0.5 needs 2 of the 4 under exact rules.
  Policies lowest;
  lowest.tie_rule = TieRule::kExactLowestIndex;
  const auto d = Ok(Row({1, 1, 1, 1}).T(0).TopP(0.6f), lowest);
  EXPECT_EQ(d.kept_size, 3u);
  EXPECT_EQ(d.keep[3], KC::kMustDrop);
  const auto all = Ok(Row({1, 1, 1, 1}).T(0).TopP(0.6f));
  EXPECT_EQ(all.kept_size, 4u);
}

TEST(TopP, HalfAccuracyClassWidensTheBand) {
  // 0.5 + 0.25 = 0.75 vs p = 0.7501: outside the fp32 band, inside an fp16 one (2^-11).
  const auto f32 = Ok(Dyadic().TopP(0.7501f));
  EXPECT_EQ(f32.keep[2], KC::kMustKeep);
  Policies pol;
  pol.accuracy = AccuracyClass::kF16;
  const auto f16 = Ok(Dyadic().TopP(0.7501f), pol);
  EXPECT_EQ(f16.keep[2], KC::kMayKeep);
}

// ---------------------------------------------------------------------------------------------
// Min-p (SEM-6, BAND-4).

TEST(MinP, KeepsTokensAboveFractionOfMax) {
  const auto d = Ok(Row({0, std::log(0.5f), std::log(0.09f), std::log(0.11f)}).MinP(0.1f));
  EXPECT_EQ(d.keep[0], KC::kMustKeep);
  EXPECT_EQ(d.keep[1], KC::kMustKeep);
  EXPECT_EQ(d.keep[2], KC::kMustDrop);
  EXPECT_EQ(d.keep[3], KC::kMustKeep);
}

TEST(MinP, ExactlyAtThresholdIsMayKeep) {
  const auto d = Ok(Row({0, std::log(0.25f)}).MinP(0.25f));
  EXPECT_EQ(d.keep[1], KC::kMayKeep);
}

TEST(MinP, TiedWithMaxIsAlwaysKept) {
  // min_p just below 1 keeps only the maxima, all of them, exactly.
  const auto d = Ok(Row({2, 2, 1.9999f}).MinP(std::nextafter(1.0f, 0.0f)));
  EXPECT_EQ(d.keep[0], KC::kMustKeep);
  EXPECT_EQ(d.keep[1], KC::kMustKeep);
  EXPECT_EQ(d.keep[2], KC::kMustDrop);
}

TEST(MinP, UsesTemperatureInTemperatureFirstOrder) {
  // Weight ratio e^-1 at T = 1 and e^-2 at T = 0.5; min_p = 0.2 keeps it only at T = 1.
  const auto t1 = Ok(Row({1, 0}).MinP(0.2f));
  EXPECT_EQ(t1.keep[1], KC::kMustKeep);
  const auto t05 = Ok(Row({1, 0}).T(0.5f).MinP(0.2f));
  EXPECT_EQ(t05.keep[1], KC::kMustDrop);
  Policies pol;
  pol.order = PipelineOrder::kTruncationFirst;
  const auto lf = Ok(Row({1, 0}).T(0.5f).MinP(0.2f), pol);
  EXPECT_EQ(lf.keep[1], KC::kMustKeep);
}

// ---------------------------------------------------------------------------------------------
// The null at a boundary.

TEST(RenormalizedOver, ConditionsOnTheKeptSet) {
  Policies pol;
  pol.tie_rule = TieRule::kExactAny;
  const auto d = Ok(Row({2, 3, 2, 2, 1}).TopK(2), pol);
  auto r = d.RenormalizedOver(std::vector<uint8_t>{0, 1, 0, 1, 0});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const long double e = std::exp(1.0L);
  EXPECT_NEAR(static_cast<double>(r.value()[1]), static_cast<double>(e / (1 + e)), 1e-18);
  EXPECT_EQ(r.value()[0], 0);
  EXPECT_GT(r.value()[3], 0);
}

TEST(RenormalizedOver, RejectsInadmissibleSets) {
  const auto d = Ok(Row({1, 4, 2, 3}).TopK(2));
  auto keeps_dropped = d.RenormalizedOver(std::vector<uint8_t>{1, 1, 0, 1});
  ASSERT_FALSE(keeps_dropped.ok());
  EXPECT_NE(keeps_dropped.error().message.find("token 0"), std::string::npos);
  auto misses_kept = d.RenormalizedOver(std::vector<uint8_t>{0, 1, 0, 0});
  ASSERT_FALSE(misses_kept.ok());
  EXPECT_NE(misses_kept.error().message.find("token 3"), std::string::npos);
  EXPECT_FALSE(d.RenormalizedOver(std::vector<uint8_t>{1}).ok());
}

// ---------------------------------------------------------------------------------------------
// Tolerance table sanity: the formulas SPEC.md section 7 states.

TEST(Tolerance, TableMatchesSpec) {
  const AccuracyParams& f32 = AccuracyFor(AccuracyClass::kF32);
  EXPECT_EQ(f32.u_acc, 0x1p-24);
  EXPECT_EQ(AccuracyFor(AccuracyClass::kBF16).u_out, 0x1p-8);
  EXPECT_EQ(AccuracyFor(AccuracyClass::kF16).u_out, 0x1p-11);
  EXPECT_DOUBLE_EQ(SumError(f32, 65536), 8 * 256 * 0x1p-24);
  EXPECT_DOUBLE_EQ(LogWeightError(f32, -10), (30 + 6) * 0x1p-24);
  // 128k fp32: the TV bound must stay far below the brief's bf16 defect (0.006).
  EXPECT_LT(TotalVariationTolerance(f32, 131072), 1e-3);
  EXPECT_GT(TotalVariationTolerance(AccuracyFor(AccuracyClass::kBF16), 32768),
            TotalVariationTolerance(f32, 32768));
}

}  // namespace
}  // namespace sampcert

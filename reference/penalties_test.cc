// Unit tests of the penalties of SPEC section 16 in the reference: each rule's formula, the sign
// rule, which history each rule sees, the identities of PEN-4 and INV-8.
#include "sampcert/penalties.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "sampcert/reference_distribution.h"
#include "tests/support/test_rows.h"

namespace sampcert {
namespace {

using Row = testing_support::TestRow;
using ld = long double;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

std::vector<ld> Penalized(const Row& row, const Policies& pol = {}) {
  const RowView v = row.view();
  std::vector<ld> x(v.vocab);
  for (std::size_t i = 0; i < v.vocab; ++i) x[i] = DecodeLogit(v.dtype, v.logits, i);
  ApplyPenalties(v, pol, x);
  return x;
}

ReferenceDistribution Ref(const Row& row, const Policies& pol = {}) {
  Expected<ReferenceDistribution> r = ComputeReference(row.view(), pol, 0);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : ReferenceDistribution{};
}

TEST(Penalties, RepetitionSignRuleOncePerToken) {
  // PEN-2: divide a positive logit, multiply a negative one, zero stays zero; once per token
  // however often it occurs; unseen tokens untouched.
  const Row row = Row({3.0f, -2.0f, 0.0f, 5.0f, -1.0f})
                      .History({0, 0, 0}, {1, 2, 1})
                      .Penalties(1.5f, 0.0f, 0.0f);
  const std::vector<ld> x = Penalized(row);
  EXPECT_EQ(x[0], 3.0L / 1.5L);
  EXPECT_EQ(x[1], -2.0L * 1.5L);
  EXPECT_EQ(x[2], 0.0L);
  EXPECT_EQ(x[3], 5.0L);
  EXPECT_EQ(x[4], -1.0L);
}

TEST(Penalties, AdditiveCountsOutputOnlyByDefault) {
  // PEN-3 with the default output-only history: x - alpha * count - beta * [count > 0].
  const Row row =
      Row({1.0f, 1.0f, 1.0f, 1.0f}).History({0, 0}, {1, 2, 2, 2}).Penalties(1, 0.5f, 0.25f);
  const std::vector<ld> x = Penalized(row);
  EXPECT_EQ(x[0], 1.0L);  // in the prompt only: untouched under output-only
  EXPECT_EQ(x[1], 1.0L - 0.25L - 0.5L);
  EXPECT_EQ(x[2], 1.0L - 0.75L - 0.5L);
  EXPECT_EQ(x[3], 1.0L);
  Policies both;
  both.additive_history = PenaltyHistory::kPromptAndOutput;
  EXPECT_EQ(Penalized(row, both)[0], 1.0L - 0.5L - 0.5L);
}

TEST(Penalties, RepetitionHistoryIsDeclared) {
  const Row row = Row({2.0f, 2.0f}).History({0}, {}).Penalties(2.0f, 0, 0);
  EXPECT_EQ(Penalized(row)[0], 1.0L);  // default: the prompt counts
  Policies out_only;
  out_only.repetition_history = PenaltyHistory::kOutputOnly;
  EXPECT_EQ(Penalized(row, out_only)[0], 2.0L);
}

TEST(Penalties, NoneDeclaresTheRuleAbsent) {
  // PEN-POL-1's `none`: a sampler without presence and frequency penalties (transformers) is
  // never asked for them; a row that does is NotSupported, and the rule it has is unchanged.
  Policies no_additive;
  no_additive.additive_history = PenaltyHistory::kNone;
  const Row additive = Row({2.0f, 1.0f}).History({}, {0}).Penalties(1.0f, 0.5f, 0.0f);
  Expected<ReferenceDistribution> r = ComputeReference(additive.view(), no_additive, 3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(r.error().message.find("row 3: presence penalty 0.5"), std::string::npos)
      << r.error().message;
  const Row repetition = Row({2.0f, 1.0f}).History({0}, {0}).Penalties(2.0f, 0, 0);
  EXPECT_EQ(Ref(repetition, no_additive).probs, Ref(repetition).probs);
  Policies no_repetition;
  no_repetition.repetition_history = PenaltyHistory::kNone;
  r = ComputeReference(repetition.view(), no_repetition, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(r.error().message.find("repetition_history none"), std::string::npos);
  // Penalties off ask for nothing, whatever is declared.
  EXPECT_TRUE(ComputeReference(Row({2.0f, 1.0f}).History({0}, {1}).view(), no_repetition, 0).ok());
}

TEST(Penalties, RepetitionThenAdditive) {
  // vLLM's order: the repetition rule, then presence and frequency.
  const Row row = Row({4.0f}).History({}, {0}).Penalties(2.0f, 1.0f, 0.5f);
  EXPECT_EQ(Penalized(row)[0], 4.0L / 2 - 0.5L - 1.0L);
}

TEST(Penalties, IdentitiesBitForBit) {
  // PEN-4: penalties off (r = 1 or 0, alpha = beta = 0) give the row without history, exactly.
  const std::vector<float> logits = {0.3f, -7.0f, 2.5f, -kInf, 1.0f};
  const ReferenceDistribution plain = Ref(Row(logits).T(0.7f).TopP(0.9f));
  for (float r : {1.0f, 0.0f}) {
    const ReferenceDistribution d =
        Ref(Row(logits).T(0.7f).TopP(0.9f).History({0, 1, 2}, {2, 4}).Penalties(r, 0, 0));
    EXPECT_EQ(d.probs, plain.probs);
    EXPECT_EQ(d.keep, plain.keep);
  }
}

TEST(Penalties, InfinitiesAndNanStay) {
  Policies masked_nan;
  masked_nan.nan_policy = NanPolicy::kMasked;
  const Row row =
      Row({kInf, -kInf, kNan, 1.0f}).History({0, 1, 2, 3}, {0, 1, 2}).Penalties(3.0f, 2.0f, 1.0f);
  const std::vector<ld> x = Penalized(row, masked_nan);
  EXPECT_EQ(x[0], std::numeric_limits<ld>::infinity());
  EXPECT_EQ(x[1], -std::numeric_limits<ld>::infinity());
  EXPECT_TRUE(std::isnan(x[2]));
  // The +inf limit is unchanged (SEM-4), and the NaN policy decides the NaN as before.
  EXPECT_EQ(Ref(row, masked_nan).probs[0], 1.0L);
  Expected<ReferenceDistribution> strict = ComputeReference(row.view(), Policies{}, 0);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.error().code, ErrorCode::kNanLogit);
}

TEST(Penalties, NoOverflowBeyondTheDtype) {
  // PEN-4: an f32 logit near FLT_MAX divided by r = 0.5 is finite and wins at T = 1.
  const Row row = Row({3e38f, 2.9e38f}).History({}, {0}).Penalties(0.5f, 0, 0);
  const ReferenceDistribution d = Ref(row);
  EXPECT_EQ(d.regime, Regime::kFinite);
  EXPECT_EQ(d.probs[0], 1.0L);  // 6e38 vs 2.9e38: the other weight underflows long double
}

TEST(Penalties, ShiftsTheDistribution) {
  // A presence penalty of ln 2 on token 0 halves its weight against token 1.
  const float ln2 = 0.693147180559945309f;
  const ReferenceDistribution d = Ref(Row({0.0f, 0.0f}).History({}, {0}).Penalties(1, ln2, 0));
  EXPECT_NEAR(static_cast<double>(d.probs[0]), 1.0 / 3.0, 1e-7);
}

struct InvalidCase {
  const char* name;
  Row row;
  const char* cause;
};

TEST(Penalties, InvalidInputIsInvalidPenalty) {
  const std::vector<InvalidCase> cases = {
      {"negative r", Row({1, 2}).Penalties(-1, 0, 0), "repetition_penalty is -1"},
      {"NaN r", Row({1, 2}).Penalties(kNan, 0, 0), "repetition_penalty is NaN"},
      {"inf r", Row({1, 2}).Penalties(kInf, 0, 0), "repetition_penalty is inf"},
      {"NaN presence", Row({1, 2}).Penalties(1, kNan, 0), "presence_penalty is NaN"},
      {"inf frequency", Row({1, 2}).Penalties(1, 0, -kInf), "frequency_penalty is -inf"},
      {"id = V", Row({1, 2}).History({0}, {1, 2}), "output_tokens[1] is 2"},
      {"negative id", Row({1, 2}).History({-1}, {}), "prompt_tokens[0] is -1"},
  };
  for (const InvalidCase& c : cases) {
    Expected<ReferenceDistribution> r = ComputeReference(c.row.view(), Policies{}, 4);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidPenalty) << c.name;
    EXPECT_NE(r.error().message.find("row 4: "), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(c.cause), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace sampcert

// Unit tests of the verifier's reference (SPEC section 15): the chain law on cases with closed
// forms, the identity that makes speculative decoding exact (the emitted token at a reached
// position follows p whatever q is), the limits, and the draft validation of VER-INV-1.
#include "sampcert/reference_verify.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tests/support/test_rows.h"

namespace sampcert {
namespace {

using Row = testing_support::TestRow;

// Logits whose softmax at T = 1 is `p` (p > 0).
Row RowOf(const std::vector<double>& p) {
  std::vector<float> x;
  for (double e : p) x.push_back(static_cast<float>(std::log(e)));
  return Row(x);
}

ChainLaw Law(const std::vector<Row>& targets, const std::vector<double>& q) {
  std::vector<RowView> views;
  for (const Row& r : targets) views.push_back(r.view());
  auto law = ComputeChainLaw(views, q, Policies{});
  EXPECT_TRUE(law.ok()) << (law.ok() ? "" : law.error().message);
  return law.ok() ? *law : ChainLaw{};
}

TEST(ChainLaw, TwoTokensInClosedForm) {
  // p = (1/2, 1/2), q = (0.9, 0.1): beta = 0.5 + 0.1 = 0.6, the residual is all on token 1.
  const Row p = RowOf({0.5, 0.5});
  const ChainLaw law = Law({p, p}, {0.9, 0.1});
  ASSERT_EQ(law.k, 1u);
  EXPECT_NEAR(static_cast<double>(law.acceptance[0]), 0.6, 1e-15);
  EXPECT_NEAR(static_cast<double>(law.residual[0][0]), 0.0, 0.0);
  EXPECT_NEAR(static_cast<double>(law.residual[0][1]), 1.0, 1e-15);
  EXPECT_NEAR(static_cast<double>(law.accepted_count[0]), 0.4, 1e-15);
  EXPECT_NEAR(static_cast<double>(law.accepted_count[1]), 0.6, 1e-15);
  const std::vector<long double>& pp = law.targets[0].probs;
  EXPECT_EQ(AcceptanceProbability(pp, std::vector<double>{0.9, 0.1}, 1), 1.0L);
  EXPECT_NEAR(static_cast<double>(AcceptanceProbability(pp, std::vector<double>{0.9, 0.1}, 0)),
              0.5 / 0.9, 1e-7);
}

TEST(ChainLaw, EmittedTokenFollowsTheTargetWhateverTheDraft) {
  // sum_d q(d) [a(d) 1{x = d} + (1 - a(d)) r(x)] = p(x), for random p and q (Leviathan et al.
  // 2023, Theorem 1), in the reference's precision.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.01, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t v = 2 + static_cast<std::size_t>(trial) * 3;
    std::vector<double> w(v), q(v);
    double sw = 0, sq = 0;
    for (std::size_t x = 0; x < v; ++x) {
      sw += w[x] = u(rng);
      sq += q[x] = trial % 4 == 0 && x % 2 ? 0.0 : u(rng);
    }
    for (double& e : w) e /= sw;
    for (double& e : q) e /= sq;
    const Row target = RowOf(w);
    const ChainLaw law = Law({target, target}, q);
    const std::vector<long double>& p = law.targets[0].probs;
    long double beta = 0;
    for (std::size_t x = 0; x < v; ++x) beta += std::min<long double>(p[x], q[x]);
    EXPECT_NEAR(static_cast<double>(law.acceptance[0]), static_cast<double>(beta), 1e-15);
    for (std::size_t x = 0; x < v; ++x) {
      long double emitted = 0;
      for (std::size_t d = 0; d < v; ++d) {
        if (q[d] == 0) continue;
        const long double a = AcceptanceProbability(p, q, static_cast<int64_t>(d));
        emitted += q[d] * (a * (x == d) + (1 - a) * law.residual[0][x]);
      }
      EXPECT_NEAR(static_cast<double>(emitted), static_cast<double>(p[x]), 1e-12)
          << "V = " << v << ", token " << x;
    }
  }
}

TEST(ChainLaw, CountLawIsTheProductOfTheAcceptanceRates) {
  const Row a = RowOf({0.7, 0.2, 0.1}), b = RowOf({0.1, 0.1, 0.8}), c = RowOf({0.3, 0.3, 0.4});
  // q_1 = (0.2, 0.5, 0.3): beta_1 = 0.2 + 0.2 + 0.1 = 0.5; q_2 = (0.1, 0.1, 0.8): beta_2 = 1.
  const ChainLaw law = Law({a, b, c}, {0.2, 0.5, 0.3, 0.1, 0.1, 0.8});
  ASSERT_EQ(law.accepted_count.size(), 3u);
  EXPECT_NEAR(static_cast<double>(law.accepted_count[0]), 0.5, 1e-7);
  EXPECT_NEAR(static_cast<double>(law.accepted_count[1]), 0.0, 1e-7);
  EXPECT_NEAR(static_cast<double>(law.accepted_count[2]), 0.5, 1e-7);
  long double total = 0;
  for (long double e : law.accepted_count) total += e;
  EXPECT_NEAR(static_cast<double>(total), 1.0, 1e-15);
}

TEST(ChainLaw, QEqualToPInDoubleHasNoResidual) {
  // q is p rounded to double (the planned p = q chain): the long-double p exceeds it by
  // rounding noise only, which is no residual.
  const Row target = Row({0.0f, 1.0f, 2.0f, 3.0f});
  std::vector<RowView> one{target.view()};
  auto ref = ComputeReference(one[0], Policies{});
  ASSERT_TRUE(ref.ok());
  std::vector<double> q;
  for (long double p : ref->probs) q.push_back(static_cast<double>(p));
  const ChainLaw law = Law({target, target}, q);
  for (long double r : law.residual[0]) EXPECT_EQ(r, 0.0L);
  EXPECT_GT(law.acceptance[0], 1 - 1e-15L);
}

TEST(ChainLaw, Limits) {
  // Disjoint supports: top-k 1 keeps token 0; q has no mass there. Every draft is rejected and
  // the residual is p itself.
  Row p = RowOf({0.6, 0.3, 0.1});
  p.TopK(1);
  const ChainLaw disjoint = Law({p, p}, {0.0, 0.5, 0.5});
  EXPECT_EQ(disjoint.acceptance[0], 0.0L);
  EXPECT_EQ(disjoint.accepted_count[0], 1.0L);
  EXPECT_NEAR(static_cast<double>(disjoint.residual[0][0]), 1.0, 1e-15);
  // Greedy target (T = 0): exact matching; beta is q's mass on the arg-max.
  Row g = RowOf({0.6, 0.3, 0.1});
  g.T(0.0f);
  const ChainLaw greedy = Law({g, g}, {0.25, 0.5, 0.25});
  EXPECT_NEAR(static_cast<double>(greedy.acceptance[0]), 0.25, 1e-15);
  // +inf logits: the target is uniform over them.
  Row inf({std::numeric_limits<float>::infinity(), 0.0f, std::numeric_limits<float>::infinity()});
  const ChainLaw infl = Law({inf, inf}, {0.5, 0.0, 0.5});
  EXPECT_NEAR(static_cast<double>(infl.acceptance[0]), 1.0, 1e-15);
}

TEST(ChainLaw, InvalidInput) {
  const Row p = RowOf({0.5, 0.5});
  std::vector<RowView> one{p.view()};
  EXPECT_EQ(ComputeChainLaw(one, {}, Policies{}).error().code, ErrorCode::kInvalidArgument);
  Row bad = RowOf({0.5, 0.5});
  bad.T(-1.0f);
  std::vector<RowView> views{p.view(), bad.view()};
  EXPECT_EQ(ComputeChainLaw(views, std::vector<double>{0.5, 0.5}, Policies{}).error().code,
            ErrorCode::kInvalidTemperature);
  EXPECT_EQ(ComputeChainLaw(views, std::vector<double>{0.5}, Policies{}).error().code,
            ErrorCode::kInvalidArgument);
}

TEST(ValidateDraft, EveryInvalidDraftIsAnInvalidDraftError) {
  const std::vector<double> q{0.25, 0.75, 0.0};
  EXPECT_EQ(ValidateDraft(q, 1, "d").code, ErrorCode::kOk);
  const Error zero = ValidateDraft(q, 2, "chain 3, draft 1");
  EXPECT_EQ(zero.code, ErrorCode::kInvalidDraft);
  EXPECT_NE(zero.message.find("chain 3, draft 1"), std::string::npos) << zero.message;
  EXPECT_NE(zero.message.find("probability 0"), std::string::npos) << zero.message;
  EXPECT_EQ(ValidateDraft(q, 3, "d").code, ErrorCode::kInvalidDraft);
  EXPECT_EQ(ValidateDraft(q, -1, "d").code, ErrorCode::kInvalidDraft);
  EXPECT_EQ(ValidateDraft(std::vector<double>{0.125, 0.375}, 0, "d").code,
            ErrorCode::kInvalidDraft);
  EXPECT_EQ(ValidateDraft(std::vector<double>{std::nan(""), 1.0}, 1, "d").code,
            ErrorCode::kInvalidDraft);
  EXPECT_EQ(ValidateDraft(std::vector<double>{-0.5, 1.5}, 1, "d").code, ErrorCode::kInvalidDraft);
  // Within the sum tolerance: a draft normalized in double.
  EXPECT_EQ(ValidateDraft(std::vector<double>{0.1, 0.2, 0.7 + 1e-12}, 0, "d").code, ErrorCode::kOk);
  EXPECT_EQ(ValidateDraft(std::vector<double>{0.1, 0.2, 0.7 + 1e-8}, 0, "d").code,
            ErrorCode::kInvalidDraft);
}

}  // namespace
}  // namespace sampcert

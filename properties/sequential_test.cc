// The sequential design of SPEC STAT-4 (issue 10): looks at 1/64, 1/16, 1/4 and all of a test's
// draws, the level spent by Bonferroni over the looks. Calibration by Monte Carlo at total
// levels 1e-2 and 1e-3 on the reference sampler's own draws (every look of one stream, all three
// sub-tests of a distribution test), the exact size of the sequential exact binomial (TAIL-1's
// per-set test) at the real levels, and the early stop on a gross defect.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "properties/distribution.h"
#include "properties/plan.h"
#include "properties/sequential_rule.h"
#include "properties/statistics/binomial.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/reference_sampler.h"

namespace sampcert::properties {
namespace {

std::vector<long double> PlannedReference(const std::string& name) {
  const auto row = PlannedRowByName(DType::kF32, name, 0xffffffffu);
  EXPECT_TRUE(row.has_value()) << name;
  const auto ref = ComputeReference(row->view(), Policies{});
  EXPECT_TRUE(ref.ok());
  return ref->probs;
}

TEST(Looks, SplitTheLevelAndEndAtTheDraws) {
  for (uint64_t n : {1u, 2u, 5u, 63u, 64u, 100u, 4096u, 246329u}) {
    const std::vector<uint64_t> looks = LookDraws(n);
    const std::vector<double> levels = LookLevels(n, 1e-3);
    ASSERT_EQ(looks.size(), levels.size()) << n;
    ASSERT_FALSE(looks.empty()) << n;
    EXPECT_EQ(looks.back(), n);
    double total = 0;
    for (std::size_t k = 0; k < looks.size(); ++k) {
      if (k > 0) {
        EXPECT_GT(looks[k], looks[k - 1]) << n;
      }
      EXPECT_GT(levels[k], 0) << n;
      total += levels[k];
    }
    EXPECT_NEAR(total, 1e-3, 1e-15) << n;
  }
  EXPECT_EQ(LookDraws(4096), (std::vector<uint64_t>{64, 256, 1024, 4096}));
  EXPECT_DOUBLE_EQ(LookLevels(4096, 1.0).back(), 0.75);
  EXPECT_EQ(LookDraws(2).size(), 2u);  // 2 / 64 = 0 draws: merged into the next look kept
}

// The adjusted p-value of every look of one stream (no early stop), so that one set of draws
// serves both levels.
std::vector<double> LookPValues(std::span<const int64_t> tokens, std::span<const long double> p,
                                const std::vector<uint64_t>& looks) {
  std::vector<double> out;
  for (uint64_t n : looks) {
    out.push_back(EvaluateDistributionLook(tokens.first(n), p, 3).p_value);
  }
  return out;
}

// Monte Carlo: the whole sequential distribution test (four looks, three sub-tests each) on
// the reference sampler's own draws rejects at most its total level, at 1e-2 and 1e-3; the
// bound allows 3 binomial standard deviations (budget of this check about 3e-3 per row).
TEST(Calibration, SequentialDistributionTestRejectsAtMostItsLevel) {
  for (const char* name : {"llm_like_V1000", "top_k_V200", "near_ties_V16"}) {
    const std::vector<long double> p = PlannedReference(name);
    const ReferenceSampler sampler(p);
    const uint64_t n = 4096;  // looks at 64, 256, 1024 and 4096 draws
    const std::vector<uint64_t> looks = LookDraws(n);
    const int runs = 2000;
    int rejected_2 = 0, rejected_3 = 0;
    int early_2 = 0;  // rejections before the last look, at 1e-2
    std::vector<int64_t> tokens(n);
    for (int run = 0; run < runs; ++run) {
      sampler.Draw(9100 + static_cast<uint64_t>(run), 11, 0, tokens);
      const std::vector<double> pv = LookPValues(tokens, p, looks);
      for (const double level : {1e-2, 1e-3}) {
        const std::vector<double> levels = LookLevels(n, level);
        const int k = FirstRejectingLook(looks, levels, [&](uint64_t m) {
          for (std::size_t i = 0; i < looks.size(); ++i) {
            if (looks[i] == m) return pv[i];
          }
          return 1.0;
        });
        if (k < 0) continue;
        (level == 1e-2 ? rejected_2 : rejected_3) += 1;
        if (level == 1e-2 && k + 1 < static_cast<int>(looks.size())) ++early_2;
      }
    }
    std::printf(
        "[calibration] %s sequential (4 looks x 3 sub-tests): %d / %d below 1e-2 (%d before the "
        "last look), %d below 1e-3\n",
        name, rejected_2, runs, early_2, rejected_3);
    for (const auto& [level, rejected] :
         {std::pair{1e-2, rejected_2}, std::pair{1e-3, rejected_3}}) {
      const double bound = level * runs + 3 * std::sqrt(level * (1 - level) * runs);
      EXPECT_LE(rejected, bound) << name << " at " << level;
    }
  }
}

// The exact size of the sequential exact binomial (one tail set of TAIL-1) at the real levels:
// the count at look k is the count at look k-1 plus an independent binomial of the new draws,
// so the probability of rejecting at some look under the null is a sum over paths that stay in
// the acceptance regions, computed exactly (to rounding) by dynamic programming over the count.
double SequentialBinomialSize(const std::vector<uint64_t>& looks, const std::vector<double>& levels,
                              double p) {
  auto log_pmf = [](uint64_t k, uint64_t m, double q) {
    const double kd = static_cast<double>(k), md = static_cast<double>(m);
    return std::lgamma(md + 1) - std::lgamma(kd + 1) - std::lgamma(md - kd + 1) + kd * std::log(q) +
           (md - kd) * std::log1p(-q);
  };
  std::vector<double> alive{1.0};  // P(count = x, no rejection so far)
  double rejected = 0;
  uint64_t before = 0;
  for (std::size_t k = 0; k < looks.size(); ++k) {
    const uint64_t m = looks[k] - before;
    // The increment's pmf where it is not negligible (mean +- 12 sd, and at least 0..40).
    const double mean = static_cast<double>(m) * p, sd = std::sqrt(mean * (1 - p));
    const uint64_t hi = std::min<uint64_t>(m, static_cast<uint64_t>(mean + 12 * sd + 40));
    std::vector<double> inc(hi + 1);
    for (uint64_t j = 0; j <= hi; ++j) inc[j] = std::exp(log_pmf(j, m, p));
    std::vector<double> next(alive.size() + hi, 0.0);
    for (std::size_t x = 0; x < alive.size(); ++x) {
      if (alive[x] == 0) continue;
      for (uint64_t j = 0; j <= hi; ++j) next[x + j] += alive[x] * inc[j];
    }
    for (std::size_t x = 0; x < next.size(); ++x) {
      if (next[x] > 0 && BinomialTwoSided(x, looks[k], p) < levels[k]) {
        rejected += next[x];
        next[x] = 0;
      }
    }
    alive = std::move(next);
    before = looks[k];
  }
  return rejected;
}

TEST(Calibration, SequentialBinomialExactSizeAtTheRealLevels) {
  // Standard profile, stable_cpu: each TAIL-1 set's share is 7.8e-6 / 3 = 2.6e-6; the deepest
  // set has mass 1e-3 and about a million draws; the dominant tail's one set has mass 0.05.
  struct Case {
    uint64_t n;
    double p, level;
  };
  for (const Case& c : {Case{1011655, 1e-3, 2.6e-6}, Case{17410, 0.05, 7.8e-6},
                        Case{4096, 0.01, 1e-2}, Case{4096, 0.01, 1e-3}}) {
    const std::vector<uint64_t> looks = LookDraws(c.n);
    const double size = SequentialBinomialSize(looks, LookLevels(c.n, c.level), c.p);
    // The last look alone at the whole level, for comparison: what the looks cost.
    const double single = SequentialBinomialSize({c.n}, {c.level}, c.p);
    std::printf("[exact] sequential binomial n=%llu p=%g level %.3g: size %.4g (one look: %.4g)\n",
                static_cast<unsigned long long>(c.n), c.p, c.level, size, single);
    EXPECT_LE(size, c.level) << c.n;
    EXPECT_GT(size, 0.05 * c.level) << "a test far below its level wastes power: " << c.n;
  }
}

// A gross defect (every probability squared, renormalized: temperature halved) fails at the
// first look, after 1/64 of the planned draws, at the standard profile's real levels.
TEST(Sequential, GrossDefectStopsAtTheFirstLook) {
  const std::vector<long double> p = PlannedReference("llm_like_V1000");
  std::vector<long double> q(p.size());
  long double z = 0;
  for (std::size_t i = 0; i < p.size(); ++i) z += q[i] = p[i] * p[i];
  for (auto& x : q) x /= z;
  const ReferenceSampler wrong(q);
  const uint64_t n = 246329;  // the standard plan's draws on this row
  const std::vector<uint64_t> looks = LookDraws(n);
  std::vector<int64_t> tokens(n);
  wrong.Draw(5, 1, 0, tokens);
  const int k = FirstRejectingLook(looks, LookLevels(n, 7.8e-6), [&](uint64_t m) {
    return EvaluateDistributionLook(std::span(tokens).first(m), p, 3).p_value;
  });
  EXPECT_EQ(k, 0);
  // Each cell is labelled, for the report's chart: the token it counts or its band, one label
  // per cell; the most deviating cell is one the evidence names.
  const DistributionLook look = EvaluateDistributionLook(std::span(tokens).first(looks[0]), p, 3);
  ASSERT_EQ(look.labels.size(), look.g.observed.size());
  ASSERT_FALSE(look.evidence.empty());
  EXPECT_NE(std::find(look.labels.begin(), look.labels.end(), look.evidence[0].label),
            look.labels.end());
  EXPECT_EQ(look.labels[0].rfind("token ", 0), 0u) << look.labels[0];
  // The same draws from the reference itself pass every look.
  const ReferenceSampler right(p);
  right.Draw(5, 1, 0, tokens);
  EXPECT_EQ(FirstRejectingLook(
                looks, LookLevels(n, 7.8e-6),
                [&](uint64_t m) {
                  return EvaluateDistributionLook(std::span(tokens).first(m), p, 3).p_value;
                }),
            -1);
}

}  // namespace
}  // namespace sampcert::properties

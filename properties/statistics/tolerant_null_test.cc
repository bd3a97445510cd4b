// The declared accuracy class in the null (TOL-7, issue 10 point 4): the fp32 class reproduces
// the reference null exactly; the bf16 / fp16 tolerance bounds every admissible q; and the
// tolerant tests are calibrated at the boundary of the tolerance (Monte Carlo at 1e-2 and 1e-3:
// a sampler at the worst admissible point rejects at most at the nominal level).
#include "properties/statistics/tolerant_null.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include "adapters/sampler.h"
#include "properties/distribution.h"
#include "properties/plan.h"
#include "properties/statistics/binomial.h"
#include "properties/statistics/cells.h"
#include "properties/statistics/chi_square.h"
#include "properties/statistics/score.h"
#include "sampcert/reference_sampler.h"
#include "sampcert/tolerance.h"
#include "tests/support/zipf.h"

namespace sampcert::properties {
namespace {

using testing_support::Zipf;

std::vector<long double> LogWeights(const std::vector<long double>& p) {
  std::vector<long double> l(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) l[i] = std::log(p[i] / p[0]);
  return l;
}

// fp16 round to nearest even with subnormals (multiples of 2^-24 below 2^-14), for p in [0, 1].
double RoundFp16(double p) {
  if (!(p > 0)) return 0;
  int e = 0;
  std::frexp(p, &e);
  const int q = std::max(e - 11, -24);
  return std::ldexp(std::nearbyint(std::ldexp(p, -q)), q);
}

TEST(TolerantNull, Fp32IsTheReferenceNullExactly) {
  const auto p = Zipf(300, 1.2);
  EXPECT_TRUE(NullTolerance(p, LogWeights(p), AccuracyClass::kF32).empty());
  const Cells cells = MakeCells(p, 20000);
  const ReferenceSampler sampler(p);
  std::vector<int64_t> tokens(20000);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    sampler.Draw(seed, 7, 0, tokens);
    const GofResult a = GTest(tokens, cells);
    const GofResult b = GTest(tokens, cells, NullTolerance(p, LogWeights(p), AccuracyClass::kF32));
    EXPECT_EQ(a.p_value, b.p_value);
    EXPECT_EQ(b.delta, 0.0);
  }
  // Each tolerant function at zero tolerance is the central one, bit for bit.
  for (double x : {1.0, 30.0, 80.0, 150.0}) {
    EXPECT_EQ(ChiSquareUpper(x, 40, 0), ChiSquareUpper(x, 40));
  }
  for (uint64_t k : {0u, 3u, 50u, 97u}) {
    EXPECT_EQ(BinomialTwoSidedInterval(k, 100, 0.4, 0.4), BinomialTwoSided(k, 100, 0.4));
  }
  EXPECT_EQ(DetectableTv(40, 1e-6, 100000, 0), DetectableTv(40, 1e-6, 100000));
  EXPECT_EQ(DetectableShiftBinomial(10000, 0.3, 1e-6, 0.3, 0.3),
            DetectableShiftBinomial(10000, 0.3, 1e-6));
  const ScoreComponent comp{1000, {0, 1, 2}, {0.5, 0.3, 0.2}};
  EXPECT_EQ(ScoreTest(std::span(&comp, 1), 800, 0).p_value,
            ScoreTest(std::span(&comp, 1), 800).p_value);
  // The noncentral path is continuous at 0: a tiny radius changes the p-value only slightly.
  EXPECT_NEAR(ChiSquareUpper(80, 40, 1e-9), ChiSquareUpper(80, 40), 1e-9);
}

TEST(TolerantNull, TokenErrorsFollowTol3AndTol4) {
  const std::vector<long double> p = {0.5L, 0.25L, 1e-5L, 0.25L - 1e-5L};
  const std::vector<long double> l = LogWeights(p);
  const std::vector<double> e = NullTolerance(p, l, AccuracyClass::kF16);
  const AccuracyParams& acc = AccuracyFor(AccuracyClass::kF16);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_DOUBLE_EQ(e[0], 0.5 * ProbabilityRelTolerance(acc, 0, 4));
  // 1e-5 is below fp16's floor 2^-14: its absolute error 2^-25 comes on top (TOL-4).
  EXPECT_DOUBLE_EQ(e[2],
                   1e-5 * ProbabilityRelTolerance(acc, static_cast<double>(l[2]), 4) + 0x1p-25);
  EXPECT_GT(e[2], 2.9e-8);
}

TEST(TolerantNull, AdmissibleMassContainsEveryRenormalizedRounding) {
  const auto [lo0, hi0] = AdmissibleMass(0.3, 0, 0);
  EXPECT_EQ(lo0, 0.3);
  EXPECT_EQ(hi0, 0.3);
  // By hand: m = 0.25 reported as 0.25 +- 0.01, the rest (0.75) +- 0.02.
  const auto [lo, hi] = AdmissibleMass(0.25, 0.01, 0.02);
  EXPECT_DOUBLE_EQ(lo, 0.24 / (0.24 + 0.77));
  EXPECT_DOUBLE_EQ(hi, 0.26 / (0.26 + 0.73));
  // An error that can reach 0 admits a set never drawn.
  EXPECT_EQ(AdmissibleMass(1e-4, 2e-4, 0.01).first, 0.0);
}

// The radius bounds the chi-square divergence of every admissible q on the cells: checked on
// a real fp16 rounding (renormalized) of a Zipf row with most tokens below fp16's floor, and on
// random vertices of the tolerance box.
TEST(TolerantNull, ChiSquareRadiusBoundsAdmissibleDistributions) {
  for (std::size_t v : {300u, 20000u}) {
    const auto p = Zipf(v, 1.1);
    const std::vector<double> e = NullTolerance(p, LogWeights(p), AccuracyClass::kF16);
    const Cells cells = MakeCells(p, 1 << 20);
    const double delta = ChiSquareRadius(cells, e);
    ASSERT_GT(delta, 0);
    auto divergence = [&](const std::vector<double>& reported) {
      double total = 0;
      for (double x : reported) total += x;
      std::vector<double> q(cells.probability.size(), 0);
      for (std::size_t i = 0; i < v; ++i)
        q[static_cast<std::size_t>(cells.cell_of[i])] += reported[i] / total;
      double d = 0;
      for (std::size_t c = 0; c < q.size(); ++c) {
        d += (q[c] - cells.probability[c]) * (q[c] - cells.probability[c]) / cells.probability[c];
      }
      return d;
    };
    std::vector<double> rounded(v);
    for (std::size_t i = 0; i < v; ++i) {
      rounded[i] = RoundFp16(static_cast<double>(p[i]));
      ASSERT_LE(std::fabs(rounded[i] - static_cast<double>(p[i])), e[i]) << i;
    }
    EXPECT_LE(divergence(rounded), delta) << "V=" << v;
    std::mt19937_64 rng(v);
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<double> vertex(v);
      for (std::size_t i = 0; i < v; ++i) {
        const double s = (rng() & 1) ? 1.0 : -1.0;
        vertex[i] = std::max(0.0, static_cast<double>(p[i]) + s * e[i]);
      }
      EXPECT_LE(divergence(vertex), delta) << "V=" << v << " trial " << trial;
    }
  }
}

// Calibration at the boundary (issue 10, point 4). The tolerance is made large on purpose
// (e_i = 4% of p_i: n delta about 30 at these draws) so that the noncentral null is exercised
// far from the central one. The false-alarm budget of each check: 3 binomial standard
// deviations above the level.
struct Boundary {
  std::vector<long double> p, q;  // the null and a sampler at the tolerance's far end
  std::vector<double> e;
  Cells cells;
};

Boundary MakeBoundary(uint64_t n) {
  Boundary b;
  b.p = Zipf(200, 1.0);
  b.e.resize(b.p.size());
  for (std::size_t i = 0; i < b.p.size(); ++i) b.e[i] = 0.04 * static_cast<double>(b.p[i]);
  b.cells = MakeCells(b.p, n);
  // The worst admissible q for the G-test: every token of a cell moved the same way, the cells
  // alternating (each at an end of its box), renormalized as a sampler draws.
  long double total = 0;
  b.q.resize(b.p.size());
  for (std::size_t i = 0; i < b.p.size(); ++i) {
    const double s = b.cells.cell_of[i] % 2 == 0 ? 1 : -1;
    total += b.q[i] = b.p[i] + static_cast<long double>(s * b.e[i]);
  }
  for (auto& x : b.q) x /= total;
  return b;
}

double RejectionBound(double level, int runs) {
  return level + 3 * std::sqrt(level * (1 - level) / runs);
}

TEST(Calibration, TolerantGTestAtTheBoundaryRejectsAtMostItsLevel) {
  const uint64_t n = 20000;
  const Boundary b = MakeBoundary(n);
  const ReferenceSampler sampler(b.q);
  const int runs = 4000;
  int at_1e2 = 0, at_1e3 = 0, central_1e2 = 0;
  std::vector<int64_t> tokens(n);
  double delta = 0;
  for (int run = 0; run < runs; ++run) {
    sampler.Draw(5000 + static_cast<uint64_t>(run), 11, 0, tokens);
    const GofResult g = GTest(tokens, b.cells, b.e);
    delta = g.delta;
    at_1e2 += g.p_value < 1e-2;
    at_1e3 += g.p_value < 1e-3;
    central_1e2 += GTest(tokens, b.cells).p_value < 1e-2;
  }
  EXPECT_GT(static_cast<double>(n) * delta, 10) << "the tolerance must matter here";
  EXPECT_LE(at_1e2 / static_cast<double>(runs), RejectionBound(1e-2, runs));
  EXPECT_LE(at_1e3 / static_cast<double>(runs), RejectionBound(1e-3, runs));
  // The test can fail: the central null (fp32) rejects this sampler most of the time.
  EXPECT_GT(central_1e2, runs / 2);
  std::printf(
      "tolerant G-test at the boundary: n delta = %.1f, rejected %d/%d at 1e-2, %d/%d at "
      "1e-3 (central null: %d/%d at 1e-2)\n",
      static_cast<double>(n) * delta, at_1e2, runs, at_1e3, runs, central_1e2, runs);
}

// The noncentral chi-square as the G statistic's law at a given divergence: a q whose
// chi-square divergence from p on the cells is exactly delta rejects at most at the level.
TEST(Calibration, NoncentralNullHoldsAtExactlyTheRadius) {
  const uint64_t n = 20000;
  const auto p = Zipf(200, 1.0);
  const Cells cells = MakeCells(p, n);
  const double delta = 1.5e-3;  // n delta = 30
  // Cells in two groups moved by +a and -b (relative), a P(A) = b P(B), divergence exactly delta.
  double pa = 0, pb = 0;
  for (std::size_t c = 0; c < cells.probability.size(); ++c) {
    (c % 2 == 0 ? pa : pb) += cells.probability[c];
  }
  const double a = std::sqrt(delta / (pa * (1 + pa / pb))), bb = a * pa / pb;
  std::vector<long double> q(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    q[i] = p[i] * (cells.cell_of[i] % 2 == 0 ? 1 + a : 1 - bb);
  }
  const ReferenceSampler sampler(q);
  const int runs = 4000;
  int at_1e2 = 0, at_1e3 = 0;
  std::vector<int64_t> tokens(n);
  for (int run = 0; run < runs; ++run) {
    sampler.Draw(9000 + static_cast<uint64_t>(run), 13, 0, tokens);
    const GofResult g = GTest(tokens, cells);
    const double pv = ChiSquareUpper(g.statistic, g.df, static_cast<double>(n) * delta);
    at_1e2 += pv < 1e-2;
    at_1e3 += pv < 1e-3;
  }
  EXPECT_LE(at_1e2 / static_cast<double>(runs), RejectionBound(1e-2, runs));
  EXPECT_LE(at_1e3 / static_cast<double>(runs), RejectionBound(1e-3, runs));
  std::printf(
      "noncentral null at the radius (n delta = 30): rejected %d/%d at 1e-2, %d/%d at "
      "1e-3\n",
      at_1e2, runs, at_1e3, runs);
}

// The score test with its mean tolerance, at the q that moves the mean of log p the most.
TEST(Calibration, TolerantScoreTestAtTheBoundaryRejectsAtMostItsLevel) {
  const uint64_t n = 20000;
  const auto p = Zipf(200, 1.0);
  std::vector<double> y(p.size()), e(p.size()), probs(p.size());
  double mean = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    y[i] = static_cast<double>(std::log(p[i]));
    probs[i] = static_cast<double>(p[i]);
    e[i] = 0.03 * probs[i];
    mean += probs[i] * y[i];
  }
  std::vector<long double> q(p.size());
  long double total = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    total += q[i] = p[i] + static_cast<long double>(y[i] > mean ? e[i] : -e[i]);
  }
  for (auto& x : q) x /= total;
  const double tol = static_cast<double>(n) * ScoreMeanTolerance(y, p, e);
  const ScoreComponent comp{static_cast<double>(n), y, probs};
  const ReferenceSampler sampler(q);
  const int runs = 4000;
  int at_1e2 = 0, at_1e3 = 0, central_1e2 = 0;
  std::vector<int64_t> tokens(n);
  for (int run = 0; run < runs; ++run) {
    sampler.Draw(20000 + static_cast<uint64_t>(run), 17, 0, tokens);
    double s = 0;
    for (int64_t t : tokens) s += y[static_cast<std::size_t>(t)];
    const double pv = ScoreTest(std::span(&comp, 1), s, tol).p_value;
    at_1e2 += pv < 1e-2;
    at_1e3 += pv < 1e-3;
    central_1e2 += ScoreTest(std::span(&comp, 1), s).p_value < 1e-2;
  }
  EXPECT_LE(at_1e2 / static_cast<double>(runs), RejectionBound(1e-2, runs));
  EXPECT_LE(at_1e3 / static_cast<double>(runs), RejectionBound(1e-3, runs));
  EXPECT_GT(central_1e2, runs / 2);
  std::printf(
      "tolerant score test at the boundary: rejected %d/%d at 1e-2, %d/%d at 1e-3 "
      "(central: %d/%d at 1e-2)\n",
      at_1e2, runs, at_1e3, runs, central_1e2, runs);
}

// The interval binomial at an end of its interval: exact tails, so the size is at most the
// level by construction; checked exactly by summing the binomial pmf over the rejection region.
TEST(Calibration, IntervalBinomialHasExactSizeAtItsEnds) {
  const uint64_t n = 5000;
  const double lo = 0.30, hi = 0.31;
  for (double level : {1e-2, 1e-3, 1e-6}) {
    for (double end : {lo, hi}) {
      const double size = BinomialIntervalPower(n, lo, hi, end, level);
      EXPECT_LE(size, level) << "end " << end << " level " << level;
      EXPECT_GT(size, level / 20) << "end " << end << " level " << level;  // not vacuous
    }
  }
}

}  // namespace
}  // namespace sampcert::properties

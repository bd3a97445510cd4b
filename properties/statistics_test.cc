// The statistics: cells, the G-test's calibration on the reference sampler (it must reject at
// or below its level), its power on a real defect, the binomial tail and the power formula.
#include "properties/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "properties/plan.h"
#include "properties/distribution.h"
#include "properties/tail.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/reference_sampler.h"

namespace sampcert::properties {
namespace {

std::vector<long double> Zipf(std::size_t v, double s) {
  std::vector<long double> p(v);
  long double z = 0;
  for (std::size_t i = 0; i < v; ++i) z += p[i] = std::pow(static_cast<long double>(i + 1), -s);
  for (auto& x : p) x /= z;
  return p;
}

TEST(Cells, EveryCellHasEnoughExpectedCount) {
  const auto p = Zipf(5000, 1.1);
  const uint64_t n = 100000;
  const Cells c = MakeCells(p, n);
  ASSERT_GE(c.probability.size(), 10u);
  double total = 0;
  for (double q : c.probability) {
    EXPECT_GE(q * static_cast<double>(n), 50.0);
    total += q;
  }
  EXPECT_NEAR(total, 1.0, 1e-12);
  for (int32_t cell : c.cell_of) EXPECT_GE(cell, 0);
}

// Calibration: the G-test on the reference sampler's own draws, 2000 times with different
// seeds, rejects at or below its level. Level 0.01; the bound allows 3 binomial standard
// deviations (false-alarm budget of this check: about 1e-3).
TEST(Calibration, GTestOnTheReferenceSamplerRejectsAtMostItsLevel) {
  const auto p = Zipf(300, 1.2);
  const ReferenceSampler sampler(p);
  const uint64_t n = 20000;
  const Cells cells = MakeCells(p, n);
  const int runs = 2000;
  const double level = 0.01;
  int rejections = 0;
  std::vector<int64_t> tokens(n);
  for (int run = 0; run < runs; ++run) {
    sampler.Draw(1000 + static_cast<uint64_t>(run), 7, 0, tokens);
    if (GTest(tokens, cells).p_value < level) ++rejections;
  }
  const double rate = static_cast<double>(rejections) / runs;
  const double bound = level + 3 * std::sqrt(level * (1 - level) / runs);
  RecordProperty("rejection_rate", std::to_string(rate));
  std::printf("[calibration] G-test at level %.3g: %d of %d rejected (rate %.4f, bound %.4f)\n",
              level, rejections, runs, rate, bound);
  EXPECT_LE(rate, bound);
  EXPECT_GT(rejections, 0);  // a test that never rejects would be suspicious too
}

// Power: a temperature off by 1% is detected with the draws DrawsForTv plans.
TEST(Power, DetectsATemperatureOffByOnePercent) {
  const std::size_t v = 200;
  std::vector<float> logits(v);
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 2.0f);
  for (float& f : logits) f = d(rng);
  std::vector<uint32_t> bits(v);
  std::memcpy(bits.data(), logits.data(), 4 * v);
  RowView row;
  row.logits = bits.data();
  row.vocab = v;
  row.temperature = 1.0f;
  const auto ref = ComputeReference(row, Policies{});
  row.temperature = 0.99f;
  const auto off = ComputeReference(row, Policies{});
  ASSERT_TRUE(ref.ok() && off.ok());
  const double tv = static_cast<double>(TotalVariation(ref->probs, off->probs));
  const double level = 1e-5;
  const Cells cells0 = MakeCells(ref->probs, 1 << 20);
  const uint64_t n = DrawsForTv(static_cast<double>(cells0.probability.size() - 1), level, tv);
  std::printf("[power] T off by 1%%: TV %.4g, planned draws %llu\n", tv,
              static_cast<unsigned long long>(n));
  const Cells cells = MakeCells(ref->probs, n);
  const ReferenceSampler wrong(off->probs);
  std::vector<int64_t> tokens(n);
  wrong.Draw(5, 1, 0, tokens);
  EXPECT_LT(GTest(tokens, cells).p_value, level);
  EXPECT_NEAR(DetectableTv(static_cast<double>(cells.probability.size() - 1), level, n), tv,
              0.2 * tv);
}

TEST(GTest, TwoCellsUseTheExactBinomialTail) {
  const std::vector<long double> p = {0.25L, 0.75L};
  const Cells cells = MakeCells(p, 1000);
  ASSERT_EQ(cells.probability.size(), 2u);
  std::vector<int64_t> tokens(1000, 1);
  for (int i = 0; i < 290; ++i) tokens[static_cast<std::size_t>(i)] = 0;
  EXPECT_DOUBLE_EQ(GTest(tokens, cells).p_value, BinomialTwoSided(290, 1000, 0.25));
}

TEST(Binomial, TwoSidedTails) {
  EXPECT_NEAR(BinomialTwoSided(50, 100, 0.5), 1.0, 1e-12);
  EXPECT_LT(BinomialTwoSided(0, 100000, 0.001), 1e-40);  // the tail never drawn: caught
  EXPECT_LT(BinomialTwoSided(80, 100, 0.5), 1e-8);
  EXPECT_EQ(BinomialTwoSided(0, 10, 0.0), 1.0);
  EXPECT_EQ(BinomialTwoSided(1, 10, 0.0), 0.0);
}

// --- Issue 9: the score tests, the exact binomial's power, the tail sets. ----------------------

// The reference of a planned row (the cached reference rows of the calibration runs).
std::vector<long double> PlannedReference(const std::string& name) {
  const auto row = PlannedRowByName(DType::kF32, name, 0xffffffffu);
  EXPECT_TRUE(row.has_value()) << name;
  const auto ref = ComputeReference(row->view(), Policies{});
  EXPECT_TRUE(ref.ok());
  return ref->probs;
}

// Monte Carlo calibration of the score and band-conditional score tests (saddle-point tails) at
// levels 1e-2 and 1e-3, on the reference sampler's own draws from cached planned rows: the
// rejection rate stays within 3 binomial standard deviations of the level (budget ~3e-3).
TEST(Calibration, ScoreTestsRejectAtMostTheirLevel) {
  for (const char* name : {"llm_like_V1000", "top_k_V200", "near_ties_V16"}) {
    const std::vector<long double> p = PlannedReference(name);  // top_k: over its kept set
    const ReferenceSampler sampler(p);
    const ScoreSummary s = ScoreValues(p);
    const uint64_t n = 2000;
    const int runs = 3000;
    for (const bool band : {false, true}) {
      const std::vector<double>& y = band ? s.band : s.score;
      ScoreComponent comp{static_cast<double>(n), {}, {}};
      for (std::size_t i = 0; i < p.size(); ++i) {
        if (p[i] > 0) {
          comp.values.push_back(y[i]);
          comp.probs.push_back(static_cast<double>(p[i]));
        }
      }
      int rejected_2 = 0, rejected_3 = 0;
      std::vector<int64_t> tokens(n);
      for (int run = 0; run < runs; ++run) {
        sampler.Draw(7000 + static_cast<uint64_t>(run), 3, 0, tokens);
        double sum = 0;
        for (int64_t t : tokens) sum += y[static_cast<std::size_t>(t)];
        const double pv = SaddlePointTwoSided(std::span(&comp, 1), sum);
        rejected_2 += pv < 1e-2;
        rejected_3 += pv < 1e-3;
      }
      std::printf("[calibration] %s %s score test: %d / %d below 1e-2, %d below 1e-3\n", name,
                  band ? "band-conditional" : "plain", rejected_2, runs, rejected_3);
      for (const auto& [level, rejected] :
           {std::pair{1e-2, rejected_2}, std::pair{1e-3, rejected_3}}) {
        const double bound = level * runs + 3 * std::sqrt(level * (1 - level) * runs);
        EXPECT_LE(rejected, bound) << name << (band ? " band" : " plain") << " at " << level;
      }
      EXPECT_GT(rejected_2, 0) << name << ": a test that never rejects is suspicious";
    }
  }
}

// The saddle-point tail against exact tails at the real per-test levels (1e-5 and beyond):
// a two-valued variable (the sum is binomial: a lattice, the hardest case for the formula) and
// a three-valued non-lattice one (exact by enumerating the counts).
TEST(SaddlePoint, MatchesExactTailsAtTheRealLevels) {
  {
    const uint64_t n = 2000;
    const ScoreComponent comp{static_cast<double>(n), {0.0, 1.0}, {0.7, 0.3}};
    for (uint64_t k : {700u, 710u, 520u, 540u}) {
      const double exact = BinomialTwoSided(k, n, 0.3);
      const double sp = SaddlePointTwoSided(std::span(&comp, 1), static_cast<double>(k));
      std::printf("[saddle-point] binomial k=%llu: exact %.4g, saddle point %.4g\n",
                  static_cast<unsigned long long>(k), exact, sp);
      // Lattice: without a continuity correction the formula sits between P(S > k) and
      // P(S >= k); at these levels that is within a factor 1.6 of the exact tail.
      EXPECT_GT(sp, exact / 1.6) << k;
      EXPECT_LT(sp, exact * 1.6) << k;
    }
  }
  {
    // y in {0, 1, sqrt 2} with probabilities 0.5, 0.3, 0.2; n = 300: exact upper tail by
    // summing the multinomial over (k1, k2).
    const int n = 300;
    const double r2 = std::sqrt(2.0);
    const ScoreComponent comp{static_cast<double>(n), {0.0, 1.0, r2}, {0.5, 0.3, 0.2}};
    auto exact_upper = [&](double s) {
      double total = 0;
      for (int k1 = 0; k1 <= n; ++k1) {
        for (int k2 = 0; k1 + k2 <= n; ++k2) {
          if (k1 + k2 * r2 < s) continue;
          const int k0 = n - k1 - k2;
          total += std::exp(std::lgamma(n + 1.0) - std::lgamma(k0 + 1.0) - std::lgamma(k1 + 1.0) -
                            std::lgamma(k2 + 1.0) + k0 * std::log(0.5) + k1 * std::log(0.3) +
                            k2 * std::log(0.2));
        }
      }
      return total;
    };
    const double mean = n * (0.3 + 0.2 * r2);
    for (double s : {mean + 45.0, mean + 60.0, mean + 75.0}) {
      const double exact = std::min(1.0, 2 * exact_upper(s));
      const double sp = SaddlePointTwoSided(std::span(&comp, 1), s);
      std::printf("[saddle-point] three-valued s=%.1f: exact %.4g, saddle point %.4g\n", s, exact,
                  sp);
      EXPECT_GT(sp, exact / 1.25) << s;
      EXPECT_LT(sp, exact * 1.25) << s;
    }
  }
}

// The exact binomial's power: at the stated shift it is at least 0.9 both ways, just below it
// it is not, and a Monte Carlo run of the alternative agrees.
TEST(Power, BinomialShiftIsExact) {
  const uint64_t n = 100000;
  const double p0 = 0.3, alpha = 1e-5;
  const double d = DetectableShiftBinomial(n, p0, alpha);
  EXPECT_GE(BinomialPower(n, p0, p0 + d, alpha), 0.9);
  EXPECT_GE(BinomialPower(n, p0, p0 - d, alpha), 0.9);
  EXPECT_LT(std::min(BinomialPower(n, p0, p0 + 0.95 * d, alpha),
                     BinomialPower(n, p0, p0 - 0.95 * d, alpha)),
            0.9);
  std::mt19937_64 rng(11);
  std::binomial_distribution<uint64_t> alt(n, p0 + d);
  int detected = 0;
  for (int i = 0; i < 400; ++i) detected += BinomialTwoSided(alt(rng), n, p0) < alpha;
  EXPECT_GE(detected, 0.9 * 400 - 3 * std::sqrt(400 * 0.09)) << detected;
  // A near point mass: moving 0.02 to the other tokens is seen in a few thousand draws.
  EXPECT_LT(DetectableShiftBinomial(4096, 1 - 3.7e-6, 1e-5), 0.01);
}

// A one-cell reference (a top token plus a short tail) is tested as its top token against the
// rest, so moving mass off the top token is detectable (it used to pass as "one cell").
TEST(Cells, OneCellRowsSplitIntoTopTokenAndRest) {
  const std::vector<long double> p = {3.7e-6L, 1 - 3.7e-6L - 2.5e-8L, 2.5e-8L};
  const Cells c = MakeCells(p, 16384);
  ASSERT_EQ(c.probability.size(), 2u);
  EXPECT_EQ(c.cell_of[1], 0);
  EXPECT_EQ(c.cell_of[0], 1);
  EXPECT_EQ(c.cell_of[2], 1);
  std::vector<int64_t> moved(16384, 1);
  for (int i = 0; i < 328; ++i) moved[static_cast<std::size_t>(i)] = 0;  // 0.02 to token 0
  EXPECT_LT(GTest(moved, c).p_value, 1e-30);
}

// The band-conditional statistic has mean 0 under the null and moves when a band is evened out.
TEST(ScoreValues, BandConditionalSeesEvenedBands) {
  const auto p = Zipf(1000, 1.1);
  const ScoreSummary s = ScoreValues(p);
  long double mean = 0, evened = 0;
  std::map<int, std::pair<long double, int>> bands;
  for (std::size_t i = 0; i < p.size(); ++i) {
    mean += p[i] * s.band[i];
    int e = 0;
    std::frexp(static_cast<double>(p[i]), &e);
    bands[e].first += p[i];
    bands[e].second += 1;
  }
  for (std::size_t i = 0; i < p.size(); ++i) {
    int e = 0;
    std::frexp(static_cast<double>(p[i]), &e);
    evened += bands[e].first / bands[e].second * s.band[i];
  }
  EXPECT_NEAR(static_cast<double>(mean), 0.0, 1e-12);
  EXPECT_GT(s.band_var, 0.0);
  // Evening out moves the mean by many standard errors of 10^5 draws.
  EXPECT_LT(static_cast<double>(evened), -6 * std::sqrt(s.band_var / 1e5));
}

// TAIL-1's nested sets on the deep tail row: three sets, nested, with the planned masses.
TEST(TailSets, DeepTailRowHasThreeNestedSets) {
  const auto row = PlannedRowByName(DType::kF32, "deep_tail_V180001", 0);
  ASSERT_TRUE(row.has_value());
  const auto ref = ComputeReference(row->view(), Policies{});
  ASSERT_TRUE(ref.ok());
  const auto sets = TailSets(*ref);
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(sets[0].tokens, 180000u);
  EXPECT_EQ(sets[1].tokens, 160000u);
  EXPECT_EQ(sets[2].tokens, 100000u);
  EXPECT_NEAR(sets[2].mass, 1e-3 / (1 + 0.02 + 0.0048 + 0.001), 2e-5);
  for (std::size_t i = 0; i < ref->probs.size(); ++i) {
    EXPECT_LE(sets[2].member[i], sets[1].member[i]);
    EXPECT_LE(sets[1].member[i], sets[0].member[i]);
  }
}

}  // namespace
}  // namespace sampcert::properties

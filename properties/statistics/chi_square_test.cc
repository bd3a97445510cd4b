// The G-test: its calibration on the reference sampler (it must reject at or below its level),
// its power on a real defect with the draws DrawsForTv plans, and the exact tail on two cells.
#include "properties/statistics/chi_square.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "properties/statistics/binomial.h"
#include "properties/statistics/cells.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/reference_sampler.h"
#include "tests/support/zipf.h"

namespace sampcert::properties {
namespace {

using testing_support::Zipf;

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

// Each cell names its one token (the token a failure's evidence gives the logit of), or -1 for
// a band; one entry per cell, whatever the construction (token cells, bands, the remainder,
// the two-cell split of a near point mass).
TEST(MakeCells, EachCellNamesItsOneTokenOrNone) {
  const auto zipf = Zipf(300, 1.2);
  for (uint64_t n : {uint64_t{200}, uint64_t{20000}}) {
    const Cells c = MakeCells(zipf, n);
    ASSERT_EQ(c.token.size(), c.probability.size()) << n;
    for (std::size_t k = 0; k < c.token.size(); ++k) {
      std::size_t members = 0;
      for (int32_t cell : c.cell_of) members += cell == static_cast<int32_t>(k);
      if (c.token[k] >= 0) {
        EXPECT_EQ(members, 1u) << c.label[k];
        EXPECT_EQ(c.cell_of[static_cast<std::size_t>(c.token[k])], static_cast<int32_t>(k));
        EXPECT_EQ(c.label[k], "token " + std::to_string(c.token[k]));
      } else {
        EXPECT_GE(members, 1u) << c.label[k];
      }
    }
  }
  const std::vector<long double> point = {0.999L, 0.0005L, 0.0005L};
  const Cells two = MakeCells(point, 1000);
  ASSERT_EQ(two.probability.size(), 2u);
  EXPECT_EQ(two.token, (std::vector<int64_t>{0, -1}));
}

}  // namespace
}  // namespace sampcert::properties

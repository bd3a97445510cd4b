// The statistics on the plan's own rows: the score tests' calibration on cached planned rows,
// and TAIL-1's nested tail sets of the deep-tail row.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "properties/distribution.h"
#include "properties/plan.h"
#include "properties/statistics/score.h"
#include "properties/tail.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/reference_sampler.h"

namespace sampcert::properties {
namespace {

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

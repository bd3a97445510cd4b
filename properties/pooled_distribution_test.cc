// DIST-3's calibration (issue 9): the pooled tests on the reference sampler's own draws from
// cached planned rows reject at most their level (Monte Carlo at 1e-2 and 1e-3), and they catch
// a sampler whose temperature is off on every row.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "properties/generated_rows.h"
#include "properties/plan.h"
#include "properties/portable_random.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/reference_sampler.h"

namespace sampcert::properties {
namespace {

struct CachedRow {
  ReferenceDistribution ref;
  ReferenceDistribution hotter;  // the same row at 1.2 T (the planted alternative)
};

std::vector<CachedRow> CachedRows() {
  std::vector<CachedRow> rows;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (auto& [name, row] : PlannedRows(d, 0xffffffffu)) {
      if (row.vocab() > 1000) continue;  // the small planned rows: fast and varied
      auto ref = ComputeReference(row.view(), Policies{});
      RowCase hot = row;
      hot.temperature = row.temperature * 1.2f;
      auto hotter = ComputeReference(hot.view(), Policies{});
      if (ref.ok() && hotter.ok()) rows.push_back({*ref, *hotter});
    }
  }
  return rows;
}

// The rejection rate of DIST-3 over `runs` pooled runs of 64 draws per row.
int Rejections(const std::vector<CachedRow>& rows, double level, int runs, bool alternative) {
  PlanItem item;
  item.kind = ItemKind::kGeneratedRows;
  item.dtype = "f32";
  item.level = level;
  item.subtests = 3;
  int rejected = 0;
  std::vector<int64_t> tokens(64);
  for (int run = 0; run < runs; ++run) {
    PooledDistribution pooled;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const ReferenceSampler sampler(alternative ? rows[r].hotter.probs : rows[r].ref.probs);
      const uint64_t seed = Mix(static_cast<uint64_t>(run) + 1, r);
      sampler.Draw(seed, 1, 0, tokens);
      pooled.Add(rows[r].ref, tokens, seed);
    }
    rejected += pooled.Result(item).status == results::Status::kFail;
  }
  return rejected;
}

TEST(Dist3Calibration, RejectsAtMostItsLevel) {
  const std::vector<CachedRow> rows = CachedRows();
  ASSERT_GE(rows.size(), 20u);
  const int runs = 600;
  for (double level : {1e-2, 1e-3}) {
    const int rejected = Rejections(rows, level, runs, false);
    const double bound = level * runs + 3 * std::sqrt(level * (1 - level) * runs);
    std::printf("[calibration] DIST-3 at level %.0e: %d of %d runs rejected (bound %.1f)\n", level,
                rejected, runs, bound);
    EXPECT_LE(rejected, bound) << level;
  }
}

TEST(Dist3Power, CatchesATemperatureOffOnEveryRow) {
  const std::vector<CachedRow> rows = CachedRows();
  const int rejected = Rejections(rows, 1e-5, 20, true);
  std::printf("[power] DIST-3, T 20%% high on every row, level 1e-5: %d of 20 runs rejected\n",
              rejected);
  EXPECT_GE(rejected, 15);
}

}  // namespace
}  // namespace sampcert::properties

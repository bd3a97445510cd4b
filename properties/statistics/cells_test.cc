// The G-test's cells: every cell has its expected count, and a one-cell reference splits into
// its top token and the rest.
#include "properties/statistics/cells.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "properties/statistics/chi_square.h"
#include "tests/support/zipf.h"

namespace sampcert::properties {
namespace {

using testing_support::Zipf;

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

}  // namespace
}  // namespace sampcert::properties

// The G-test of independence on pairs (INDEP-1): its calibration on independent pairs (it must
// reject at or below its level), its power at the dependence DetectableTv states, and its
// verdict on the dependences the planted plug-ins have.
#include "properties/statistics/independence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "properties/statistics/chi_square.h"

namespace sampcert::properties {
namespace {

// A token of `probs` from a uniform u in [0, 1).
int64_t Token(const std::vector<double>& probs, double u) {
  double c = 0;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    c += probs[i];
    if (u < c) return static_cast<int64_t>(i);
  }
  return static_cast<int64_t>(probs.size() - 1);
}

double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1p-53; }

// Pairs whose second draw copies the first with probability eps, else is independent: the
// margins stay `probs`, the joint moves TV eps (1 - sum p^2) off their product.
void Pairs(const std::vector<double>& probs, double eps, std::mt19937_64& rng, std::size_t n,
           std::vector<int64_t>* a, std::vector<int64_t>* b) {
  a->resize(n);
  b->resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    (*a)[i] = Token(probs, Uniform(rng));
    const bool copy = Uniform(rng) < eps;
    (*b)[i] = copy ? (*a)[i] : Token(probs, Uniform(rng));
  }
}

TEST(Independence, CalibratedOnIndependentPairs) {
  const std::vector<double> probs = {0.4, 0.3, 0.2, 0.1};
  std::mt19937_64 rng(11);
  const int runs = 2000;
  const double level = 0.01;
  int rejections = 0;
  std::vector<int64_t> a, b;
  for (int run = 0; run < runs; ++run) {
    Pairs(probs, 0, rng, 2000, &a, &b);
    const IndependenceResult r = GTestIndependence(a, b, probs.size());
    EXPECT_EQ(r.df, 9);
    if (r.p_value < level) ++rejections;
  }
  const double rate = static_cast<double>(rejections) / runs;
  const double bound = level + 3 * std::sqrt(level * (1 - level) / runs);
  std::printf("[calibration] independence G-test at level %.3g: %d of %d rejected (bound %.4f)\n",
              level, rejections, runs, bound);
  EXPECT_LE(rate, bound);
  EXPECT_GT(rejections, 0);
}

// The stated power: a dependence at the TV that DetectableTv gives for n pairs at level alpha
// is detected in about 90% of runs (the noncentral chi-square is an approximation: >= 80%).
TEST(Independence, DetectsTheStatedDependenceAboutNineTimesInTen) {
  const std::vector<double> probs = {0.25, 0.25, 0.25, 0.25};
  const double alpha = 1e-4;
  const uint64_t n = 20000;
  const double tv = DetectableTv(9, alpha, n);
  // Copying with probability eps: phi^2 = 3 eps^2 (uniform, 4 categories), and the bound
  // lambda >= 4 n TV^2 is what the plan uses; take eps at phi^2 = 4 TV^2 (the bound's equality).
  const double eps = std::sqrt(4 * tv * tv / 3);
  std::mt19937_64 rng(12);
  const int runs = 400;
  int detected = 0;
  std::vector<int64_t> a, b;
  for (int run = 0; run < runs; ++run) {
    Pairs(probs, eps, rng, n, &a, &b);
    detected += GTestIndependence(a, b, probs.size()).p_value < alpha;
  }
  std::printf("[power] TV %.4g (eps %.4g) at level %.3g with %llu pairs: detected %d of %d\n", tv,
              eps, alpha, static_cast<unsigned long long>(n), detected, runs);
  EXPECT_GE(detected, runs * 8 / 10);
}

// The planted dependences: a second draw that is a function of the first (a shifted uniform,
// a repeated stream) fails at any level the plan uses, and names a cell of the diagonal.
TEST(Independence, AFunctionOfTheFirstDrawFails) {
  std::mt19937_64 rng(13);
  std::vector<int64_t> a(5000), b(5000);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<int64_t>(rng() % 4);
    b[i] = a[i];
  }
  IndependenceResult r = GTestIndependence(a, b, 4);
  EXPECT_LT(r.p_value, 1e-100);
  EXPECT_EQ(r.worst_first, r.worst_second);
  for (std::size_t i = 0; i < a.size(); ++i) b[i] = (a[i] + 2) % 4;
  r = GTestIndependence(a, b, 4);
  EXPECT_LT(r.p_value, 1e-100);
  EXPECT_EQ((r.worst_first + 2) % 4, r.worst_second);
}

TEST(Independence, NothingToTestWithOneCategoryOrNoPairs) {
  const std::vector<int64_t> zeros(100, 0), mixed = {0, 1, 2, 3};
  EXPECT_EQ(GTestIndependence(zeros, zeros, 4).p_value, 1);
  EXPECT_EQ(GTestIndependence(zeros, zeros, 4).df, 0);
  EXPECT_EQ(GTestIndependence({}, {}, 4).p_value, 1);
  // Out-of-range ids are not counted.
  const std::vector<int64_t> bad = {-1, 7, 2, 3};
  EXPECT_EQ(GTestIndependence(bad, mixed, 4).pairs, 2u);
}

}  // namespace
}  // namespace sampcert::properties

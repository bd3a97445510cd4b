// Prints the p-values of the statistics' tail functions on a fixed grid of inputs, as JSON,
// for tests/scipy_crosscheck_test.py to compare with scipy.stats (issue 10, point 5): the central
// and noncentral chi-square tails (the G-test, STAT-3 and TOL-7), the exact two-sided binomial and
// its interval form (two cells, TAIL-1), and the saddle-point tail of a score statistic
// (STAT-3), whose exact value the script computes by convolution.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "properties/statistics/binomial.h"
#include "properties/statistics/chi_square.h"
#include "properties/statistics/score.h"

namespace sp = sampcert::properties;

int main() {
  std::vector<std::string> rows;
  auto add = [&](const char* fn, std::initializer_list<double> args, double value) {
    std::string a;
    for (double x : args) a += fmt::format("{}{:.17g}", a.empty() ? "" : ", ", x);
    rows.push_back(fmt::format(R"({{"fn": "{}", "args": [{}], "value": {:.17g}}})", fn, a, value));
  };
  for (double df : {1.0, 2.0, 5.0, 40.0, 100.0, 500.0}) {
    for (double k : {0.0, 1.0, 3.0, 6.0, 10.0, 20.0}) {
      const double x = df + k * std::sqrt(2 * df);
      add("chi2_sf", {x, df}, sp::ChiSquareUpper(x, df));
    }
  }
  for (double df : {1.0, 5.0, 40.0, 100.0}) {
    for (double lambda : {0.5, 10.0, 100.0, 1000.0}) {
      for (double k : {0.0, 2.0, 5.0, 8.0}) {
        const double x = df + lambda + k * std::sqrt(2 * (df + 2 * lambda));
        add("ncx2_sf", {x, df, lambda}, sp::ChiSquareUpper(x, df, lambda));
      }
    }
  }
  for (double n : {10.0, 1000.0, 100000.0, 4194304.0}) {
    for (double p : {0.5, 0.01, 1e-3}) {
      const double sd = std::sqrt(n * p * (1 - p));
      for (double k : {-6.0, -3.0, 0.0, 3.0, 6.0}) {
        const double c = std::floor(n * p + k * sd);
        if (c < 0 || c > n) continue;
        const auto ck = static_cast<uint64_t>(c), nn = static_cast<uint64_t>(n);
        add("binom_two_sided", {c, n, p}, sp::BinomialTwoSided(ck, nn, p));
        add("binom_interval", {c, n, 0.95 * p, 1.05 * p},
            sp::BinomialTwoSidedInterval(ck, nn, 0.95 * p, 1.05 * p));
      }
      add("binom_two_sided", {0, n, p}, sp::BinomialTwoSided(0, static_cast<uint64_t>(n), p));
    }
  }
  // A lattice score statistic: n draws of {0, 1, 2} with probabilities {0.5, 0.3, 0.2}, at the
  // planned rows' sizes (>= 4096 draws; at n = 100 the lattice error reaches 33%, below).
  for (double n : {1000.0, 4096.0, 10000.0}) {
    const sp::ScoreComponent comp{n, {0, 1, 2}, {0.5, 0.3, 0.2}};
    const double mean = 0.7 * n, sd = std::sqrt(0.61 * n);
    for (double k : {-5.0, -3.0, 2.0, 3.0, 5.0}) {
      const double s = std::round(mean + k * sd);
      add("saddle_two_sided_012", {s, n}, sp::SaddlePointTwoSided(std::span(&comp, 1), s));
    }
  }
  std::printf("[\n");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::printf("  %s%s\n", rows[i].c_str(), i + 1 < rows.size() ? "," : "");
  }
  std::printf("]\n");
  return 0;
}

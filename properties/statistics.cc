#include "properties/statistics.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/non_central_chi_squared.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <string>

namespace sampcert::properties {

Cells MakeCells(std::span<const long double> probs, uint64_t draws, double min_expected,
                std::size_t max_token_cells) {
  Cells c;
  const std::size_t v = probs.size();
  c.cell_of.assign(v, -1);
  const double n = static_cast<double>(draws);
  std::map<int, std::vector<std::size_t>> bands;  // band -> tokens, bands in increasing order
  // The probability above which a token is a cell of its own: n p >= min_expected, and among
  // the max_token_cells most probable.
  std::vector<double> sorted;
  for (long double p : probs) {
    if (p > 0) sorted.push_back(static_cast<double>(p));
  }
  double own_cell_above = 0;
  if (sorted.size() > max_token_cells) {
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(max_token_cells),
                     sorted.end(), std::greater<double>());
    own_cell_above = sorted[max_token_cells];
  }
  for (std::size_t i = 0; i < v; ++i) {
    const double p = static_cast<double>(probs[i]);
    if (!(p > 0)) continue;
    if (n * p >= min_expected && p > own_cell_above) {
      c.cell_of[i] = static_cast<int32_t>(c.probability.size());
      c.probability.push_back(p);
      c.label.push_back(fmt::format("token {}", i));
    } else {
      // floor(-log2 p) exactly, from the binary exponent (p = m 2^e, m in [0.5, 1)): a cell
      // boundary must not depend on libm's last bit.
      int e = 0;
      const double m = std::frexp(p, &e);
      bands[m == 0.5 ? 1 - e : -e].push_back(i);
    }
  }
  // Pool bands from the most probable down; close a cell once it reaches min_expected.
  std::vector<std::size_t> pending;
  double pending_p = 0;
  int first_band = 0, last_band = 0;
  for (const auto& [band, tokens] : bands) {
    if (pending.empty()) first_band = band;
    last_band = band;
    for (std::size_t t : tokens) {
      pending.push_back(t);
      pending_p += static_cast<double>(probs[t]);
    }
    if (n * pending_p >= min_expected) {
      for (std::size_t t : pending) c.cell_of[t] = static_cast<int32_t>(c.probability.size());
      c.probability.push_back(pending_p);
      c.label.push_back(
          fmt::format("band 2^-{}..2^-{} ({} tokens)", last_band + 1, first_band, pending.size()));
      pending.clear();
      pending_p = 0;
    }
  }
  if (!pending.empty()) {  // a short remainder joins the last cell (or stands alone)
    if (c.probability.empty()) {
      c.probability.push_back(0);
      c.label.push_back("remainder");
    }
    const auto last = static_cast<int32_t>(c.probability.size() - 1);
    for (std::size_t t : pending) c.cell_of[t] = last;
    c.probability.back() += pending_p;
    c.label.back() += fmt::format(" + {} tail tokens", pending.size());
  }
  return c;
}

GofResult GTest(std::span<const int64_t> tokens, const Cells& cells) {
  GofResult r;
  r.cells = cells.probability.size();
  r.observed.assign(r.cells, 0);
  r.expected.assign(r.cells, 0);
  uint64_t n = 0;
  for (int64_t t : tokens) {
    if (t < 0 || static_cast<std::size_t>(t) >= cells.cell_of.size()) continue;
    const int32_t c = cells.cell_of[static_cast<std::size_t>(t)];
    if (c < 0) continue;
    r.observed[static_cast<std::size_t>(c)] += 1;
    ++n;
  }
  if (r.cells < 2 || n == 0) return r;  // one cell: nothing to test beyond the exact checks
  double total_p = 0;
  for (double p : cells.probability) total_p += p;
  double g = 0;
  for (std::size_t c = 0; c < r.cells; ++c) {
    r.expected[c] = static_cast<double>(n) * cells.probability[c] / total_p;
    if (r.observed[c] > 0) g += 2 * r.observed[c] * std::log(r.observed[c] / r.expected[c]);
  }
  const double k = static_cast<double>(r.cells);
  const double williams = 1 + (k * k - 1) / (6 * static_cast<double>(n) * (k - 1));
  r.df = k - 1;
  r.statistic = std::max(0.0, g / williams);
  if (r.cells == 2) {
    // Two cells: the exact binomial tail, not the chi-square approximation (SPEC STAT-3).
    r.p_value =
        BinomialTwoSided(static_cast<uint64_t>(r.observed[0]), n, cells.probability[0] / total_p);
    return r;
  }
  const boost::math::chi_squared chi(r.df);
  r.p_value = boost::math::cdf(boost::math::complement(chi, r.statistic));
  return r;
}

namespace {

// Noncentrality at which a level-alpha test with df degrees of freedom has power 0.9.
double NoncentralityForPower(double df, double alpha) {
  const boost::math::chi_squared chi(df);
  const double crit = boost::math::quantile(boost::math::complement(chi, alpha));
  double lo = 0, hi = 1;
  auto power = [&](double lambda) {
    const boost::math::non_central_chi_squared nc(df, lambda);
    return boost::math::cdf(boost::math::complement(nc, crit));
  };
  while (power(hi) < 0.9) hi *= 2;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (power(mid) < 0.9 ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace

double DetectableTv(double df, double alpha, uint64_t n) {
  if (df < 1 || n == 0) return 0;
  return std::sqrt(NoncentralityForPower(df, alpha) / (4.0 * static_cast<double>(n)));
}

uint64_t DrawsForTv(double df, double alpha, double tv) {
  if (df < 1) return 0;
  return static_cast<uint64_t>(std::ceil(NoncentralityForPower(df, alpha) / (4.0 * tv * tv)));
}

double BinomialTwoSided(uint64_t k, uint64_t n, double p) {
  if (n == 0) return 1;
  if (p <= 0) return k == 0 ? 1 : 0;
  if (p >= 1) return k == n ? 1 : 0;
  const boost::math::binomial bin(static_cast<double>(n), p);
  const double kd = static_cast<double>(k);
  const double lower = boost::math::cdf(bin, kd);
  const double upper = k == 0 ? 1.0 : boost::math::cdf(boost::math::complement(bin, kd - 1));
  return std::min(1.0, 2 * std::min(lower, upper));
}

}  // namespace sampcert::properties

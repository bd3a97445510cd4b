#include "properties/statistics/chi_square.h"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/non_central_chi_squared.hpp>
#include <cmath>
#include <limits>
#include <tuple>

#include "properties/statistics/binomial.h"
#include "properties/statistics/tolerant_null.h"

namespace sampcert::properties {

double ChiSquareUpper(double statistic, double df, double lambda) {
  if (!(lambda > 0)) {
    const boost::math::chi_squared chi(df);
    return boost::math::cdf(boost::math::complement(chi, statistic));
  }
  const boost::math::non_central_chi_squared nc(df, lambda);
  return boost::math::cdf(boost::math::complement(nc, statistic));
}

GofResult GTest(std::span<const int64_t> tokens, const Cells& cells,
                std::span<const double> token_error) {
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
  r.delta = ChiSquareRadius(cells, token_error);
  if (r.cells == 2) {
    // Two cells: the exact binomial tail, not the chi-square approximation (SPEC STAT-3),
    // against the interval of cell 0's mass that the tolerance admits (a point without one).
    const double p0 = cells.probability[0] / total_p;
    double e0 = 0, e1 = 0;
    if (!token_error.empty()) {
      const std::vector<double> e = CellErrors(cells, token_error);
      e0 = e[0];
      e1 = e[1];
    }
    std::tie(r.interval_lo, r.interval_hi) = AdmissibleMass(p0, e0, e1);
    r.p_value = BinomialTwoSidedInterval(static_cast<uint64_t>(r.observed[0]), n, r.interval_lo,
                                         r.interval_hi);
    return r;
  }
  r.p_value = ChiSquareUpper(r.statistic, r.df, static_cast<double>(n) * r.delta);
  return r;
}

namespace {

// Noncentrality at which a level-alpha test with df degrees of freedom has power 0.9, its
// critical value taken under the noncentral null chi2'(df, lambda0) (central for 0).
double NoncentralityForPower(double df, double alpha, double lambda0 = 0) {
  double crit = 0;
  if (lambda0 > 0) {
    const boost::math::non_central_chi_squared null(df, lambda0);
    crit = boost::math::quantile(boost::math::complement(null, alpha));
  } else {
    const boost::math::chi_squared chi(df);
    crit = boost::math::quantile(boost::math::complement(chi, alpha));
  }
  double lo = lambda0, hi = std::max(1.0, 2 * lambda0);
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

double DetectableTv(double df, double alpha, uint64_t n, double delta) {
  if (df < 1 || n == 0) return 0;
  const double nd = static_cast<double>(n);
  return std::sqrt(NoncentralityForPower(df, alpha, nd * delta) / (4.0 * nd));
}

uint64_t DrawsForTv(double df, double alpha, double tv, double delta) {
  if (df < 1) return 0;
  if (!(delta > 0)) {
    return static_cast<uint64_t>(std::ceil(NoncentralityForPower(df, alpha) / (4.0 * tv * tv)));
  }
  // An alternative at TV tv has chi-square divergence >= 4 tv^2; at or below the radius no
  // number of draws separates it from the null.
  constexpr uint64_t kMax = uint64_t{1} << 40;
  if (4 * tv * tv <= delta) return std::numeric_limits<uint64_t>::max();
  uint64_t lo = 0, hi = 1024;  // DetectableTv decreases in n: double, then bisect
  while (DetectableTv(df, alpha, hi, delta) > tv) {
    if (hi >= kMax) return std::numeric_limits<uint64_t>::max();
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > std::max<uint64_t>(1, lo / 1000)) {  // to 0.1%: finer is noise in a plan
    const uint64_t mid = lo + (hi - lo) / 2;
    (DetectableTv(df, alpha, mid, delta) > tv ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace sampcert::properties

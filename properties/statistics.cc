#include "properties/statistics.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/non_central_chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numbers>
#include <string>
#include <tuple>

#include "sampcert/tolerance.h"

namespace sampcert::properties {

std::vector<double> NullTolerance(std::span<const long double> null,
                                  std::span<const long double> log_weights,
                                  AccuracyClass accuracy) {
  if (accuracy == AccuracyClass::kF32) return {};
  const AccuracyParams& acc = AccuracyFor(accuracy);
  const std::size_t v = null.size();
  std::vector<double> e(v, 0);
  for (std::size_t i = 0; i < v; ++i) {
    const double p = static_cast<double>(null[i]);
    if (!(p > 0)) continue;
    // sigma(l) of TOL-1 from the token's log-weight (0 where it is not finite: +inf ties).
    const double ell = i < log_weights.size() && std::isfinite(log_weights[i])
                           ? static_cast<double>(log_weights[i])
                           : 0.0;
    e[i] =
        p * ProbabilityRelTolerance(acc, ell, v) + (p < acc.prob_floor ? acc.abs_below_floor : 0);
  }
  return e;
}

std::pair<double, double> AdmissibleMass(double m, double e_set, double e_rest) {
  if (e_set == 0 && e_rest == 0) return {m, m};
  const double up = m + e_set, down = std::max(0.0, m - e_set);
  const double rest_low = std::max(0.0, 1 - m - e_rest), rest_high = 1 - m + e_rest;
  const double hi = up + rest_low > 0 ? up / (up + rest_low) : 1.0;
  const double lo = down > 0 ? down / (down + rest_high) : 0.0;
  return {std::clamp(lo, 0.0, m), std::clamp(hi, m, 1.0)};
}

namespace {

// Per cell, the admissible error of its reported mass (the sum of its tokens' errors).
std::vector<double> CellErrors(const Cells& cells, std::span<const double> token_error) {
  std::vector<double> e(cells.probability.size(), 0);
  for (std::size_t i = 0; i < cells.cell_of.size() && i < token_error.size(); ++i) {
    if (cells.cell_of[i] >= 0) e[static_cast<std::size_t>(cells.cell_of[i])] += token_error[i];
  }
  return e;
}

}  // namespace

double ChiSquareRadius(const Cells& cells, std::span<const double> token_error) {
  if (token_error.empty() || cells.probability.size() < 2) return 0;
  const std::vector<double> e = CellErrors(cells, token_error);
  double total_p = 0, total_e = 0;
  for (std::size_t c = 0; c < e.size(); ++c) {
    total_p += cells.probability[c];
    total_e += e[c];
  }
  // Two upper bounds of the joint maximum; the smaller is the radius. Both only grow when cells
  // are split (Cauchy-Schwarz), so a bound on fine cells also bounds the coarser cells that
  // fewer draws make.
  // (1) With reported cell masses P_c + d_c (|d_c| <= E_c), s = sum d_c and Q_c = (P_c + d_c) /
  //     (1 + s): sum (Q_c - P_c)^2 / P_c = (sum d_c^2 / P_c - s^2) / (1 + s)^2
  //     <= sum E_c^2 / P_c / (1 - sum E_c)^2.
  // (2) Each term at its own worst end (AdmissibleMass), tighter when one cell's error is
  //     most of the total.
  double joint = 0, separate = 0;
  for (std::size_t c = 0; c < e.size(); ++c) {
    const double p = cells.probability[c] / total_p;
    if (!(p > 0)) continue;
    joint += e[c] * e[c] / p;
    const auto [lo, hi] = AdmissibleMass(p, e[c], total_e - e[c]);
    const double d = std::max(hi - p, p - lo);
    separate += d * d / p;
  }
  if (total_e < 1) joint /= (1 - total_e) * (1 - total_e);
  return total_e < 1 ? std::min(joint, separate) : separate;
}

double ChiSquareUpper(double statistic, double df, double lambda) {
  if (!(lambda > 0)) {
    const boost::math::chi_squared chi(df);
    return boost::math::cdf(boost::math::complement(chi, statistic));
  }
  const boost::math::non_central_chi_squared nc(df, lambda);
  return boost::math::cdf(boost::math::complement(nc, statistic));
}

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
  // One cell but more than one token: the most probable token against the rest, tested by the
  // exact binomial (no expected-count floor is needed there). A row that is almost a point mass
  // still has a test with power against moving mass off its top token.
  if (c.probability.size() == 1 && sorted.size() > 1) {
    std::size_t top = 0;
    for (std::size_t i = 1; i < v; ++i) {
      if (probs[i] > probs[top]) top = i;
    }
    c.cell_of[top] = 0;
    c.probability = {static_cast<double>(probs[top]), 0};
    c.label = {fmt::format("token {}", top), "the other tokens"};
    for (std::size_t i = 0; i < v; ++i) {
      if (i != top && probs[i] > 0) {
        c.cell_of[i] = 1;
        c.probability[1] += static_cast<double>(probs[i]);
      }
    }
  }
  return c;
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

namespace {

// P(K <= k) and P(K >= k) for K ~ Binomial(n, p), p anywhere in [0, 1].
double BinomialLower(uint64_t k, uint64_t n, double p) {
  if (p <= 0) return 1;
  if (p >= 1) return k >= n ? 1 : 0;
  return boost::math::cdf(boost::math::binomial(static_cast<double>(n), p), static_cast<double>(k));
}
double BinomialUpper(uint64_t k, uint64_t n, double p) {
  if (k == 0) return 1;
  if (p <= 0) return 0;
  if (p >= 1) return k <= n ? 1 : 0;
  return boost::math::cdf(boost::math::complement(boost::math::binomial(static_cast<double>(n), p),
                                                  static_cast<double>(k) - 1));
}

}  // namespace

double BinomialTwoSidedInterval(uint64_t k, uint64_t n, double lo, double hi) {
  if (lo == hi) return BinomialTwoSided(k, n, lo);
  if (n == 0) return 1;
  // The composite null's p-value: each tail at the end of the interval that maximizes it.
  return std::min(1.0, 2 * std::min(BinomialLower(k, n, lo), BinomialUpper(k, n, hi)));
}

double BinomialIntervalPower(uint64_t n, double lo, double hi, double p1, double alpha) {
  if (lo == hi) return BinomialPower(n, lo, p1, alpha);
  if (n == 0) return 0;
  // Rejection region: k <= a (2 P(K <= k | lo) < alpha) or k >= b (2 P(K >= k | hi) < alpha);
  // both tails are monotone in k, so a bisection finds the ends.
  int64_t a = -1, b = static_cast<int64_t>(n);
  {
    int64_t x = -1, y = static_cast<int64_t>(n);
    while (y - x > 1) {
      const int64_t m = x + (y - x) / 2;
      (2 * BinomialLower(static_cast<uint64_t>(m), n, lo) < alpha ? x : y) = m;
    }
    a = x;
  }
  {
    int64_t x = 0, y = static_cast<int64_t>(n) + 1;
    while (y - x > 1) {
      const int64_t m = x + (y - x) / 2;
      (2 * BinomialUpper(static_cast<uint64_t>(m), n, hi) < alpha ? y : x) = m;
    }
    b = y;
  }
  double power = 0;
  if (a >= 0) power += BinomialLower(static_cast<uint64_t>(a), n, p1);
  if (b <= static_cast<int64_t>(n)) power += BinomialUpper(static_cast<uint64_t>(b), n, p1);
  return std::min(1.0, power);
}

double DetectableShiftBinomial(uint64_t n, double p0, double alpha, double lo, double hi) {
  if (lo == p0 && hi == p0) return DetectableShiftBinomial(n, p0, alpha);
  if (n == 0 || !(p0 > 0) || !(p0 < 1)) return std::numeric_limits<double>::infinity();
  auto direction = [&](double range, double sign) {
    if (BinomialIntervalPower(n, lo, hi, p0 + sign * range, alpha) < 0.9) return range;
    double a = 0, b = range;
    for (int i = 0; i < 40; ++i) {
      const double mid = (a + b) / 2;
      (BinomialIntervalPower(n, lo, hi, p0 + sign * mid, alpha) < 0.9 ? a : b) = mid;
    }
    return b;
  };
  return std::max(direction(p0, -1), direction(1 - p0, +1));
}

namespace {

// The rejection region of BinomialTwoSided at level alpha: k <= lo or k >= hi (lo = -1 or
// hi = n + 1 when that side is empty). Both tails are monotone in k, so a bisection finds them.
std::pair<int64_t, int64_t> BinomialRejection(uint64_t n, double p0, double alpha) {
  const boost::math::binomial bin(static_cast<double>(n), p0);
  int64_t lo = -1, hi = static_cast<int64_t>(n) + 1;
  {  // largest k with 2 P(K <= k) < alpha
    int64_t a = -1, b = static_cast<int64_t>(n);
    while (b - a > 1) {
      const int64_t m = a + (b - a) / 2;
      (2 * boost::math::cdf(bin, static_cast<double>(m)) < alpha ? a : b) = m;
    }
    lo = a;
  }
  {  // smallest k with 2 P(K >= k) < alpha
    int64_t a = 0, b = static_cast<int64_t>(n) + 1;
    while (b - a > 1) {
      const int64_t m = a + (b - a) / 2;
      const double upper =
          boost::math::cdf(boost::math::complement(bin, static_cast<double>(m) - 1));
      (2 * upper < alpha ? b : a) = m;
    }
    hi = b;
  }
  return {lo, hi};
}

}  // namespace

double BinomialPower(uint64_t n, double p0, double p1, double alpha) {
  if (n == 0) return 0;
  if (p0 <= 0 || p0 >= 1) return (p1 > 0) != (p0 > 0) || (p1 < 1) != (p0 < 1) ? 1 : 0;
  const auto [lo, hi] = BinomialRejection(n, p0, alpha);
  const double nd = static_cast<double>(n);
  double power = 0;
  if (p1 <= 0) return lo >= 0 ? 1.0 : 0.0;
  if (p1 >= 1) return hi <= static_cast<int64_t>(n) ? 1.0 : 0.0;
  const boost::math::binomial alt(nd, p1);
  if (lo >= 0) power += boost::math::cdf(alt, static_cast<double>(lo));
  if (hi <= static_cast<int64_t>(n)) {
    power += boost::math::cdf(boost::math::complement(alt, static_cast<double>(hi) - 1));
  }
  return std::min(1.0, power);
}

double DetectableShiftBinomial(uint64_t n, double p0, double alpha) {
  if (n == 0 || !(p0 > 0) || !(p0 < 1)) return std::numeric_limits<double>::infinity();
  // Per direction: the smallest shift detected w.p. 0.9; where no feasible shift is, every
  // shift that exists is smaller than the direction's range and the claim holds vacuously.
  auto direction = [&](double range, double sign) {
    if (BinomialPower(n, p0, p0 + sign * range, alpha) < 0.9) return range;
    double lo = 0, hi = range;
    for (int i = 0; i < 40; ++i) {  // to 1e-12 of the range: far below any stated digit
      const double mid = (lo + hi) / 2;
      (BinomialPower(n, p0, p0 + sign * mid, alpha) < 0.9 ? lo : hi) = mid;
    }
    return hi;
  };
  return std::max(direction(p0, -1), direction(1 - p0, +1));
}

namespace {

struct Cumulants {
  double k0 = 0, k1 = 0, k2 = 0;  // K(t), K'(t), K''(t)
};

// K and its first two derivatives at t, stably (shifted exponents, centered second moment).
Cumulants Evaluate(std::span<const ScoreComponent> comps, double t) {
  Cumulants c;
  for (const ScoreComponent& comp : comps) {
    if (comp.n <= 0) continue;
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < comp.values.size(); ++i) {
      if (comp.probs[i] > 0) m = std::max(m, t * comp.values[i]);
    }
    double s0 = 0, s1 = 0;
    for (std::size_t i = 0; i < comp.values.size(); ++i) {
      if (!(comp.probs[i] > 0)) continue;
      const double w = comp.probs[i] * std::exp(t * comp.values[i] - m);
      s0 += w;
      s1 += w * comp.values[i];
    }
    const double mean = s1 / s0;
    double s2 = 0;
    for (std::size_t i = 0; i < comp.values.size(); ++i) {
      if (!(comp.probs[i] > 0)) continue;
      const double d = comp.values[i] - mean;
      s2 += comp.probs[i] * std::exp(t * comp.values[i] - m) * d * d;
    }
    c.k0 += comp.n * (std::log(s0) + m);
    c.k1 += comp.n * mean;
    c.k2 += comp.n * s2 / s0;
  }
  return c;
}

double NormalUpper(double z) { return 0.5 * std::erfc(z / std::numbers::sqrt2); }

}  // namespace

double SaddlePointTwoSided(std::span<const ScoreComponent> comps, double observed) {
  const Cumulants at0 = Evaluate(comps, 0);
  if (!(at0.k2 > 0)) return 1;
  const double sd = std::sqrt(at0.k2);
  const double z = (observed - at0.k1) / sd;
  // Near the mean the saddle-point formula divides 0 by 0; the p-value is large there anyway.
  if (std::fabs(z) < 1) return std::min(1.0, 2 * NormalUpper(std::fabs(z)));
  // The range of the sum: at (or beyond) an end, the tail is the probability of that end.
  double lo_sum = 0, hi_sum = 0, lo_log = 0, hi_log = 0;
  for (const ScoreComponent& comp : comps) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, plo = 0, phi = 0;
    for (std::size_t i = 0; i < comp.values.size(); ++i) {
      if (!(comp.probs[i] > 0)) continue;
      lo = std::min(lo, comp.values[i]);
      hi = std::max(hi, comp.values[i]);
    }
    for (std::size_t i = 0; i < comp.values.size(); ++i) {
      if (comp.probs[i] > 0 && comp.values[i] == lo) plo += comp.probs[i];
      if (comp.probs[i] > 0 && comp.values[i] == hi) phi += comp.probs[i];
    }
    lo_sum += comp.n * lo;
    hi_sum += comp.n * hi;
    lo_log += comp.n * std::log(plo);
    hi_log += comp.n * std::log(phi);
  }
  const double eps = 1e-12 * std::max(1.0, std::fabs(hi_sum) + std::fabs(lo_sum));
  if (observed >= hi_sum - eps) return std::min(1.0, 2 * std::exp(hi_log));
  if (observed <= lo_sum + eps) return std::min(1.0, 2 * std::exp(lo_log));
  // Solve K'(t) = observed (K' increases with t): bracket by doubling, then bisect.
  const double sign = observed > at0.k1 ? 1 : -1;
  double a = 0, b = 1 / sd;
  while (sign * (Evaluate(comps, sign * b).k1 - observed) < 0 && b < 1e12) {
    a = b;
    b *= 2;
  }
  for (int i = 0; i < 200 && b - a > 1e-15 * b; ++i) {
    const double mid = (a + b) / 2;
    (sign * (Evaluate(comps, sign * mid).k1 - observed) < 0 ? a : b) = mid;
  }
  const double t = sign * (a + b) / 2;
  const Cumulants c = Evaluate(comps, t);
  const double w2 = 2 * (t * observed - c.k0);
  if (!(w2 > 0) || !(c.k2 > 0)) return std::min(1.0, 2 * NormalUpper(std::fabs(z)));
  const double w = sign * std::sqrt(w2);
  const double u = t * std::sqrt(c.k2);
  const double phi = std::exp(-0.5 * w * w) / std::sqrt(2 * std::numbers::pi);
  // Lugannani-Rice: P(S >= s) = 1 - Phi(w) + phi(w) (1/u - 1/w); the lower tail mirrors it.
  const double tail =
      sign > 0 ? NormalUpper(w) + phi * (1 / u - 1 / w) : NormalUpper(-w) - phi * (1 / u - 1 / w);
  return std::clamp(2 * tail, 0.0, 1.0);
}

ScoreResult ScoreTest(std::span<const ScoreComponent> comps, double observed,
                      double mean_tolerance) {
  ScoreResult r;
  const Cumulants c = Evaluate(comps, 0);
  r.mean = c.k1;
  r.variance = c.k2;
  r.observed = observed;
  r.z = c.k2 > 0 ? (observed - c.k1) / std::sqrt(c.k2) : 0;
  if (!(mean_tolerance > 0)) {
    r.p_value = SaddlePointTwoSided(comps, observed);
  } else if (observed - mean_tolerance > c.k1) {
    // The null's distribution shifted up by the tolerance: its upper tail at the observation
    // is the unshifted one at observed - tolerance (SaddlePointTwoSided doubles the tail).
    r.p_value = SaddlePointTwoSided(comps, observed - mean_tolerance);
  } else if (observed + mean_tolerance < c.k1) {
    r.p_value = SaddlePointTwoSided(comps, observed + mean_tolerance);
  } else {
    r.p_value = 1;  // inside the admitted range of means
  }
  return r;
}

double ScoreMeanTolerance(std::span<const double> y, std::span<const long double> null,
                          std::span<const double> token_error) {
  if (token_error.empty()) return 0;
  double mean = 0, total_e = 0, shift = 0;
  for (std::size_t i = 0; i < y.size() && i < null.size(); ++i) {
    mean += static_cast<double>(null[i]) * y[i];
  }
  for (std::size_t i = 0; i < y.size() && i < token_error.size(); ++i) {
    total_e += token_error[i];
    shift += token_error[i] * std::fabs(y[i] - mean);
  }
  return total_e < 1 ? shift / (1 - total_e) : std::numeric_limits<double>::infinity();
}

ScoreSummary ScoreValues(std::span<const long double> probs) {
  ScoreSummary s;
  const std::size_t v = probs.size();
  s.score.assign(v, 0);
  s.band.assign(v, 0);
  std::map<int, std::pair<long double, long double>> bands;  // band -> (mass, sum p log p)
  std::vector<int> band_of(v, 0);
  long double mean = 0;
  for (std::size_t i = 0; i < v; ++i) {
    if (!(probs[i] > 0)) continue;
    const long double lp = std::log(probs[i]);
    s.score[i] = static_cast<double>(lp);
    int e = 0;
    const long double m = std::frexp(probs[i], &e);
    band_of[i] = m == 0.5L ? 1 - e : -e;
    auto& b = bands[band_of[i]];
    b.first += probs[i];
    b.second += probs[i] * lp;
    mean += probs[i] * lp;
  }
  long double var = 0, band_var = 0;
  for (std::size_t i = 0; i < v; ++i) {
    if (!(probs[i] > 0)) continue;
    const auto& b = bands[band_of[i]];
    const long double y = static_cast<long double>(s.score[i]) - b.second / b.first;
    s.band[i] = static_cast<double>(y);
    band_var += probs[i] * y * y;
    const long double d = static_cast<long double>(s.score[i]) - mean;
    var += probs[i] * d * d;
  }
  s.score_var = static_cast<double>(var);
  s.band_var = static_cast<double>(band_var);
  return s;
}

double DetectableMeanShift(double variance, double alpha, double mean_tolerance) {
  if (!(variance > 0)) return std::numeric_limits<double>::infinity();
  const boost::math::normal norm;
  const double za = boost::math::quantile(boost::math::complement(norm, alpha / 2));
  const double zb = boost::math::quantile(norm, 0.9);
  return (za + zb) * std::sqrt(variance) + mean_tolerance;
}

}  // namespace sampcert::properties

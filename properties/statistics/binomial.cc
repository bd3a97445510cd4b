#include "properties/statistics/binomial.h"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <cstdint>
#include <limits>
#include <utility>

namespace sampcert::properties {

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

}  // namespace sampcert::properties

#include "properties/statistics/score.h"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <utility>

namespace sampcert::properties {

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

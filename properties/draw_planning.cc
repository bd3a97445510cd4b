#include "properties/draw_planning.h"

#include <cmath>
#include <cstring>

#include "properties/statistics/binomial.h"

namespace sampcert::properties {

bool BinomialDetects(uint64_t n, double p0, double d, double alpha) {
  if (p0 - d > 0 && BinomialPower(n, p0, p0 - d, alpha) < 0.9) return false;
  if (p0 + d < 1 && BinomialPower(n, p0, p0 + d, alpha) < 0.9) return false;
  return true;
}

bool BinomialDetects(uint64_t n, double p0, double d, double alpha,
                     std::pair<double, double> interval) {
  if (interval.first == p0 && interval.second == p0) return BinomialDetects(n, p0, d, alpha);
  const auto [lo, hi] = interval;
  if (p0 - d > 0 && BinomialIntervalPower(n, lo, hi, p0 - d, alpha) < 0.9) return false;
  if (p0 + d < 1 && BinomialIntervalPower(n, lo, hi, p0 + d, alpha) < 0.9) return false;
  return true;
}

double RoundUpTwoDigits(double x) {
  if (!(x > 0) || !std::isfinite(x)) return x;
  x *= 1 + 1e-6;
  double scale = 1;
  while (x >= 100 * scale) scale *= 10;
  while (x < 10 * scale) scale /= 10;
  return std::ceil(x / scale) * scale;
}

double RoundBf16(double p) {
  float f = static_cast<float>(p);
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&f, &u, sizeof f);
  return static_cast<double>(f);
}

}  // namespace sampcert::properties

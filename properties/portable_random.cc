#include "properties/portable_random.h"

#include <cmath>
#include <limits>

namespace sampcert::properties {

double PortableExp(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.0) return std::numeric_limits<double>::infinity();
  if (x < -745.0) return 0.0;
  // x = k ln2 + r with |r| <= ln2 / 2; ln2 split so that k * kLn2Hi is exact for |k| < 2^11.
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  const double k = std::floor(x * 1.44269504088896338700 + 0.5);  // floor is exact
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  // Taylor series; |r| <= 0.35, 22 terms reach far below double's epsilon.
  double term = 1, sum = 1;
  for (int n = 1; n <= 22; ++n) {
    term = term * r / n;
    sum += term;
  }
  return std::ldexp(sum, static_cast<int>(k));  // exact scaling (ldexp rounds only subnormals)
}

double PortableLog(double x) {
  if (!(x > 0))
    return x == 0 ? -std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(x)) return x;
  int e = 0;
  double m = std::frexp(x, &e);  // exact: x = m 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2;
    --e;
  }
  // log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: the odd series converges fast.
  const double s = (m - 1) / (m + 1);
  const double s2 = s * s;
  double term = s, sum = 0;
  for (int n = 1; n <= 41; n += 2) {
    sum += term / n;
    term *= s2;
  }
  return 2 * sum + e * 0.69314718055994530942;
}

}  // namespace sampcert::properties

// Test support: a Zipf distribution, the heavy-tailed reference the statistics tests draw from.
#ifndef SAMPCERT_TESTS_SUPPORT_ZIPF_H_
#define SAMPCERT_TESTS_SUPPORT_ZIPF_H_

#include <cmath>
#include <cstddef>
#include <vector>

namespace sampcert::testing_support {

// p_i proportional to (i + 1)^-s over v tokens, normalized in long double.
inline std::vector<long double> Zipf(std::size_t v, double s) {
  std::vector<long double> p(v);
  long double z = 0;
  for (std::size_t i = 0; i < v; ++i) z += p[i] = std::pow(static_cast<long double>(i + 1), -s);
  for (auto& x : p) x /= z;
  return p;
}

}  // namespace sampcert::testing_support

#endif  // SAMPCERT_TESTS_SUPPORT_ZIPF_H_

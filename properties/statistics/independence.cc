#include "properties/statistics/independence.h"

#include <algorithm>
#include <cmath>

#include "properties/statistics/chi_square.h"

namespace sampcert::properties {

IndependenceResult GTestIndependence(std::span<const int64_t> first,
                                     std::span<const int64_t> second, std::size_t categories) {
  IndependenceResult r;
  const std::size_t k = categories;
  std::vector<double> table(k * k, 0), rows(k, 0), cols(k, 0);
  const std::size_t n = std::min(first.size(), second.size());
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t a = first[i], b = second[i];
    if (a < 0 || b < 0 || static_cast<std::size_t>(a) >= k || static_cast<std::size_t>(b) >= k) {
      continue;
    }
    table[static_cast<std::size_t>(a) * k + static_cast<std::size_t>(b)] += 1;
    rows[static_cast<std::size_t>(a)] += 1;
    cols[static_cast<std::size_t>(b)] += 1;
    ++r.pairs;
  }
  const double total = static_cast<double>(r.pairs);
  double inv_rows = 0, inv_cols = 0, used_rows = 0, used_cols = 0;
  for (std::size_t i = 0; i < k; ++i) {
    if (rows[i] > 0) {
      inv_rows += 1 / rows[i];
      used_rows += 1;
    }
    if (cols[i] > 0) {
      inv_cols += 1 / cols[i];
      used_cols += 1;
    }
  }
  r.df = (used_rows - 1) * (used_cols - 1);
  if (r.pairs == 0 || r.df < 1) {
    r.df = 0;
    return r;
  }
  double g = 0, worst_z = -1;
  for (std::size_t a = 0; a < k; ++a) {
    for (std::size_t b = 0; b < k; ++b) {
      if (rows[a] == 0 || cols[b] == 0) continue;
      const double o = table[a * k + b];
      const double e = rows[a] * cols[b] / total;
      if (o > 0) g += 2 * o * std::log(o / e);
      const double z = std::fabs(o - e) / std::sqrt(e);
      if (z > worst_z) {
        worst_z = z;
        r.worst_first = static_cast<int64_t>(a);
        r.worst_second = static_cast<int64_t>(b);
        r.worst_observed = o;
        r.worst_expected = e;
      }
    }
  }
  // Williams' correction for an r x c table (Sokal & Rohlf, Biometry, 17.6).
  const double q = 1 + (total * inv_rows - 1) * (total * inv_cols - 1) / (6 * total * r.df);
  r.statistic = std::max(0.0, g / q);
  r.p_value = ChiSquareUpper(r.statistic, r.df);
  return r;
}

}  // namespace sampcert::properties

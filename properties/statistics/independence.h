// The G-test of independence on pairs of draws (SPEC.md INDEP-1): a contingency table of the
// first and second draw of each pair, expected counts from its margins, Williams' correction.
// Its power is stated like the goodness-of-fit test's: the smallest total variation between the
// pairs' joint law and the product of its margins detected with probability 0.9 (noncentrality
// lambda = n phi^2 >= 4 n TV^2, phi^2 the chi-square divergence of the joint from the product).
#ifndef SAMPCERT_PROPERTIES_STATISTICS_INDEPENDENCE_H_
#define SAMPCERT_PROPERTIES_STATISTICS_INDEPENDENCE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sampcert::properties {

struct IndependenceResult {
  uint64_t pairs = 0;
  double statistic = 0;  // G / Williams' q
  double df = 0;         // (non-empty rows - 1) x (non-empty columns - 1)
  double p_value = 1;
  // The pair (first, second) whose count is furthest from independence, in |O - E| / sqrt(E).
  int64_t worst_first = -1, worst_second = -1;
  double worst_observed = 0, worst_expected = 0;
};

// The test on pairs (first[i], second[i]) of token ids in [0, categories); a pair with an id
// outside that range is not counted (the caller fails it exactly first). No pairs, or a margin
// with a single category, leave nothing to test: p-value 1, df 0.
IndependenceResult GTestIndependence(std::span<const int64_t> first,
                                     std::span<const int64_t> second, std::size_t categories);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_STATISTICS_INDEPENDENCE_H_

// TAIL-1 (SPEC.md sections 10 and 12): the drawn count of the tail (tokens below 1e-4 of the
// planned dominant-tail row, fixed before drawing) against its reference mass, exact binomial.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "properties/statistical_item.h"
#include "properties/statistics.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

using results::TestResult;

std::vector<TestResult> RunTail(adapters::Sampler& sampler, const std::string& sampler_arg,
                                const Plan& plan, const PlanItem& item, TestResult r,
                                const RowCase& row) {
  const Expected<ReferenceDistribution> ref = ComputeReference(row.view(), sampler.info().policies);
  long double tail_mass = 0;
  std::vector<uint8_t> in_tail(row.vocab(), 0);
  for (std::size_t i = 0; i < row.vocab(); ++i) {
    if (ref->probs[i] > 0 && ref->probs[i] < 1e-4L) {
      in_tail[i] = 1;
      tail_mass += ref->probs[i];
    }
  }
  const uint64_t n = item.draws;
  auto tokens = Draw(sampler, row, item.seed, n);
  if (!tokens.ok()) {
    FailItem(r, "sampler error: " + tokens.error().message, row, sampler_arg, plan, item);
    return {r};
  }
  uint64_t k = 0;
  for (int64_t t : *tokens) {
    k += t >= 0 && static_cast<std::size_t>(t) < row.vocab() && in_tail[t];
  }
  r.draws = n;
  r.cases = 1;
  r.p_value = BinomialTwoSided(k, n, static_cast<double>(tail_mass));
  r.observed = {static_cast<double>(k)};
  r.expected = {static_cast<double>(tail_mass) * static_cast<double>(n)};
  r.worst_error = std::fabs(
      static_cast<double>(k) / static_cast<double>(n) / static_cast<double>(tail_mass) - 1);
  if (r.p_value < item.level) {
    FailItem(r,
             fmt::format("tail of {} tokens below 1e-4: drew {} of {}, expected {:.1f} "
                         "(relative deficit {:.3g}, p = {:.3g} < level {:.3g})",
                         std::count(in_tail.begin(), in_tail.end(), 1), k, n, r.expected[0],
                         r.worst_error, r.p_value, item.level),
             row, sampler_arg, plan, item);
  }
  return {r};
}

}  // namespace sampcert::properties

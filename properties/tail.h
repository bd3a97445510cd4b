// TAIL-1's tail sets (SPEC.md section 12). The family's run and planning are declared in
// families.h.
#ifndef SAMPCERT_PROPERTIES_TAIL_H_
#define SAMPCERT_PROPERTIES_TAIL_H_

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

// TAIL-1's nested tail sets of a row, fixed from the reference before drawing: the tokens below
// 1e-4, below 1e-7, and below 2^-24 of the most probable token (where an fp32 exponential race
// loses everything), each kept when it has mass and differs from the set before it.
struct TailSet {
  std::string label;
  std::vector<uint8_t> member;  // per token
  std::size_t tokens = 0;
  double mass = 0;
};
std::vector<TailSet> TailSets(const ReferenceDistribution& ref);
// Per tail set, the interval of drawn masses the declared class admits (TOL-6, renormalized:
// AdmissibleMass with the set's summed token errors against the rest's); a point at the set's
// mass when token_error is empty (fp32).
std::vector<std::pair<double, double>> TailIntervals(const std::vector<TailSet>& sets,
                                                     std::span<const double> token_error);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_TAIL_H_

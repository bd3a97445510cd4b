// PROB-1 (with FIN-1, NORM-1, SUPP-1, SUPP-2 on the way): a sampler's reported probabilities
// against the reference, within the tolerance table of SPEC.md section 8, conditioned on the
// kept set at truncation boundaries (DIST-2's null, used for probabilities too).
#ifndef SAMPCERT_PROPERTIES_PROBABILITY_CHECK_H_
#define SAMPCERT_PROPERTIES_PROBABILITY_CHECK_H_

#include <cstddef>
#include <span>
#include <string>

#include "sampcert/reference_distribution.h"
#include "sampcert/tolerance.h"

namespace sampcert::properties {

struct ProbabilityCheck {
  bool ok = true;
  std::string property;  // the first violated property's SPEC ID, e.g. "SUPP-2"
  std::string failure;   // what was violated, on which token
  // Measured, on a pass too: the worst error relative to what is allowed (<= 1 passes), the
  // token where it happened and its relative error; total variation and its bound.
  double worst_ratio = 0;
  std::size_t worst_token = 0;
  double worst_rel_error = 0;
  double total_variation = 0;
  double tv_tolerance = 0;
};

ProbabilityCheck CheckProbabilities(const ReferenceDistribution& ref, std::span<const double> got,
                                    const AccuracyParams& accuracy);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_PROBABILITY_CHECK_H_

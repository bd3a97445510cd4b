// Mutants of the logit bias and the minimum length (SPEC section 18), each one mechanism from
// the bug threads issue 34 cites, and their correct control. A mutant is a small exact sampler
// (double probabilities, the canonical uniform, an inverse CDF in index order; no truncation, no
// penalties) that differs from the control by its defect alone: one `if (Is(...))` at the step
// it breaks. properties/bias_plan_test.cc certifies each through the planned rows.
#ifndef SAMPCERT_TESTS_MUTANTS_BIAS_MUTANTS_H_
#define SAMPCERT_TESTS_MUTANTS_BIAS_MUTANTS_H_

#include <span>

#include "sampcert/sampler_abi.h"

namespace sampcert::mutants {

enum class BiasMutant {
  kNone,               // the correct control
  kAfterTemperature,   // the bias added to x / T instead of x
  kNaiveInfinities,    // x + b as IEEE adds it: -inf + inf is NaN, a +inf logit survives a ban
  kSumInDtype,         // x + b rounded to the row's dtype (f16 overflows at 65520)
  kMinTokensOffByOne,  // the end of sequence banned while outputs <= min_tokens
};

// One row of the catalogue: the mutant, its name, and the mechanism with where it was seen.
struct BiasMutantInfo {
  BiasMutant mutant;
  const char* name;
  const char* mechanism;
};

std::span<const BiasMutantInfo> BiasMutantCatalogue();

// The mutant's function table (a built-in sampler: open it with adapters::Sampler::Open).
const sampcert_sampler_api* BiasMutantApi(BiasMutant mutant);

}  // namespace sampcert::mutants

#endif  // SAMPCERT_TESTS_MUTANTS_BIAS_MUTANTS_H_

// Mutants of the token-history penalties (SPEC section 16), each one mechanism from the bug
// threads issue 35 cites, and their correct control. A mutant is a small exact sampler (double
// probabilities, the canonical uniform, an inverse CDF in index order; no truncation) that
// differs from the control by its defect alone: one `if (Is(...))` at the step it breaks.
// properties/penalty_sequence_test.cc certifies each over sequences of calls.
#ifndef SAMPCERT_TESTS_MUTANTS_PENALTY_MUTANTS_H_
#define SAMPCERT_TESTS_MUTANTS_PENALTY_MUTANTS_H_

#include <span>

#include "sampcert/sampler_abi.h"

namespace sampcert::mutants {

enum class PenaltyMutant {
  kNone,                     // the correct control
  kStaleHistory,             // the history one step stale: the last drawn token not appended
  kPromptInOutputOnly,       // presence / frequency count the prompt though declared output-only
  kSignInverted,             // the repetition rule divides negative logits too
  kPenaltyInF16,             // the penalized logits rounded to f16
  kRepetitionPerOccurrence,  // the repetition rule applied once per occurrence (r^count)
};

// One row of the catalogue: the mutant, its name, and the mechanism with where it was seen.
struct PenaltyMutantInfo {
  PenaltyMutant mutant;
  const char* name;
  const char* mechanism;
};

std::span<const PenaltyMutantInfo> PenaltyMutantCatalogue();

// The mutant's function table (a built-in sampler: open it with adapters::Sampler::Open).
const sampcert_sampler_api* PenaltyMutantApi(PenaltyMutant mutant);

}  // namespace sampcert::mutants

#endif  // SAMPCERT_TESTS_MUTANTS_PENALTY_MUTANTS_H_

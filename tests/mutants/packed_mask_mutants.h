// Mutants of the packed mask (SPEC section 19), each one misreading of the xgrammar / llguidance
// bitmask layout, and their correct control. A mutant is a small exact sampler (double
// probabilities, the canonical uniform, an inverse CDF in index order; no truncation) that
// differs from the control by its reading of the words alone: one `if (Is(...))` where it reads
// them. properties/packed_mask_plan_test.cc certifies each through the planned rows.
#ifndef SAMPCERT_TESTS_MUTANTS_PACKED_MASK_MUTANTS_H_
#define SAMPCERT_TESTS_MUTANTS_PACKED_MASK_MUTANTS_H_

#include <span>

#include "sampcert/sampler_abi.h"

namespace sampcert::mutants {

enum class PackedMaskMutant {
  kNone,              // the correct control
  kBitOrderReversed,  // token 32 j + i read from bit 31 - i of word j (most significant first)
  kTailWordSkipped,   // only the floor(V / 32) whole words applied: the last tokens unmasked
  kPaddingCounted,    // the empty-support check counts set bits over whole words (padding too)
};

// One row of the catalogue: the mutant, its name, and the mechanism.
struct PackedMaskMutantInfo {
  PackedMaskMutant mutant;
  const char* name;
  const char* mechanism;
};

std::span<const PackedMaskMutantInfo> PackedMaskMutantCatalogue();

// The mutant's function table (a built-in sampler: open it with adapters::Sampler::Open).
const sampcert_sampler_api* PackedMaskMutantApi(PackedMaskMutant mutant);

}  // namespace sampcert::mutants

#endif  // SAMPCERT_TESTS_MUTANTS_PACKED_MASK_MUTANTS_H_

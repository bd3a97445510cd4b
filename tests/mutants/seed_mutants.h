// Mutants of per-request seeds (SPEC section 17), each one mechanism from the bug threads issue
// 34 cites, and their correct control. A mutant is a small exact sampler (the reference's
// probabilities, the canonical uniform, an inverse CDF in index order; no truncation) that
// differs from the control by its defect alone: the seed that keys a row's draws.
// properties/seed_batches_test.cc certifies each with the SEED properties of generated rows.
#ifndef SAMPCERT_TESTS_MUTANTS_SEED_MUTANTS_H_
#define SAMPCERT_TESTS_MUTANTS_SEED_MUTANTS_H_

#include <span>

#include "sampcert/sampler_abi.h"

namespace sampcert::mutants {

enum class SeedMutant {
  kNone,             // the correct control
  kBatchGenerator,   // any unseeded row in the batch: every row draws from the call's generator
  kFirstSeedShared,  // every seeded row draws from the batch's first seeded row's seed
  kSeedIgnored,      // the row's seed ignored: every row draws by the call's seed
  kSlotKeyed,        // a seeded row keyed by its slot in the batch instead of its row id
};

// One row of the catalogue: the mutant, its name, and the mechanism with where it was seen.
struct SeedMutantInfo {
  SeedMutant mutant;
  const char* name;
  const char* mechanism;
};

std::span<const SeedMutantInfo> SeedMutantCatalogue();

// The mutant's function table (a built-in sampler: open it with adapters::Sampler::Open).
const sampcert_sampler_api* SeedMutantApi(SeedMutant mutant);

}  // namespace sampcert::mutants

#endif  // SAMPCERT_TESTS_MUTANTS_SEED_MUTANTS_H_

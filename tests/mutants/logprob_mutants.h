// Mutants of the log-probabilities returned with the draws (SPEC section 20), each one mechanism
// from the engines' logprob threads, and their correct control. A mutant is a small exact
// sampler (double probabilities, the canonical uniform, an inverse CDF in index order; a mask and
// top-k, keep-all) declaring all three modes, whose draws are always right: it differs from the
// control only in the log-probabilities it writes, by one `if (Is(...))`.
// properties/logprob_plan_test.cc certifies each through the planned rows.
#ifndef SAMPCERT_TESTS_MUTANTS_LOGPROB_MUTANTS_H_
#define SAMPCERT_TESTS_MUTANTS_LOGPROB_MUTANTS_H_

#include <span>

#include "sampcert/sampler_abi.h"

namespace sampcert::mutants {

enum class LogprobMutant {
  kNone,               // the correct control
  kPreTemperature,     // scaled and processed taken from the logits before the temperature
  kScaledAsProcessed,  // processed returns the untruncated (scaled) log-probabilities
  kArgmaxLogprob,      // every draw comes with the most probable token's log-probability
  kTopUnmasked,        // the top-n list ranks the raw logits: masked tokens listed, finite
};

struct LogprobMutantInfo {
  LogprobMutant mutant;
  const char* name;
  const char* mechanism;
};

std::span<const LogprobMutantInfo> LogprobMutantCatalogue();

// The mutant's function table (a built-in sampler: open it with adapters::Sampler::Open).
const sampcert_sampler_api* LogprobMutantApi(LogprobMutant mutant);

}  // namespace sampcert::mutants

#endif  // SAMPCERT_TESTS_MUTANTS_LOGPROB_MUTANTS_H_

// The deterministic properties of SPEC.md section 10 on one generated row. Which properties a
// row is checked for (its keys) follows from the row and the sampler's declaration alone, never
// from what the sampler does: a property an earlier failure kept from running is reported as not
// reached, not left out. So the parent process knows, from the plan, every result an item must
// return (a worker that returns fewer or more has been tampered with or has crashed).
//
// One file per property family: case_validity.cc (INV-ERR-1, VALID-1), case_support.cc (RANGE-1,
// SUPP-1, SUPP-2, LIM-1, LIM-2), case_probabilities.cc (FIN-1, NORM-1, PROB-1, SHIFT-1, PERM-1),
// case_invariance.cc (DET-1, DET-2, DET-3, BATCH-1, BATCH-2), case_seeds.cc (SEED-1, SEED-2,
// SEED-3).
#ifndef SAMPCERT_PROPERTIES_CASE_CHECK_H_
#define SAMPCERT_PROPERTIES_CASE_CHECK_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "adapters/sampler.h"
#include "properties/row_case.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

inline constexpr uint64_t kDrawsPerCase = 64;

// One property's verdict on one case.
struct Outcome {
  std::string property;
  bool ok = true;
  bool reached = true;  // false: an earlier failure on this case kept it from running
  std::string message;
  double error = 0;  // the property's measured error (relative to allowed where that applies)
  // How it failed, where a property fails in ways a shrink must not trade for one another
  // (INV-ERR-1: a token or another error, for the error SPEC wants); empty elsewhere.
  std::string kind = {};
};

// What a case is checked for, from the row and the declaration alone.
struct CaseKeys {
  bool valid = false;  // the reference accepts the row (else: INV-ERR-1 only)
  std::vector<std::string> properties;
};
CaseKeys KeysForCase(const RowCase& row, const adapters::SamplerInfo& info);

// Called with a valid case's reference and its kDrawsPerCase draws (DIST-3 pools them).
using DrawsHook = std::function<void(const ReferenceDistribution&, const std::vector<int64_t>&)>;

// Runs every property of the case's keys; returns exactly one outcome per key, in key order.
// `on_draws`, when given, sees the draws of a valid case that returned tokens.
std::vector<Outcome> CheckCase(adapters::Sampler& sampler, const RowCase& row, uint64_t seed,
                               const DrawsHook* on_draws = nullptr);

// --- Internal: the property families, sharing one context per case. ----------------------------
struct CaseContext {
  adapters::Sampler& sampler;
  const RowCase& row;
  uint64_t seed;
  const ReferenceDistribution& ref;
  std::vector<int64_t> tokens;               // the case's kDrawsPerCase draws
  std::optional<std::vector<double>> probs;  // the sampler's probabilities, when declared
  std::map<std::string, Outcome> outcomes;   // by property; pre-filled "not reached"
  void Set(const std::string& property, bool ok, std::string message = "", double error = 0);
  // Marks a failure (keeps the first message) without overwriting an earlier failure.
  void Fail(const std::string& property, std::string message);
};

// Families (each fills its properties in ctx.outcomes).
bool CheckValid(CaseContext& ctx);  // VALID-1; false: the sampler gave no tokens
void CheckSupportAndLimits(CaseContext& ctx);
bool CheckProbabilityFamily(CaseContext& ctx);  // false: no probabilities came back
void CheckDeterminism(CaseContext& ctx);
void CheckBatch(CaseContext& ctx);
void CheckMixedBatches(CaseContext& ctx);  // BATCH-2
void CheckSeeds(CaseContext& ctx);         // SEED-1, SEED-2, SEED-3
// INV-ERR-1 on an invalid row.
Outcome CheckInvalid(adapters::Sampler& sampler, const RowCase& row, uint64_t seed,
                     const Error& expected);

// Keys of each family, from the row and declaration.
std::vector<std::string> SupportKeys(const ReferenceDistribution& ref);
std::vector<std::string> ProbabilityKeys(const RowCase& row, const adapters::SamplerInfo& info);
std::vector<std::string> InvarianceKeys(const RowCase& row, const ReferenceDistribution& ref,
                                        const adapters::SamplerInfo& info);
std::vector<std::string> SeedKeys(const RowCase& row, const adapters::SamplerInfo& info);

// Whether a sampler returned the same probabilities twice (BATCH-1, BATCH-2): equal values, a NaN
// matching a NaN (its payload aside). A NaN a sampler returns for a row is FIN-1's failure on that
// row; the same NaN in a batch and alone is no batch dependence (llama.cpp returns NaN for every
// token at T = 0 after top-p, alone and batched alike).
bool SameProbabilities(std::span<const double> a, std::span<const double> b);

// Row transformations the invariance properties use.
RowCase Reversed(const RowCase& row);
std::optional<RowCase> Shifted(const RowCase& row);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_CASE_CHECK_H_

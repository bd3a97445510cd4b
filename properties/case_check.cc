#include "properties/case_check.h"

#include <algorithm>

#include "sampcert/sampler_abi.h"

namespace sampcert::properties {

void CaseContext::Set(const std::string& property, bool ok, std::string message, double error) {
  Outcome& o = outcomes.at(property);  // a property outside the case's keys is a bug here
  o.reached = true;
  o.ok = ok;
  o.message = ok ? "" : std::move(message);
  o.error = error;
}

void CaseContext::Fail(const std::string& property, std::string message) {
  Outcome& o = outcomes.at(property);
  if (o.reached && !o.ok) return;
  o.reached = true;
  o.ok = false;
  o.message = std::move(message);
}

CaseKeys KeysForCase(const RowCase& row, const adapters::SamplerInfo& info) {
  CaseKeys keys;
  const Expected<ReferenceDistribution> ref = ComputeReference(row.view(), info.policies);
  if (!ref.ok()) {
    keys.properties = {"INV-ERR-1"};
    return keys;
  }
  keys.valid = true;
  keys.properties = {"VALID-1"};
  for (std::string& k : SupportKeys(*ref)) keys.properties.push_back(std::move(k));
  for (std::string& k : ProbabilityKeys(row, info)) keys.properties.push_back(std::move(k));
  for (std::string& k : InvarianceKeys(row, *ref, info)) keys.properties.push_back(std::move(k));
  for (std::string& k : SeedKeys(row, info)) keys.properties.push_back(std::move(k));
  return keys;
}

std::vector<Outcome> CheckCase(adapters::Sampler& sampler, const RowCase& row, uint64_t seed,
                               const DrawsHook* on_draws) {
  const adapters::SamplerInfo& info = sampler.info();
  const Expected<ReferenceDistribution> ref = ComputeReference(row.view(), info.policies);
  if (!ref.ok()) return {CheckInvalid(sampler, row, seed, ref.error())};

  CaseContext ctx{sampler, row, seed, *ref, {}, std::nullopt, {}};
  const CaseKeys keys = KeysForCase(row, info);
  for (const std::string& k : keys.properties) {
    ctx.outcomes[k] = Outcome{k, true, false, "not reached: an earlier check of this case failed"};
  }
  if (CheckValid(ctx)) {
    if (on_draws != nullptr) (*on_draws)(*ref, ctx.tokens);
    CheckSupportAndLimits(ctx);
    CheckDeterminism(ctx);
    CheckProbabilityFamily(ctx);
    CheckBatch(ctx);
    CheckMixedBatches(ctx);
    CheckSeeds(ctx);
  }
  std::vector<Outcome> out;
  for (const std::string& k : keys.properties) out.push_back(ctx.outcomes.at(k));
  return out;
}

}  // namespace sampcert::properties

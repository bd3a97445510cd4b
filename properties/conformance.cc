#include "properties/conformance.h"

#include <fmt/format.h>

#include "properties/generated_rows.h"
#include "properties/statistical_item.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

std::optional<RowCase> PlannedRow(const PlanItem& item, uint32_t capabilities) {
  return PlannedRowByName(DTypeFromName(item.dtype), item.name, capabilities);
}

std::string StatisticalProperty(const PlanItem& item, const std::optional<RowCase>& row) {
  if (item.kind == "tail") return "TAIL-1";
  const bool truncated = row && (row->top_k != 0 || row->top_p != 1.0f || row->min_p != 0.0f);
  return truncated ? "DIST-2" : "DIST-1";
}

Expected<std::vector<int64_t>> Draw(adapters::Sampler& sampler, const RowCase& row, uint64_t seed,
                                    uint64_t n) {
  std::vector<int64_t> all;
  all.reserve(n);
  const uint64_t chunk = 1 << 20;
  for (uint64_t first = 0; first < n; first += chunk) {
    auto got = sampler.Sample(OneRow(row), seed, first, std::min(chunk, n - first));
    if (!got.ok()) return got.error();
    all.insert(all.end(), got->begin(), got->end());
  }
  return all;
}

void FailItem(TestResult& r, std::string message, const RowCase& row,
              const std::string& sampler_arg, const Plan& plan, const PlanItem& item) {
  r.status = Status::kFail;
  RowCase named = row;  // a planned row's file says which planned row it is
  if (named.family.empty()) named.family = item.name;
  r.failure = Failure{std::move(message),
                      Describe(row),
                      Describe(row),
                      fmt::format("sampcert run --sampler {} --profile {} --seed {} --item {}",
                                  sampler_arg, plan.profile.name, plan.seed, item.Id()),
                      RowFileJson(named),
                      ""};
}

const std::vector<std::pair<std::string, std::string>>& PropertyCatalog() {
  static const std::vector<std::pair<std::string, std::string>> catalog = {
      {"FIN-1", "every returned probability is finite and in [0, 1]"},
      {"NORM-1", "returned probabilities sum to 1 within the tolerance"},
      {"RANGE-1", "every token id is in [0, V)"},
      {"SUPP-1", "no draw and no mass outside the support"},
      {"SUPP-2", "no must-drop token drawn; no must-keep token at probability 0"},
      {"LIM-1", "T = 0 draws the arg-max set, per the greedy tie-break"},
      {"LIM-2", "+inf logits win, uniformly"},
      {"INV-ERR-1", "invalid input returns the right error and no token"},
      {"VALID-1", "valid input returns tokens, never an error"},
      {"SHIFT-1", "adding a constant to the logits changes no probability"},
      {"PERM-1", "permuting the tokens permutes the probabilities"},
      {"BATCH-1", "a row's results do not depend on the rest of the batch"},
      {"DET-1", "same seed and row id, same tokens"},
      {"DET-2", "different seeds, different streams"},
      {"PROB-1", "probabilities within the tolerance table of the reference"},
      {"DIST-1", "draws follow the reference distribution (G-test)"},
      {"DIST-2", "draws at truncation boundaries follow the reference, given the kept set"},
      {"DIST-3", "the generated rows' draws, pooled, follow their references (PIT, score test)"},
      {"TAIL-1", "each nested tail set's drawn count matches its reference mass (binomial)"},
      {"DEV-1", "a declared greedy threshold is reported as a Warning with its size"},
      {"ABI-1", "buffers are used as the ABI header says (no write to inputs or past outputs)"},
  };
  return catalog;
}

std::vector<TestResult> RunItem(adapters::Sampler& sampler, const std::string& sampler_arg,
                                const Plan& plan, const PlanItem& item, int64_t only_case) {
  if (item.kind == "deterministic") {
    return RunGeneratedRows(sampler, sampler_arg, plan, item, only_case);
  }
  if (item.kind == "deviation") return RunDeviation(sampler, item);
  const adapters::SamplerInfo& info = sampler.info();
  const std::optional<RowCase> row = PlannedRow(item, info.capabilities);
  TestResult r;
  r.property = StatisticalProperty(item, row);
  r.dtype = item.dtype;
  r.family = item.name;
  r.level = item.level;
  if (!row) {
    r.status = Status::kNotSupported;
    r.note = "planned row not applicable to the declared capabilities";
    return {r};
  }
  r.worst_input = Describe(*row);
  r.worst_temperature = row->temperature;
  const Expected<ReferenceDistribution> ref = ComputeReference(row->view(), info.policies);
  if (!ref.ok()) {
    r.status = Status::kNotSupported;
    r.note = "planned row invalid under the declared policies: " + ref.error().message;
    return {r};
  }
  if (item.kind == "tail") return RunTail(sampler, sampler_arg, plan, item, std::move(r), *row);
  return RunDistribution(sampler, sampler_arg, plan, item, std::move(r), *row);
}

std::vector<std::pair<std::string, std::string>> ExpectedResultKeys(
    const Plan& plan, const PlanItem& item, const adapters::SamplerInfo& info, int64_t only_case) {
  if (item.kind == "deterministic") return GeneratedRowKeys(plan, item, info, only_case);
  if (item.kind == "deviation") return {{"DEV-1", "greedy_threshold"}};
  return {{StatisticalProperty(item, PlannedRow(item, info.capabilities)), item.name}};
}

}  // namespace sampcert::properties

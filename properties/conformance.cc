#include "properties/conformance.h"

#include <fmt/format.h>

#include <set>

#include "properties/families.h"
#include "properties/rewritten_row.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

const std::vector<std::pair<std::string, std::string>>& PropertyCatalog() {
  static const std::vector<std::pair<std::string, std::string>> catalog = [] {
    std::vector<std::pair<std::string, std::string>> out;
    std::set<std::string_view> seen;
    for (const Family& f : FamilyTable()) {
      for (const PropertyLine& p : f.properties) {
        if (seen.insert(p.id).second) out.emplace_back(p.id, p.summary);
      }
    }
    // The runner's own property, on every item.
    out.emplace_back(
        "ABI-1", "buffers are used as the ABI header says (no write to inputs or past outputs)");
    return out;
  }();
  return catalog;
}

std::vector<TestResult> RunItem(adapters::Sampler& sampler, const std::string& sampler_arg,
                                const Plan& plan, const PlanItem& item, int64_t only_case) {
  const Family& family = FamilyOf(item.kind);
  ItemRun run{sampler, sampler_arg, plan, item, only_case, nullptr, {}};
  if (family.placement != Placement::kPerPlannedRow) return family.run(run);
  // A planned row: the result skeleton, and NotSupported where the declaration lacks the row
  // or the row is invalid under the declared policies.
  const adapters::SamplerInfo& info = sampler.info();
  const std::optional<RowCase> row =
      PlannedRowByName(DTypeFromName(item.dtype), item.name, info.capabilities);
  TestResult& r = run.base;
  r.property = ExpectedResultKeys(plan, item, info, only_case).front().first;
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
  // A row whose request is invalid whatever the policies (INV-8, INV-9) is planned as such: its
  // family checks the sampler's error (INV-ERR-1).
  if (!ref.ok() && InvalidRequest(*row).code == ErrorCode::kOk) {
    r.status = Status::kNotSupported;
    r.note = "planned row invalid under the declared policies: " + ref.error().message;
    return {r};
  }
  run.row = &*row;
  return family.run(run);
}

std::vector<std::pair<std::string, std::string>> ExpectedResultKeys(
    const Plan& plan, const PlanItem& item, const adapters::SamplerInfo& info, int64_t only_case) {
  return FamilyOf(item.kind).keys(plan, item, info, only_case);
}

}  // namespace sampcert::properties

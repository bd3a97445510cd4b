#include "properties/families.h"

#include <fmt/format.h>

#include "properties/plan.h"

namespace sampcert::properties {

const Family& FamilyOf(ItemKind kind) {
  for (const Family& f : FamilyTable()) {
    if (f.kind == kind) return f;
  }
  // Unreachable while families_test passes (every ItemKind has its row).
  return FamilyTable().front();
}

Expected<ItemKind> ItemKindFromName(std::string_view name) {
  for (const Family& f : FamilyTable()) {
    if (f.name == name) return f.kind;
  }
  return Error{ErrorCode::kInvalidArgument, fmt::format("unknown plan item kind '{}'", name)};
}

ResultKeys PlannedRowKeys(const Plan&, const PlanItem& item, const adapters::SamplerInfo& info,
                          int64_t) {
  const Family& family = FamilyOf(item.kind);
  const std::optional<RowCase> row =
      PlannedRowByName(DTypeFromName(item.dtype), item.name, info.capabilities);
  // A row the declaration lacks is reported NotSupported under the property of an untruncated
  // row of the family.
  return {{std::string(family.row_property(row ? *row : RowCase{})), item.name}};
}

}  // namespace sampcert::properties

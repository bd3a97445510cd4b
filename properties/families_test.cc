// The family table (families.h) is complete and consistent: every ItemKind has exactly one row,
// names are unique and parse back, each row has what its placement needs, and the plan's items,
// keys and catalog all come from it.
#include "properties/families.h"

#include <gtest/gtest.h>

#include <set>

#include "properties/conformance.h"
#include "properties/plan.h"
#include "properties/reproduction.h"
#include "registry/open_sampler.h"

namespace sampcert::properties {
namespace {

constexpr ItemKind kAllKinds[] = {
    ItemKind::kGeneratedRows,  ItemKind::kDistribution, ItemKind::kTail,
    ItemKind::kPrecisionProbe, ItemKind::kDeviation,    ItemKind::kVerify,
    ItemKind::kIndependence,   ItemKind::kPenalties,    ItemKind::kLogitBias,
    ItemKind::kPackedMask,     ItemKind::kLogprobs};

TEST(Families, EveryKindHasExactlyOneRow) {
  EXPECT_EQ(FamilyTable().size(), std::size(kAllKinds));
  for (ItemKind k : kAllKinds) {
    int rows = 0;
    for (const Family& f : FamilyTable()) rows += f.kind == k;
    EXPECT_EQ(rows, 1) << static_cast<int>(k);
    EXPECT_EQ(FamilyOf(k).kind, k);
  }
}

TEST(Families, NamesAreUniqueAndParseBack) {
  std::set<std::string_view> names;
  for (const Family& f : FamilyTable()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    auto k = ItemKindFromName(f.name);
    ASSERT_TRUE(k.ok()) << k.error().message;
    EXPECT_EQ(*k, f.kind);
  }
  auto unknown = ItemKindFromName("distributon");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("'distributon'"), std::string::npos);
}

TEST(Families, EachRowHasWhatItsPlacementNeeds) {
  for (const Family& f : FamilyTable()) {
    ASSERT_NE(f.run, nullptr) << f.name;
    ASSERT_NE(f.keys, nullptr) << f.name;
    EXPECT_FALSE(f.crash_property.empty()) << f.name;
    if (f.placement == Placement::kPerPlannedRow) {
      ASSERT_NE(f.rows, nullptr) << f.name;
      ASSERT_NE(f.row_property, nullptr) << f.name;
      EXPECT_FALSE(f.rows(DType::kF32, 0xffffffffu).empty()) << f.name;
    } else {
      ASSERT_NE(f.applies, nullptr) << f.name;
    }
    if (f.statistical) {
      EXPECT_NE(f.plan, nullptr) << f.name;
    }
    if (f.drawn) {
      EXPECT_TRUE(f.statistical) << f.name;
    }
  }
}

// The plan's items come from the table: every kind that applies to stable_cpu's declaration is
// there, planned-row items name rows of their own family, and every item's keys, run through
// the table, are non-empty; the catalog lists every property a family reports.
TEST(Families, ThePlanAndItsKeysFollowTheTable) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  Profile quick;
  ASSERT_TRUE(ProfileByName("quick", &quick));
  adapters::SamplerInfo info = (*s)->info();
  info.policies.greedy_threshold = 1e-5f;  // so that the deviation family applies
  const Plan plan = MakePlan(quick, info, 1);
  std::set<ItemKind> seen;
  for (const PlanItem& it : plan.items) {
    seen.insert(it.kind);
    const Family& f = FamilyOf(it.kind);
    if (f.placement == Placement::kPerPlannedRow) {
      bool own = false;
      for (const auto& [name, row] : f.rows(DTypeFromName(it.dtype), info.capabilities)) {
        own |= name == it.name;
      }
      EXPECT_TRUE(own) << it.Id() << " is not a row of " << f.name;
    }
    EXPECT_FALSE(ExpectedResultKeys(plan, it, info).empty()) << it.Id();
  }
  EXPECT_EQ(seen.size(), std::size(kAllKinds));
  std::set<std::string> catalog;
  for (const auto& [id, what] : PropertyCatalog()) catalog.insert(id);
  for (const Family& f : FamilyTable()) {
    for (const PropertyLine& p : f.properties) EXPECT_TRUE(catalog.contains(std::string(p.id)));
  }
  EXPECT_TRUE(catalog.contains("ABI-1"));
}

// One reproduction command: generated rows by --dtype (and --case), the rest by --item, and
// --max-draws and --draw-time whenever the plan has them.
TEST(Families, OneReproductionCommandForEveryItem) {
  Plan plan;
  ASSERT_TRUE(ProfileByName("quick", &plan.profile));
  plan.seed = 7;
  PlanItem gen;
  gen.kind = ItemKind::kGeneratedRows;
  gen.dtype = "f16";
  PlanItem dist;
  dist.kind = ItemKind::kDistribution;
  dist.dtype = "f32";
  dist.name = "flat_V64";
  EXPECT_EQ(ReproductionCommand("'x.so'", plan, gen, 3),
            "sampcert run --sampler 'x.so' --profile quick --seed 7 --dtype f16 --case 3");
  EXPECT_EQ(ReproductionCommand("'x.so'", plan, gen),
            "sampcert run --sampler 'x.so' --profile quick --seed 7 --dtype f16");
  plan.options.max_draws = 5000;
  EXPECT_EQ(ReproductionCommand("'x.so'", plan, dist),
            "sampcert run --sampler 'x.so' --profile quick --seed 7 --max-draws 5000 --item "
            "f32/flat_V64");
  plan.options.draw_time_s = 150.5;
  EXPECT_EQ(ReproductionCommand("'x.so'", plan, dist),
            "sampcert run --sampler 'x.so' --profile quick --seed 7 --max-draws 5000 --draw-time "
            "150.5 --item f32/flat_V64");
}

}  // namespace
}  // namespace sampcert::properties

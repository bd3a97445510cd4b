// The plan is a function of (profile, declaration, seed) alone (REPRO-1): its version changes
// with anything it fixes, the generated rows are pinned bit for bit, and the result keys of an
// item are known before it runs, whatever the sampler does.
#include "properties/plan.h"

#include <gtest/gtest.h>

#include <set>

#include "properties/conformance.h"
#include "properties/generators.h"
#include "properties/portable_random.h"
#include "registry/open_sampler.h"

namespace sampcert::properties {
namespace {

TEST(Plan, VersionFollowsWhatThePlanFixes) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  Profile quick, standard;
  ASSERT_TRUE(ProfileByName("quick", &quick));
  ASSERT_TRUE(ProfileByName("standard", &standard));
  const adapters::SamplerInfo& info = (*s)->info();
  const std::string v = PlanVersion(MakePlan(quick, info, 1));
  EXPECT_EQ(v.size(), 16u);
  EXPECT_EQ(v, PlanVersion(MakePlan(quick, info, 1)));
  EXPECT_NE(v, PlanVersion(MakePlan(quick, info, 2)));
  EXPECT_NE(v, PlanVersion(MakePlan(standard, info, 1)));
  adapters::SamplerInfo fewer = info;
  fewer.capabilities &= ~SAMPCERT_CAP_TOP_P;
  EXPECT_NE(v, PlanVersion(MakePlan(quick, fewer, 1)));
  // Every statistical item has its draws and seed in the plan.
  for (const PlanItem& it : MakePlan(standard, info, 1).items) {
    if (it.kind == "distribution" || it.kind == "tail") {
      EXPECT_GE(it.draws, 4096u) << it.Id();
      EXPECT_NE(it.seed, 0u) << it.Id();
    }
  }
}

// Generated rows from the raw 64-bit stream with portable mappings only: these digests are the
// same on every machine and standard library. A change here changes every plan's rows: bump
// "plan-v1" in PlanVersion with it, and regenerate the expectations that depend on rows.
TEST(Plan, GeneratedAndPlannedRowsArePinned) {
  uint64_t h = 0;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    GenConfig cfg{d, 0xffffffffu, 4096, 0.15};
    const auto gen = GenRow(cfg);
    for (int i = 0; i < 50; ++i) {
      const RowCase r = gen(rc::Random(Mix(7, static_cast<uint64_t>(i))), 100).value();
      h = Mix(h, FixedHash(Describe(r)));
      for (uint32_t b : r.bits32) h = Mix(h, b);
      for (uint16_t b : r.bits16) h = Mix(h, b);
    }
    for (const auto& [name, r] : PlannedRows(d, 0xffffffffu)) {
      h = Mix(h, FixedHash(name));
      for (uint32_t b : r.bits32) h = Mix(h, b);
      for (uint16_t b : r.bits16) h = Mix(h, b);
    }
  }
  EXPECT_EQ(h, 77455105667120741u) << "row digest " << h;
}

TEST(PortableMath, ExpAndLogAreAccurate) {
  for (double x : {-700.0, -20.5, -1.0, -1e-9, 0.0, 0.3, 1.0, 2.302585092994045684, 88.7, 700.0}) {
    EXPECT_NEAR(PortableExp(x) / std::exp(x), 1.0, 1e-14) << x;
  }
  for (double x : {1e-300, 1e-8, 0.5, 0.70710678, 1.0, 1.5, 3.0, 1e10, 1e300}) {
    EXPECT_NEAR(PortableLog(x), std::log(x), 1e-14 * std::max(1.0, std::fabs(std::log(x)))) << x;
  }
  EXPECT_EQ(PortableLog(1.0), 0.0);
  EXPECT_EQ(FixedHash(""), 0xcbf29ce484222325ULL);   // FNV-1a's offset basis
  EXPECT_EQ(FixedHash("a"), 0xaf63dc4c8601ec8cULL);  // FNV-1a("a"), the published test vector
}

// Whatever the sampler does (correct, wrong, erroring), an item returns exactly the keys the
// plan predicts.
TEST(Plan, ResultKeysAreKnownBeforeTheItemRuns) {
  Profile quick;
  ASSERT_TRUE(ProfileByName("quick", &quick));
  quick.valid_cases_per_dtype = 60;
  for (const char* name : {"stable_cpu", "naive", "floor_fix"}) {
    auto s = registry::OpenSampler(name);
    ASSERT_TRUE(s.ok()) << s.error().message;
    const Plan plan = MakePlan(quick, (*s)->info(), 5);
    for (const PlanItem& item : plan.items) {
      std::set<std::pair<std::string, std::string>> got;
      for (const TestResult& r : RunItem(**s, name, plan, item)) {
        EXPECT_TRUE(got.emplace(r.property, r.family).second)
            << name << " " << item.Id() << ": duplicate " << r.property << "/" << r.family;
      }
      const auto want = ExpectedResultKeys(plan, item, (*s)->info());
      EXPECT_EQ(std::vector(got.begin(), got.end()), want) << name << " " << item.Id();
    }
  }
}

}  // namespace
}  // namespace sampcert::properties

// The items of one planned-row family in a sampler's quick plan, each run by RunItem exactly as
// a worker runs it: what a family's plan test (penalty_plan_test, bias_plan_test) checks a
// sampler or a mutant against, at a plan seed.
#ifndef SAMPCERT_TESTS_SUPPORT_FAMILY_ITEMS_H_
#define SAMPCERT_TESTS_SUPPORT_FAMILY_ITEMS_H_

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <tuple>

#include "adapters/sampler.h"
#include "properties/conformance.h"
#include "properties/plan.h"

namespace sampcert::testing_support {

struct FamilyRun {
  int items = 0;
  int passed = 0;
  std::string first_failure;  // "" when no item failed
  double seconds = 0;
};

// The `kind` items of the sampler's quick plan at `seed`. Samplers sharing one declaration (the
// mutants of a catalogue) share one plan per (declaration, seed).
inline FamilyRun RunFamilyItems(adapters::Sampler& sampler, const std::string& arg, uint64_t seed,
                                properties::ItemKind kind) {
  const auto start = std::chrono::steady_clock::now();
  static std::map<std::tuple<std::string, uint32_t, uint64_t>, properties::Plan> plans;
  const adapters::SamplerInfo& info = sampler.info();
  auto [at, made] = plans.try_emplace({info.name, info.capabilities, seed});
  if (made) {
    properties::Profile quick;
    EXPECT_TRUE(properties::ProfileByName("quick", &quick));
    at->second = properties::MakePlan(quick, info, seed);
  }
  const properties::Plan& plan = at->second;
  FamilyRun out;
  for (const properties::PlanItem& item : plan.items) {
    if (item.kind != kind) continue;
    ++out.items;
    for (const results::TestResult& r : properties::RunItem(sampler, arg, plan, item, -1)) {
      if (r.status == results::Status::kPass) {
        ++out.passed;
      } else if (out.first_failure.empty()) {
        out.first_failure =
            fmt::format("{} {} on {}: {} {}", r.property, r.dtype, r.family,
                        results::StatusName(r.status), r.failure ? r.failure->message : r.note);
      }
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace sampcert::testing_support

#endif  // SAMPCERT_TESTS_SUPPORT_FAMILY_ITEMS_H_

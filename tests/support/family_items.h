// The items of one planned-row family in a sampler's quick plan, each run by RunItem exactly as
// a worker runs it: what a family's plan test (penalty_plan_test, bias_plan_test) checks a
// sampler or a mutant against, at a plan seed.
#ifndef SAMPCERT_TESTS_SUPPORT_FAMILY_ITEMS_H_
#define SAMPCERT_TESTS_SUPPORT_FAMILY_ITEMS_H_

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <span>
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

// Each mutant of a catalogue (rows with .mutant and .name; the first, `none`, is the correct
// control) at plan seeds 1, 2 and 3: the control passes all `items` items of the family, every
// other mutant fails at least one at each seed. With `draws_only`, each is run a second time
// with its probabilities capability removed, so that its draws alone must show it.
inline const sampcert_sampler_api* g_mutant_inner = nullptr;
inline int32_t MutantInfoWithoutProbabilities(sampcert_sampler_info* info, sampcert_error* error) {
  const int32_t rc = g_mutant_inner->get_info(info, error);
  info->capabilities &= ~SAMPCERT_CAP_PROBABILITIES;
  return rc;
}
template <typename Info, typename ApiOf>
void ExpectMutantsCaught(std::span<const Info> catalogue, ApiOf api_of, properties::ItemKind kind,
                         int items, bool draws_only) {
  for (const Info& info : catalogue) {
    for (const bool without_probabilities : {false, true}) {
      if (without_probabilities && !draws_only) continue;
      g_mutant_inner = api_of(info.mutant);
      sampcert_sampler_api api = *g_mutant_inner;
      if (without_probabilities) api.get_info = MutantInfoWithoutProbabilities;
      auto opened = adapters::Sampler::Open(&api, nullptr);
      ASSERT_TRUE(opened.ok()) << opened.error().message;
      adapters::Sampler& s = *opened.value();
      ASSERT_EQ(s.info().Has(SAMPCERT_CAP_PROBABILITIES), !without_probabilities);
      const bool control = &info == &catalogue.front();
      for (uint64_t seed : {1, 2, 3}) {
        const FamilyRun r = RunFamilyItems(s, info.name, seed, kind);
        ASSERT_EQ(r.items, items) << info.name;
        if (control) {
          EXPECT_EQ(r.passed, r.items) << "the control, seed " << seed << ": " << r.first_failure;
        } else {
          EXPECT_NE(r.first_failure, "") << info.name << " not caught at seed " << seed
                                         << (without_probabilities ? " by its draws" : "");
        }
        std::printf("[%s%s] seed %llu: %d of %d items failed, %.2f s; first: %s\n", info.name,
                    without_probabilities ? ", draws only" : "",
                    static_cast<unsigned long long>(seed), r.items - r.passed, r.items, r.seconds,
                    r.first_failure.empty() ? "none" : r.first_failure.c_str());
      }
    }
  }
}

}  // namespace sampcert::testing_support

#endif  // SAMPCERT_TESTS_SUPPORT_FAMILY_ITEMS_H_

// The planned penalty rows (SPEC section 16, "Planned rows"; penalty_rows.cc) through the
// certification path: the quick plan of each sampler, its penalty items run by RunItem exactly
// as a worker runs them. stable_cpu and the correct control pass every item at plan seeds 1, 2
// and 3; each mutant of tests/mutants/penalty_mutants.h fails at least one at each seed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "adapters/sampler.h"
#include "properties/conformance.h"
#include "properties/plan.h"
#include "properties/rewritten_row.h"
#include "registry/open_sampler.h"
#include "sampcert/reference_distribution.h"
#include "tests/mutants/penalty_mutants.h"
#include "tests/support/family_items.h"

namespace sampcert::properties {
namespace {

using results::Status;

using PenaltyRun = testing_support::FamilyRun;

PenaltyRun RunPenaltyItems(adapters::Sampler& sampler, const std::string& arg, uint64_t seed) {
  return testing_support::RunFamilyItems(sampler, arg, seed, ItemKind::kPenalties);
}

std::unique_ptr<adapters::Sampler> OpenMutant(mutants::PenaltyMutant m) {
  auto s = adapters::Sampler::Open(mutants::PenaltyMutantApi(m), nullptr);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? std::move(s.value()) : nullptr;
}

void ExpectPasses(adapters::Sampler& sampler, const char* name, int min_items) {
  for (uint64_t seed : {1, 2, 3}) {
    const PenaltyRun r = RunPenaltyItems(sampler, name, seed);
    EXPECT_GE(r.items, min_items) << name << ", seed " << seed;
    EXPECT_EQ(r.passed, r.items) << name << ", seed " << seed << ": " << r.first_failure;
    std::printf("[%s] seed %llu: %d penalty items, %d passed, %.2f s\n", name,
                static_cast<unsigned long long>(seed), r.items, r.passed, r.seconds);
  }
}

TEST(PenaltyPlan, StableCpuPasses) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s.value()->info().Has(SAMPCERT_CAP_PENALTIES));
  // Eight rows per dtype (the top-k row with them), three dtypes.
  ExpectPasses(*s.value(), "stable_cpu", 24);
}

TEST(PenaltyPlan, CorrectControlPasses) {
  auto s = OpenMutant(mutants::PenaltyMutant::kNone);
  ASSERT_NE(s, nullptr);
  ExpectPasses(*s, "none", 21);  // no top-k: seven rows per dtype
}

TEST(PenaltyPlan, MutantsCaughtAtSeeds1To3) {
  for (const mutants::PenaltyMutantInfo& info : mutants::PenaltyMutantCatalogue()) {
    if (info.mutant == mutants::PenaltyMutant::kNone) continue;
    auto s = OpenMutant(info.mutant);
    ASSERT_NE(s, nullptr);
    for (uint64_t seed : {1, 2, 3}) {
      const PenaltyRun r = RunPenaltyItems(*s, info.name, seed);
      EXPECT_NE(r.first_failure, "") << info.name << " not caught at seed " << seed;
      std::printf("[%s] seed %llu: %d of %d penalty items failed, %.2f s; first: %s\n", info.name,
                  static_cast<unsigned long long>(seed), r.items - r.passed, r.items, r.seconds,
                  r.first_failure.empty() ? "NOT caught" : r.first_failure.c_str());
    }
  }
}

// The same mutants declaring no probabilities: only the draws decide (DIST-1's tests on each
// row at the quick profile's power, TV 0.05). Every mutant moves a token's probability by far
// more somewhere: penalty_in_f16's rounding of the penalized logits (a relative error near 1e-5
// in a probability) is out of reach of any draw count and PROB-1's to catch (above), but its
// overflow on pen_overflow_V8 (6e38 and 5.8e38 both +inf in f16) draws token 1, outside the
// support, half the time.
const sampcert_sampler_api* g_inner = nullptr;
int32_t InfoWithoutProbabilities(sampcert_sampler_info* info, sampcert_error* error) {
  const int32_t rc = g_inner->get_info(info, error);
  info->capabilities &= ~SAMPCERT_CAP_PROBABILITIES;
  return rc;
}

TEST(PenaltyPlan, MutantsCaughtByTheirDrawsAtSeeds1To3) {
  for (const mutants::PenaltyMutantInfo& info : mutants::PenaltyMutantCatalogue()) {
    g_inner = mutants::PenaltyMutantApi(info.mutant);
    sampcert_sampler_api api = *g_inner;
    api.get_info = InfoWithoutProbabilities;
    auto s = adapters::Sampler::Open(&api, nullptr);
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_FALSE(s.value()->info().Has(SAMPCERT_CAP_PROBABILITIES));
    for (uint64_t seed : {1, 2, 3}) {
      const PenaltyRun r = RunPenaltyItems(*s.value(), info.name, seed);
      if (info.mutant == mutants::PenaltyMutant::kNone) {
        EXPECT_EQ(r.passed, r.items) << "the control, seed " << seed << ": " << r.first_failure;
      } else {
        EXPECT_NE(r.first_failure, "") << info.name << " not caught at seed " << seed;
      }
      std::printf("[%s, draws only] seed %llu: %d of %d penalty items failed, %.2f s; first: %s\n",
                  info.name, static_cast<unsigned long long>(seed), r.items - r.passed, r.items,
                  r.seconds, r.first_failure.empty() ? "none" : r.first_failure.c_str());
    }
  }
}

// A sampler without the capability gets no penalty item (PEN-CAP-1: nothing is sent to it).
TEST(PenaltyPlan, NoItemsWithoutTheCapability) {
  EXPECT_TRUE(PenaltyRows(DType::kF32, ~0u & ~SAMPCERT_CAP_PENALTIES).empty());
  auto s = registry::OpenSampler("naive");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_FALSE(s.value()->info().Has(SAMPCERT_CAP_PENALTIES));
  Profile quick;
  ASSERT_TRUE(ProfileByName("quick", &quick));
  for (const PlanItem& item : MakePlan(quick, s.value()->info(), 1).items) {
    EXPECT_NE(item.kind, ItemKind::kPenalties) << item.Id();
  }
}

// PEN-POL-1's `none`: the correct control declaring no presence or frequency penalty (as
// transformers' adapter does). The rows asking for either are NotSupported with the reason and
// never reach the sampler; every other penalty item passes, INV-8's NaN presence row included
// (an invalid request is refused whatever is declared).
const sampcert_sampler_api* g_declared_inner = nullptr;
int32_t InfoWithoutAdditive(sampcert_sampler_info* info, sampcert_error* error) {
  const int32_t rc = g_declared_inner->get_info(info, error);
  info->additive_history = SAMPCERT_HISTORY_NONE;
  info->name = "control_without_additive";
  return rc;
}

TEST(PenaltyPlan, RulesDeclaredNoneAreNotSupported) {
  g_declared_inner = mutants::PenaltyMutantApi(mutants::PenaltyMutant::kNone);
  sampcert_sampler_api api = *g_declared_inner;
  api.get_info = InfoWithoutAdditive;
  auto s = adapters::Sampler::Open(&api, nullptr);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s.value()->info().policies.additive_history, PenaltyHistory::kNone);
  Profile quick;
  ASSERT_TRUE(ProfileByName("quick", &quick));
  const Plan plan = MakePlan(quick, s.value()->info(), 1);
  int not_supported = 0, passed = 0;
  for (const PlanItem& item : plan.items) {
    if (item.kind != ItemKind::kPenalties) continue;
    const std::optional<RowCase> row =
        PlannedRowByName(DTypeFromName(item.dtype), item.name, s.value()->info().capabilities);
    ASSERT_TRUE(row.has_value()) << item.Id();
    const bool asks_additive = (row->presence_penalty != 0.0f || row->frequency_penalty != 0.0f) &&
                               InvalidRequest(*row).code == ErrorCode::kOk;
    for (const results::TestResult& r :
         RunItem(*s.value(), "control_without_additive", plan, item, -1)) {
      if (asks_additive) {
        EXPECT_EQ(r.status, Status::kNotSupported) << item.Id();
        EXPECT_NE(r.note.find("additive_history none"), std::string::npos) << r.note;
        ++not_supported;
      } else {
        EXPECT_EQ(r.status, Status::kPass)
            << item.Id() << ": " << (r.failure ? r.failure->message : r.note);
        ++passed;
      }
    }
  }
  EXPECT_EQ(not_supported, 6);  // pen_counts_V8 and pen_prompt_only_V8, three dtypes
  EXPECT_GE(passed, 15);
}

// Each row is decisive for its clause under either declaration of PEN-POL-1: the reference for
// the row under the declared histories differs from the one under the other history by more
// than the quick profile's TV, and each penalized row from the row without penalties.
// INV-8's planned rows: invalid whatever the policies, with InvalidPenalty, filed under
// INV-ERR-1; the others valid.
TEST(PenaltyPlan, InvalidRowsAreInv8) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    int invalid = 0;
    for (const auto& [name, row] : PenaltyRows(d, ~0u)) {
      const Error e = InvalidRequest(row);
      const bool planned_invalid = name.starts_with("pen_invalid_");
      EXPECT_EQ(e.code, planned_invalid ? ErrorCode::kInvalidPenalty : ErrorCode::kOk)
          << name << ": " << e.message;
      EXPECT_EQ(PenaltyProperty(row) == "INV-ERR-1", planned_invalid) << name;
      invalid += planned_invalid;
    }
    EXPECT_EQ(invalid, 2) << DTypeName(d);
  }
}

TEST(PenaltyPlan, RowsAreDecisive) {
  auto tv = [](const ReferenceDistribution& a, const ReferenceDistribution& b) {
    long double d = 0;
    for (std::size_t i = 0; i < a.probs.size(); ++i) d += std::fabs(a.probs[i] - b.probs[i]);
    return static_cast<double>(d / 2);
  };
  for (const auto& [name, row] : PenaltyRows(DType::kF32, ~0u)) {
    if (InvalidRequest(row).code != ErrorCode::kOk) continue;  // PenaltyPlan.InvalidRowsAreInv8
    const bool off = !row.view().HasPenalties();
    for (PenaltyHistory rep : {PenaltyHistory::kPromptAndOutput, PenaltyHistory::kOutputOnly}) {
      for (PenaltyHistory add : {PenaltyHistory::kPromptAndOutput, PenaltyHistory::kOutputOnly}) {
        Policies pol;
        pol.repetition_history = rep;
        pol.additive_history = add;
        const auto ref = ComputeReference(row.view(), pol);
        ASSERT_TRUE(ref.ok()) << name << ": " << ref.error().message;
        RowCase bare = row;
        bare.repetition_penalty = 1.0f;
        bare.presence_penalty = bare.frequency_penalty = 0.0f;
        const auto plain = ComputeReference(bare.view(), pol);
        ASSERT_TRUE(plain.ok());
        if (off) {
          EXPECT_EQ(tv(*ref, *plain), 0.0) << name;
        } else {
          EXPECT_GT(tv(*ref, *plain), 0.1) << name;
        }
        if (!name.starts_with("pen_prompt_only_")) continue;
        // The other declaration of each rule the row asks for moves the distribution by more
        // than TV 0.1.
        for (int flip : {0, 1}) {
          if (flip == 1 && row.presence_penalty == 0.0f && row.frequency_penalty == 0.0f) continue;
          Policies other = pol;
          PenaltyHistory& h = flip == 0 ? other.repetition_history : other.additive_history;
          h = h == PenaltyHistory::kOutputOnly ? PenaltyHistory::kPromptAndOutput
                                               : PenaltyHistory::kOutputOnly;
          const auto wrong = ComputeReference(row.view(), other);
          ASSERT_TRUE(wrong.ok());
          EXPECT_GT(tv(*ref, *wrong), 0.1) << name << " flip " << flip;
        }
      }
    }
  }
}

}  // namespace
}  // namespace sampcert::properties

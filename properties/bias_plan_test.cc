// The planned logit-bias rows (SPEC section 18, "Planned rows"; bias_rows.cc) through the
// certification path: the quick plan of each sampler, its logit_bias items run by RunItem exactly
// as a worker runs them. stable_cpu and the correct control pass every item at plan seeds 1, 2
// and 3; each mutant of tests/mutants/bias_mutants.h fails at least one at each seed, with its
// probabilities declared and with its draws alone. Also INV-9 on the reference and stable_cpu,
// and the row file's round trip of a bias.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "adapters/sampler.h"
#include "properties/conformance.h"
#include "properties/families.h"
#include "properties/plan.h"
#include "properties/rewritten_row.h"
#include "properties/row_case.h"
#include "registry/open_sampler.h"
#include "sampcert/reference_distribution.h"
#include "tests/mutants/bias_mutants.h"
#include "tests/support/family_items.h"

namespace sampcert::properties {
namespace {

using results::Status;
constexpr float kInf = std::numeric_limits<float>::infinity();

using BiasRun = testing_support::FamilyRun;

BiasRun RunBiasItems(adapters::Sampler& sampler, const std::string& arg, uint64_t seed) {
  return testing_support::RunFamilyItems(sampler, arg, seed, ItemKind::kLogitBias);
}

void ExpectPasses(adapters::Sampler& sampler, const char* name, int items) {
  for (uint64_t seed : {1, 2, 3}) {
    const BiasRun r = RunBiasItems(sampler, name, seed);
    EXPECT_EQ(r.items, items) << name << ", seed " << seed;
    EXPECT_EQ(r.passed, r.items) << name << ", seed " << seed << ": " << r.first_failure;
    std::printf("[%s] seed %llu: %d logit_bias items, %d passed, %.2f s\n", name,
                static_cast<unsigned long long>(seed), r.items, r.passed, r.seconds);
  }
}

TEST(BiasPlan, StableCpuPasses) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s.value()->info().Has(SAMPCERT_CAP_LOGIT_BIAS));
  ASSERT_TRUE(s.value()->info().Has(SAMPCERT_CAP_MIN_TOKENS));
  // Thirteen rows per dtype (the top-k and penalty rows with them, INV-9's four), three dtypes.
  ExpectPasses(*s.value(), "stable_cpu", 39);
}

std::unique_ptr<adapters::Sampler> Open(const sampcert_sampler_api* api) {
  auto s = adapters::Sampler::Open(api, nullptr);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? std::move(s.value()) : nullptr;
}

TEST(BiasPlan, CorrectControlPasses) {
  auto s = Open(mutants::BiasMutantApi(mutants::BiasMutant::kNone));
  ASSERT_NE(s, nullptr);
  ExpectPasses(*s, "none", 33);  // no top-k, no penalties: eleven rows per dtype
}

// Each mutant at seeds 1-3, with its probabilities declared, then with its draws alone.
TEST(BiasPlan, MutantsCaughtAtSeeds1To3) {
  testing_support::ExpectMutantsCaught(mutants::BiasMutantCatalogue(), mutants::BiasMutantApi,
                                       ItemKind::kLogitBias, 33, /*draws_only=*/true);
}

TEST(BiasPlan, NoRowsWithoutTheCapabilities) {
  EXPECT_TRUE(
      BiasRows(DType::kF32, ~0u & ~(SAMPCERT_CAP_LOGIT_BIAS | SAMPCERT_CAP_MIN_TOKENS)).empty());
  for (const auto& [name, row] : BiasRows(DType::kF32, SAMPCERT_CAP_MIN_TOKENS)) {
    EXPECT_EQ(BiasProperty(row), name.ends_with("_invalid_eos_V8") ? "INV-ERR-1" : "MINLEN-1")
        << name;
  }
}

// INV-9's planned rows: invalid whatever the policies, with InvalidLogitBias, filed under
// INV-ERR-1; the others valid.
TEST(BiasPlan, InvalidRowsAreInv9) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    int invalid = 0;
    for (const auto& [name, row] : BiasRows(d, ~0u)) {
      const Error e = InvalidRequest(row);
      const bool planned_invalid = name.find("_invalid_") != std::string::npos;
      EXPECT_EQ(e.code, planned_invalid ? ErrorCode::kInvalidLogitBias : ErrorCode::kOk)
          << name << ": " << e.message;
      EXPECT_EQ(BiasProperty(row) == "INV-ERR-1", planned_invalid) << name;
      invalid += planned_invalid;
    }
    EXPECT_EQ(invalid, 4) << DTypeName(d);
  }
}

// Every planned row but INV-9's is valid, and every one reads back from its row file bit for bit
// (the bias's infinities and NaN as bit patterns).
TEST(BiasPlan, RowsAreValidAndRoundTripThroughRowFiles) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (const auto& [name, row] : BiasRows(d, ~0u)) {
      Policies p;
      p.nan_policy = NanPolicy::kError;
      EXPECT_EQ(ComputeReference(row.view(), p).ok(), InvalidRequest(row).code == ErrorCode::kOk)
          << name;
      auto back = RowCaseFromRowFile(RowFileJson(row));
      ASSERT_TRUE(back.ok()) << name << ": " << back.error().message;
      EXPECT_EQ(back->bias_tokens, row.bias_tokens) << name;
      ASSERT_EQ(back->bias_values.size(), row.bias_values.size()) << name;
      for (std::size_t j = 0; j < row.bias_values.size(); ++j) {
        EXPECT_EQ(std::bit_cast<uint32_t>(back->bias_values[j]),
                  std::bit_cast<uint32_t>(row.bias_values[j]))
            << name;
      }
      EXPECT_EQ(back->min_tokens, row.min_tokens) << name;
      EXPECT_EQ(back->eos_token_id, row.eos_token_id) << name;
      EXPECT_EQ(Describe(*back), Describe(row)) << name;
    }
  }
}

// BIAS-2 and BIAS-3 on the reference itself, exactly.
TEST(BiasReference, InfinitiesBansAndExactSums) {
  Policies p;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (const auto& [name, row] : BiasRows(d, ~0u)) {
      if (InvalidRequest(row).code != ErrorCode::kOk) continue;  // BiasPlan.InvalidRowsAreInv9
      auto ref = ComputeReference(row.view(), p);
      ASSERT_TRUE(ref.ok()) << name << ": " << ref.error().message;
      if (name == "bias_inf_V8") {  // token 2 alone: +inf by its bias; 5 (-inf logit) stays out
        EXPECT_EQ(ref->probs[2], 1.0L) << DTypeName(d);
        EXPECT_EQ(ref->probs[5], 0.0L) << DTypeName(d);
        EXPECT_EQ(ref->support_size, 6u) << DTypeName(d);  // 1 banned, 5 is -inf
      }
      if (name == "bias_ban_V8") {  // the +inf logit and the largest finite one banned
        EXPECT_EQ(ref->probs[3], 0.0L) << DTypeName(d);
        EXPECT_EQ(ref->probs[0], 0.0L) << DTypeName(d);
        EXPECT_EQ(ref->support_size, 6u) << DTypeName(d);
        EXPECT_GT(ref->probs[6], 0.2L) << DTypeName(d);
      }
      if (name == "bias_overflow_V8") {  // token 1 leads by 1.9e38 (f16: 20000)
        EXPECT_EQ(ref->probs[1], 1.0L) << DTypeName(d);
        EXPECT_EQ(ref->probs[0], 0.0L) << DTypeName(d);
      }
      if (name == "min_tokens_ban_V8") {
        EXPECT_EQ(ref->probs[3], 0.0L) << DTypeName(d);
      }
      if (name == "min_tokens_reached_V8") {
        EXPECT_GT(ref->probs[3], 0.4L) << DTypeName(d);
      }
    }
  }
}

// INV-9: each invalid bias or minimum length, on the reference and on stable_cpu, with its code
// and the list's name in the message; a valid row of the same shape passes.
TEST(BiasReference, InvalidBiasIsInvalidLogitBias) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const RowCase base = MakeRow(DType::kF32, {0.1f, 0.5f, -0.3f, 1.0f}, 1.0f, 7);
  struct Case {
    const char* what;
    std::vector<int64_t> ids;
    std::vector<float> values;
    int64_t min_tokens, eos;
    const char* message;  // a part of the expected message; nullptr: valid
  } cases[] = {
      {"valid", {0, 3}, {1.0f, -kInf}, 0, -5, nullptr},
      {"NaN bias", {1}, {std::numeric_limits<float>::quiet_NaN()}, 0, 0, "bias_values[0]"},
      {"id past V", {4}, {1.0f}, 0, 0, "bias_tokens[0] is 4"},
      {"negative id", {2, -1}, {1.0f, 1.0f}, 0, 0, "bias_tokens[1] is -1"},
      {"repeated id", {2, 1, 2}, {1.0f, 0.5f, -1.0f}, 0, 0, "both token 2"},
      {"min_tokens < 0", {}, {}, -1, 0, "min_tokens is -1"},
      {"eos past V", {}, {}, 2, 4, "eos_token_id is 4"},
      {"eos ignored when off", {}, {}, 0, 99, nullptr},
  };
  for (const Case& c : cases) {
    RowCase row = base;
    row.bias_tokens = c.ids;
    row.bias_values = c.values;
    row.min_tokens = c.min_tokens;
    row.eos_token_id = c.eos;
    const auto ref = ComputeReference(row.view(), Policies{});
    const auto got = s.value()->Probabilities(OneRow(row));
    if (c.message == nullptr) {
      EXPECT_TRUE(ref.ok()) << c.what << ": " << ref.error().message;
      EXPECT_TRUE(got.ok()) << c.what << ": " << got.error().message;
      continue;
    }
    ASSERT_FALSE(ref.ok()) << c.what;
    EXPECT_EQ(ref.error().code, ErrorCode::kInvalidLogitBias) << c.what;
    EXPECT_NE(ref.error().message.find(c.message), std::string::npos)
        << c.what << ": " << ref.error().message;
    ASSERT_FALSE(got.ok()) << c.what;
    EXPECT_EQ(got.error().code, ErrorCode::kInvalidLogitBias) << c.what;
    EXPECT_EQ(got.error().message, ref.error().message) << c.what;
  }
  // Every token banned: EmptySupport, naming the bans.
  RowCase all = base;
  all.bias_tokens = {0, 1, 2, 3};
  all.bias_values = {-kInf, -kInf, -kInf, -kInf};
  const auto ref = ComputeReference(all.view(), Policies{});
  ASSERT_FALSE(ref.ok());
  EXPECT_EQ(ref.error().code, ErrorCode::kEmptySupport);
  EXPECT_NE(ref.error().message.find("4 banned"), std::string::npos) << ref.error().message;
}

}  // namespace
}  // namespace sampcert::properties

// The planned log-probability rows (SPEC section 20; logprob_rows.cc) through the certification
// path: the quick plan's logprobs items run by RunItem exactly as a worker runs them.
// stable_cpu (processed mode) and the correct control (all three modes) pass every item at plan
// seeds 1, 2 and 3; each mutant of tests/mutants/logprob_mutants.h fails at least one at each
// seed. Also the reference's three modes on small rows, and the host's capability gate.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "adapters/abi_conversions.h"
#include "adapters/sampler.h"
#include "impls/stable_cpu/stable_cpu_sampler.h"
#include "properties/families.h"
#include "properties/plan.h"
#include "properties/row_case.h"
#include "registry/open_sampler.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/reference_logprobs.h"
#include "tests/mutants/logprob_mutants.h"
#include "tests/support/family_items.h"

namespace sampcert::properties {
namespace {

using LogprobRun = testing_support::FamilyRun;
constexpr long double kNegInf = -std::numeric_limits<long double>::infinity();

LogprobRun RunLogprobItems(adapters::Sampler& sampler, const std::string& arg, uint64_t seed) {
  return testing_support::RunFamilyItems(sampler, arg, seed, ItemKind::kLogprobs);
}

// Four rows per dtype (the masked one with masks), three dtypes.
constexpr int kItems = 12;

TEST(LogprobPlan, StableCpuPasses) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s.value()->info().Has(SAMPCERT_CAP_LOGPROBS_PROCESSED));
  for (uint64_t seed : {1, 2, 3}) {
    const LogprobRun r = RunLogprobItems(*s.value(), "stable_cpu", seed);
    EXPECT_EQ(r.items, kItems) << "seed " << seed;
    EXPECT_EQ(r.passed, r.items) << "seed " << seed << ": " << r.first_failure;
    std::printf("[stable_cpu] seed %llu: %d logprobs items, %d passed, %.2f s\n",
                static_cast<unsigned long long>(seed), r.items, r.passed, r.seconds);
  }
}

// Each mutant at seeds 1-3 (its draws are always right: no draws-only run).
TEST(LogprobPlan, MutantsCaughtAtSeeds1To3) {
  testing_support::ExpectMutantsCaught(mutants::LogprobMutantCatalogue(), mutants::LogprobMutantApi,
                                       ItemKind::kLogprobs, kItems,
                                       /*draws_only=*/false);
}

// The reference's modes on a small row: T = 0.5, top-k 2, token 3 masked.
TEST(LogprobReference, ThreeModes) {
  RowCase row = MakeRow(DType::kF32, {1.0f, 2.0f, 0.0f, 3.0f}, 0.5f, 1);
  row.mask = {1, 1, 1, 0};
  row.top_k = 2;
  const Policies p;
  auto raw = ReferenceLogprobs(row.view(), p, SAMPCERT_LOGPROBS_RAW);
  auto scaled = ReferenceLogprobs(row.view(), p, SAMPCERT_LOGPROBS_SCALED);
  auto processed = ReferenceLogprobs(row.view(), p, SAMPCERT_LOGPROBS_PROCESSED);
  ASSERT_TRUE(raw.ok() && scaled.ok() && processed.ok());
  // raw: log-softmax of (1, 2, 0, 3), the mask and temperature not applied.
  const long double z = std::log(std::exp(1.0L) + std::exp(2.0L) + 1.0L + std::exp(3.0L));
  EXPECT_NEAR(static_cast<double>((*raw)[3]), static_cast<double>(3.0L - z), 1e-15);
  EXPECT_NEAR(static_cast<double>((*raw)[2]), static_cast<double>(-z), 1e-15);
  // scaled: (2, 4, 0) over the three allowed tokens; token 3 outside the support.
  const long double zs = std::log(std::exp(2.0L) + std::exp(4.0L) + 1.0L);
  EXPECT_NEAR(static_cast<double>((*scaled)[1]), static_cast<double>(4.0L - zs), 1e-15);
  EXPECT_NEAR(static_cast<double>((*scaled)[2]), static_cast<double>(-zs), 1e-15);
  EXPECT_EQ((*scaled)[3], kNegInf);
  // processed: top-2 keeps tokens 0 and 1: log-softmax of (2, 4) there, -inf elsewhere.
  const long double zp = std::log(std::exp(2.0L) + std::exp(4.0L));
  EXPECT_NEAR(static_cast<double>((*processed)[0]), static_cast<double>(2.0L - zp), 1e-15);
  EXPECT_EQ((*processed)[2], kNegInf);
  EXPECT_EQ((*processed)[3], kNegInf);
  EXPECT_FALSE(ReferenceLogprobs(row.view(), p, 4).ok());
}

// Every planned row has one processed log-probability per token (no rounding band), and the
// modes differ where each row says they do.
TEST(LogprobPlan, RowsDecideTheModes) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (const auto& [name, row] : LogprobRows(d, ~0u)) {
      auto raw = ReferenceLogprobs(row.view(), Policies{}, SAMPCERT_LOGPROBS_RAW);
      auto scaled = ReferenceLogprobs(row.view(), Policies{}, SAMPCERT_LOGPROBS_SCALED);
      auto processed = ReferenceLogprobs(row.view(), Policies{}, SAMPCERT_LOGPROBS_PROCESSED);
      ASSERT_TRUE(raw.ok() && scaled.ok()) << name;
      ASSERT_TRUE(processed.ok()) << name << ": " << processed.error().message;
      long double raw_vs_scaled = 0, scaled_vs_processed = 0;
      for (std::size_t i = 0; i < raw->size(); ++i) {
        if (std::isfinite((*raw)[i]) && std::isfinite((*scaled)[i])) {
          raw_vs_scaled = std::max(raw_vs_scaled, std::fabs((*raw)[i] - (*scaled)[i]));
        }
        if (std::isfinite((*processed)[i])) {
          scaled_vs_processed =
              std::max(scaled_vs_processed, std::fabs((*scaled)[i] - (*processed)[i]));
        }
      }
      if (name == "logp_temperature_V64") {
        EXPECT_GT(raw_vs_scaled, 0.5L) << DTypeName(d);
      }
      if (name == "logp_truncated_V128") {
        EXPECT_GT(scaled_vs_processed, 0.05L) << DTypeName(d);
      }
      if (name == "logp_masked_V48") {
        int finite = 0;
        for (long double e : *scaled) finite += std::isfinite(e);
        EXPECT_EQ(finite, 3) << DTypeName(d);
      }
    }
  }
}

// A sampler that does not declare the mode is asked for none: Unsupported at the host.
TEST(LogprobHost, TheModeMustBeDeclared) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const RowCase row = MakeRow(DType::kF32, {0.5f, 1.0f, -1.0f}, 1.0f, 3);
  auto raw = s.value()->SampleLogprobs(OneRow(row), 1, 0, 4, SAMPCERT_LOGPROBS_RAW, 2);
  ASSERT_FALSE(raw.ok());
  EXPECT_EQ(raw.error().code, ErrorCode::kUnsupported);
  auto bad = s.value()->SampleLogprobs(OneRow(row), 1, 0, 4, 7, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  auto processed = s.value()->SampleLogprobs(OneRow(row), 1, 0, 4, SAMPCERT_LOGPROBS_PROCESSED, 3);
  ASSERT_TRUE(processed.ok()) << processed.error().message;
  EXPECT_EQ(processed->top_tokens, (std::vector<int64_t>{1, 0, 2}));
  auto plain = s.value()->Sample(OneRow(row), 1, 0, 4);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(processed->tokens, *plain);  // asking for log-probabilities changes no draw
}

// A batch of the MINOR 7 layout (40 bytes, an older host's) is accepted and asks for nothing.
TEST(LogprobHost, AnOlderHostsBatchIsAccepted) {
  const sampcert_sampler_api* api = impls::StableCpuSamplerApi();
  sampcert_sampler* h = nullptr;
  sampcert_error err{};
  err.struct_size = sizeof err;
  ASSERT_EQ(api->create(nullptr, &h, &err), SAMPCERT_STATUS_OK);
  const float x[3] = {0.5f, 1.0f, -1.0f};
  sampcert_row row{};
  row.struct_size = sizeof row;
  row.logits = x;
  row.temperature = 1.0f;
  row.top_p = 1.0f;
  row.repetition_penalty = 1.0f;
  sampcert_batch b = adapters::AbiBatch(SAMPCERT_DTYPE_F32, 3, 1, &row);
  b.struct_size = SAMPCERT_BATCH_MINOR7_STRUCT_SIZE;
  b.logprob_mode = 99;  // past the struct's size: never read
  int64_t out[4];
  EXPECT_EQ(api->sample(h, &b, 1, 0, 4, out, &err), SAMPCERT_STATUS_OK) << err.message;
  b.struct_size = SAMPCERT_BATCH_STRUCT_SIZE;  // now read: an unknown mode
  EXPECT_EQ(api->sample(h, &b, 1, 0, 4, out, &err), SAMPCERT_STATUS_INVALID_ARGUMENT);
  api->destroy(h);
}

}  // namespace
}  // namespace sampcert::properties

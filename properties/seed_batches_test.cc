// SEED-1, SEED-2 and SEED-3 (SPEC section 17) through the property machinery: CheckCase on
// generated rows (RapidCheck's generators, as a generated-rows item draws them) for stable_cpu,
// the correct control and the mutants of tests/mutants/seed_mutants.h. The SEED properties are
// exact, so a mutant is caught when one case's SEED outcome fails; each must be caught at seeds
// 1, 2 and 3, and stable_cpu and the control must pass every SEED outcome at each.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdio>
#include <memory>
#include <string>

#include "adapters/sampler.h"
#include "properties/case_check.h"
#include "properties/generators.h"
#include "registry/open_sampler.h"
#include "tests/mutants/seed_mutants.h"
#include "tests/support/test_rows.h"

namespace sampcert::properties {
namespace {

constexpr int kCases = 24;

uint64_t Mix(uint64_t a, uint64_t b) {
  uint64_t z = a * 0x9e3779b97f4a7c15ULL + b + 0x632be59bd9b4e019ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct SeedRun {
  int cases_with_seed_keys = 0;
  std::string first_failure;  // "" when every SEED outcome passed
};

// kCases generated f32 rows (V <= 1024, every declared feature) under `seed`, CheckCase on each.
SeedRun RunSeeds(adapters::Sampler& sampler, uint64_t seed) {
  GenConfig cfg;
  cfg.capabilities = sampler.info().capabilities;
  cfg.max_vocab = 1024;
  const rc::Gen<RowCase> gen = GenRow(cfg);
  SeedRun out;
  for (int i = 0; i < kCases; ++i) {
    const uint64_t case_seed = Mix(seed, static_cast<uint64_t>(i));
    const RowCase row = gen(rc::Random(case_seed), 100).value();
    bool has_keys = false;
    for (const Outcome& o : CheckCase(sampler, row, case_seed)) {
      if (!o.property.starts_with("SEED-")) continue;
      has_keys = true;
      if (o.reached && !o.ok && out.first_failure.empty()) {
        out.first_failure =
            fmt::format("{} on case {} ({}): {}", o.property, i, Describe(row), o.message);
      }
    }
    out.cases_with_seed_keys += has_keys;
  }
  return out;
}

std::unique_ptr<adapters::Sampler> OpenMutant(mutants::SeedMutant m) {
  auto s = adapters::Sampler::Open(mutants::SeedMutantApi(m), nullptr);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? std::move(s.value()) : nullptr;
}

void ExpectPasses(adapters::Sampler& sampler, const char* name) {
  for (uint64_t seed : {1, 2, 3}) {
    const SeedRun r = RunSeeds(sampler, seed);
    EXPECT_GE(r.cases_with_seed_keys, kCases / 2) << name << ", seed " << seed;
    EXPECT_EQ(r.first_failure, "") << name << ", seed " << seed;
    std::printf("[%s] seed %llu: %d cases with SEED keys, all passed\n", name,
                static_cast<unsigned long long>(seed), r.cases_with_seed_keys);
  }
}

TEST(SeedBatches, StableCpuPasses) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s.value()->info().Has(SAMPCERT_CAP_SEEDS));
  ExpectPasses(*s.value(), "stable_cpu");
}

TEST(SeedBatches, CorrectControlPasses) {
  auto s = OpenMutant(mutants::SeedMutant::kNone);
  ASSERT_NE(s, nullptr);
  ExpectPasses(*s, "none");
}

TEST(SeedBatches, MutantsCaughtAtSeeds1To3) {
  for (const mutants::SeedMutantInfo& info : mutants::SeedMutantCatalogue()) {
    if (info.mutant == mutants::SeedMutant::kNone) continue;
    auto s = OpenMutant(info.mutant);
    ASSERT_NE(s, nullptr);
    for (uint64_t seed : {1, 2, 3}) {
      const SeedRun r = RunSeeds(*s, seed);
      EXPECT_NE(r.first_failure, "") << info.name << " not caught at seed " << seed;
      std::printf("[%s] seed %llu: %s\n", info.name, static_cast<unsigned long long>(seed),
                  r.first_failure.empty() ? "NOT caught" : ("caught: " + r.first_failure).c_str());
    }
  }
}

// A stable_cpu row with its own seed draws what the reference draws with that seed, whatever
// the call's seed; an unseeded row draws differently from call to call (the engine's stream).
TEST(SeedBatches, StableCpuKeysASeededRowByItsSeed) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  adapters::Sampler& sampler = *s.value();
  std::vector<float> logits(64);
  for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>(i % 7) * 0.3f;
  testing_support::TestRow seeded(logits), called(logits), unseeded(logits);
  seeded.RowId(5).Seed(1234, kSeedOwn);
  called.RowId(5);
  unseeded.RowId(5).Seed(0, kSeedUnseeded);
  auto a = sampler.Sample(adapters::Batch{DType::kF32, 64, {seeded.view()}}, 99, 0, 64);
  auto b = sampler.Sample(adapters::Batch{DType::kF32, 64, {called.view()}}, 1234, 0, 64);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);  // own seed 1234 == the call's seed 1234 (DrawSeed)
  auto u1 = sampler.Sample(adapters::Batch{DType::kF32, 64, {unseeded.view()}}, 99, 0, 64);
  auto u2 = sampler.Sample(adapters::Batch{DType::kF32, 64, {unseeded.view()}}, 99, 0, 64);
  ASSERT_TRUE(u1.ok() && u2.ok());
  EXPECT_NE(*u1, *u2);  // 64 draws of a 64-token row: equal with chance far below 1e-12
  // An invalid seed_mode is InvalidArgument, naming the field.
  testing_support::TestRow bad(logits);
  bad.Seed(0, 3);
  auto e = sampler.Sample(adapters::Batch{DType::kF32, 64, {bad.view()}}, 1, 0, 1);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(e.error().message.find("seed_mode"), std::string::npos) << e.error().message;
}

}  // namespace
}  // namespace sampcert::properties

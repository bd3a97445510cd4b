// The verifier family's plan (SPEC section 15, VER-PLAN-1 and VER-STAT-1): which samplers get
// it, which chains each capability set plans, the keys the run returns, and the power of each
// chain's trials. The laws themselves are checked by the flawed verifiers' ctests
// (verify.flawed.*) and the reference's by reference_verify_test.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "properties/families.h"
#include "properties/plan.h"
#include "properties/statistics/chi_square.h"
#include "registry/open_sampler.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

adapters::SamplerInfo StableCpuInfo() {
  auto s = registry::OpenSampler("stable_cpu");
  EXPECT_TRUE(s.ok());
  return (*s)->info();
}

std::set<std::string> Chains(const adapters::SamplerInfo& info, const std::string& dtype) {
  PlanItem item;
  item.kind = ItemKind::kVerify;
  item.dtype = dtype;
  std::set<std::string> chains;
  for (const auto& [property, family] : VerifyKeys(Plan{}, item, info, -1)) {
    if (property == "VER-2") chains.insert(family);
  }
  return chains;
}

TEST(VerifyFamily, OnlyADeclaredVerifierGetsItsItems) {
  adapters::SamplerInfo info = StableCpuInfo();
  Profile quick;
  ASSERT_TRUE(ProfileByName("quick", &quick));
  int items = 0;
  for (const PlanItem& it : MakePlan(quick, info, 1).items) {
    if (it.kind != ItemKind::kVerify) continue;
    ++items;
    EXPECT_EQ(it.Id(), it.dtype + "/verify");
  }
  EXPECT_EQ(items, 3);  // f32, f16, bf16
  info.capabilities &= ~SAMPCERT_CAP_VERIFY;
  for (const PlanItem& it : MakePlan(quick, info, 1).items) {
    EXPECT_NE(it.kind, ItemKind::kVerify) << it.Id();
  }
}

TEST(VerifyFamily, ChainsFollowTheCapabilities) {
  adapters::SamplerInfo info = StableCpuInfo();
  const std::set<std::string> all = Chains(info, "f32");
  EXPECT_EQ(all.size(), 20u);
  for (const char* c :
       {"extra_mass_V100_k3", "disjoint_V64_k2", "masked_V64_k3", "greedy_V64_k3",
        "draft_logits_V64_k3", "draft_f16_V128_k2", "draft_bf16_V96_k2", "target_top_p_V64_k3",
        "target_min_p_V64_k3", "confident_V64_k3", "greedy_ties_V64_k3", "position_masks_V64_k3"}) {
    EXPECT_TRUE(all.contains(c)) << c;
  }
  EXPECT_EQ(Chains(info, "bf16"), (std::set<std::string>{"near_V64_k4", "tile_V4099_k2",
                                                         "greedy_V64_k3", "draft_logits_V64_k2"}));
  info.capabilities &= ~(SAMPCERT_CAP_TOP_K | SAMPCERT_CAP_MASK | SAMPCERT_CAP_TEMPERATURE_ZERO);
  const std::set<std::string> plain = Chains(info, "f32");
  EXPECT_EQ(plain.size(), 14u);
  for (const char* c : {"extra_mass_V100_k3", "disjoint_V64_k2", "masked_V64_k3", "greedy_V64_k3",
                        "greedy_ties_V64_k3", "position_masks_V64_k3"}) {
    EXPECT_FALSE(plain.contains(c)) << c;
  }
  // Without verify-draft-logits the drafts are probabilities only; without a half dtype, no
  // draft of that dtype.
  info.capabilities &= ~SAMPCERT_CAP_BF16;
  EXPECT_FALSE(Chains(info, "f32").contains("draft_bf16_V96_k2"));
  EXPECT_TRUE(Chains(info, "f32").contains("draft_f16_V128_k2"));
  info.capabilities &= ~SAMPCERT_CAP_VERIFY_DRAFT_LOGITS;
  EXPECT_EQ(Chains(info, "f32").size(), 11u);
}

TEST(VerifyFamily, KeysAreSortedAndCoverEveryProperty) {
  const adapters::SamplerInfo info = StableCpuInfo();
  PlanItem item;
  item.kind = ItemKind::kVerify;
  item.dtype = "f32";
  const ResultKeys keys = VerifyKeys(Plan{}, item, info, -1);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  std::set<std::string> properties;
  for (const auto& key : keys) properties.insert(key.first);
  EXPECT_EQ(properties, (std::set<std::string>{"VER-1", "VER-2", "VER-3", "VER-4", "VER-5", "VER-6",
                                               "VER-7", "VER-INV-1"}));
  EXPECT_EQ(keys.size(), 20u * 5 + 3);
  // VER-6 only for a verifier declaring verify-acceptance.
  adapters::SamplerInfo without = info;
  without.capabilities &= ~SAMPCERT_CAP_VERIFY_ACCEPTANCE;
  EXPECT_EQ(VerifyKeys(Plan{}, item, without, -1).size(), 20u * 4 + 3);
}

// VER-7 (VER-DET-1's key): its chain's outputs are spread enough that a correct verifier fails
// a kind of row-id pair by chance with a negligible probability, and stable_cpu's counter-based
// verifier passes at seeds 1, 2 and 3.
TEST(VerifyFamily, RowIdPairsHaveATinyFalseAlarmRateAndStableCpuPasses) {
  const adapters::SamplerInfo info = StableCpuInfo();
  for (const DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    const RowIdBound bound = VerifyRowIdBound(dtype, info.policies);
    // 0.97^2 / 63 + ...: the residual's 63 tokens after a rejection at position 1.
    EXPECT_GT(bound.collision, 0.014) << DTypeName(dtype);
    EXPECT_LT(bound.collision, 0.016) << DTypeName(dtype);
    EXPECT_LT(bound.false_alarm, 1e-20) << DTypeName(dtype);
  }
  auto sampler = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(sampler.ok());
  Profile quick;
  ASSERT_TRUE(ProfileByName("quick", &quick));
  for (const uint64_t seed : {1, 2, 3}) {
    const Plan plan = MakePlan(quick, info, seed);
    for (const PlanItem& it : plan.items) {
      if (it.kind != ItemKind::kVerify) continue;
      const std::string arg = "stable_cpu";
      const results::TestResult r =
          RunVerifyRowIds(ItemRun{**sampler, arg, plan, it, -1, nullptr, {}});
      EXPECT_EQ(r.status, results::Status::kPass)
          << it.Id() << " seed " << seed << ": " << r.note << (r.failure ? r.failure->message : "");
      EXPECT_EQ(r.cases, 96u);
      EXPECT_LT(r.worst_error, 0.5) << r.note;  // at most 7 of 32 pairs the same in any kind
    }
  }
}

TEST(VerifyFamily, TheTrialsReachTheProfilesPower) {
  const adapters::SamplerInfo info = StableCpuInfo();
  for (const char* name : {"quick", "standard"}) {
    Profile profile;
    ASSERT_TRUE(ProfileByName(name, &profile));
    for (const PlanItem& it : MakePlan(profile, info, 1).items) {
      if (it.kind != ItemKind::kVerify) continue;
      EXPECT_GE(it.draws, 4096u) << it.Id();
      EXPECT_LE(it.draws, profile.max_draws) << it.Id();
      EXPECT_EQ(it.draws, it.required_draws) << it.Id() << ": uncapped";
      // The largest chain's trials detect the profile's TV at a sub-test's share of the last
      // look with 64 cells (MakeCells' most token cells, the bound of every chain's cells).
      const double share = it.look_levels.back() / it.subtests / 3;
      EXPECT_LE(DetectableTv(64, share, it.draws), 1.3 * profile.required_tv) << it.Id();
    }
  }
}

TEST(VerifyFamily, TheDeclaredDrawCostCapsTheTrials) {
  adapters::SamplerInfo info = StableCpuInfo();
  info.policies.draw_cost_ns_per_token = 1000;  // a trial of the V = 4099, k = 2 chain: 12 ms
  Profile standard;
  ASSERT_TRUE(ProfileByName("standard", &standard));
  for (const PlanItem& it : MakePlan(standard, info, 1).items) {
    if (it.kind != ItemKind::kVerify) continue;
    EXPECT_EQ(it.draw_cap, static_cast<uint64_t>(20e9 / (1000.0 * 4099 * 3))) << it.Id();
    EXPECT_LT(it.draws, it.required_draws) << it.Id();
  }
}

}  // namespace
}  // namespace sampcert::properties

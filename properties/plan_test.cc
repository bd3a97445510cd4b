// The plan is a function of (profile, declaration, seed) alone (REPRO-1): its version changes
// with anything it fixes, the generated rows are pinned bit for bit, and the result keys of an
// item are known before it runs, whatever the sampler does.
#include "properties/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <set>

#include "properties/conformance.h"
#include "properties/coverage.h"
#include "properties/distribution.h"
#include "properties/generators.h"
#include "properties/portable_random.h"
#include "properties/rewritten_row.h"
#include "properties/statistics/binomial.h"
#include "properties/statistics/cells.h"
#include "properties/statistics/chi_square.h"
#include "properties/tail.h"
#include "registry/open_sampler.h"
#include "sampcert/reference_distribution.h"

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
  // The covering design is part of the plan (COV-1): its strength, its draws and its rows.
  // quick covers pairs only; standard and full cover the truncation axes' triples too.
  EXPECT_FALSE(quick.design_truncation_triples);
  EXPECT_TRUE(standard.design_truncation_triples);
  Profile triples = quick;
  triples.design_truncation_triples = true;
  const Plan triples_plan = MakePlan(triples, info, 1);
  EXPECT_NE(v, PlanVersion(triples_plan));
  EXPECT_GT(triples_plan.items.front().design_rows,
            MakePlan(quick, info, 1).items.front().design_rows);
  Profile fewer_draws = quick;
  fewer_draws.design_draws_per_row /= 2;
  EXPECT_NE(v, PlanVersion(MakePlan(fewer_draws, info, 1)));
  Plan other_design = MakePlan(quick, info, 1);
  ASSERT_EQ(other_design.items.front().kind, ItemKind::kGeneratedRows);
  EXPECT_GT(other_design.items.front().design_rows, 0u);
  other_design.items.front().design_digest ^= 1;
  EXPECT_NE(v, PlanVersion(other_design));
  // Every statistical item has its draws and seed in the plan.
  for (const PlanItem& it : MakePlan(standard, info, 1).items) {
    if (FamilyOf(it.kind).drawn) {
      EXPECT_GE(it.draws, 4096u) << it.Id();
      EXPECT_NE(it.seed, 0u) << it.Id();
    }
  }
}

// Sequential looks (STAT-4): every distribution and tail test looks at 1/64, 1/16, 1/4 and all
// of its draws with the level split 1/16, 1/16, 1/8, 3/4; the re-run is 4x the draws with the
// same looks at the reserve's level; the planned draws reach the profile's power at the last
// look's share of the level.
TEST(Plan, LooksSpendTheLevelAndTheLastLookHasThePower) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  Profile standard;
  ASSERT_TRUE(ProfileByName("standard", &standard));
  const adapters::SamplerInfo& info = (*s)->info();
  const Plan plan = MakePlan(standard, info, 1);
  int statistical = 0;
  for (const PlanItem& it : plan.items) {
    if (!FamilyOf(it.kind).drawn) continue;
    ++statistical;
    ASSERT_EQ(it.looks.size(), 4u) << it.Id();
    ASSERT_EQ(it.look_levels.size(), 4u) << it.Id();
    EXPECT_EQ(it.looks,
              (std::vector<uint64_t>{it.draws / 64, it.draws / 16, it.draws / 4, it.draws}))
        << it.Id();
    EXPECT_EQ(it.rerun_draws, 4 * it.draws) << it.Id();
    EXPECT_EQ(it.rerun_looks.back(), it.rerun_draws) << it.Id();
    double sum = 0, rerun_sum = 0;
    for (double l : it.look_levels) sum += l;
    for (double l : it.rerun_look_levels) rerun_sum += l;
    EXPECT_NEAR(sum, it.level, 1e-18) << it.Id();
    EXPECT_NEAR(rerun_sum, it.rerun_level, 1e-18) << it.Id();
    EXPECT_DOUBLE_EQ(it.look_levels.back(), 0.75 * it.level) << it.Id();
    EXPECT_EQ(it.draws, it.required_draws) << it.Id() << ": no budget, no cap";
    const double sub_level = it.look_levels.back() / it.subtests;
    if (it.kind == ItemKind::kVerify) continue;  // its chains' power: verify_test
    const std::optional<RowCase> row = PlannedRowByName(DTypeFromName(it.dtype), it.name, ~0u);
    ASSERT_TRUE(row.has_value());
    if (InvalidRequest(*row).code != ErrorCode::kOk) continue;  // INV-ERR-1's: no draws
    auto ref = ComputeReference(row->view(), info.policies);
    ASSERT_TRUE(ref.ok());
    if (it.kind == ItemKind::kIndependence) {
      // Every pair test (4 x 4 tables: 9 degrees of freedom) reaches the required TV.
      EXPECT_LE(DetectableTv(9, sub_level, it.draws), standard.required_tv) << it.Id();
      EXPECT_EQ(it.subtests, 4) << it.Id();
    } else if (it.kind == ItemKind::kTail) {
      // Every nested set reaches the required relative change at the last look's level.
      for (const TailSet& set : TailSets(*ref)) {
        EXPECT_LE(DetectableShiftBinomial(it.draws, set.mass, sub_level) / set.mass,
                  standard.required_tail_change)
            << it.Id() << " " << set.label;
      }
      // Fewer draws than the former fixed 4x the profile's draws.
      EXPECT_LT(it.draws, 4 * standard.max_draws) << it.Id();
    } else if (!it.name.starts_with("rounding_probe") && it.draws < standard.max_draws) {
      const Cells cells = MakeCells(ref->probs, it.draws);
      if (cells.probability.size() >= 3) {
        EXPECT_LE(
            DetectableTv(static_cast<double>(cells.probability.size()) - 1, sub_level, it.draws),
            standard.required_tv)
            << it.Id();
      }
    }
  }
  EXPECT_GT(statistical, 30);
}

// The draw budget: --max-draws caps every statistical test's draws (the re-run draws 4x the
// capped count), keeps what the power needs in the plan, and changes the plan's version.
TEST(Plan, MaxDrawsCapsEveryTestAndChangesTheVersion) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  Profile standard;
  ASSERT_TRUE(ProfileByName("standard", &standard));
  const adapters::SamplerInfo& info = (*s)->info();
  const Plan full = MakePlan(standard, info, 1);
  PlanOptions options;
  options.max_draws = 20000;
  const Plan capped = MakePlan(standard, info, 1, options);
  EXPECT_NE(PlanVersion(full), PlanVersion(capped));
  ASSERT_EQ(full.items.size(), capped.items.size());
  int short_of_power = 0;
  for (std::size_t i = 0; i < capped.items.size(); ++i) {
    const PlanItem& a = full.items[i];
    const PlanItem& b = capped.items[i];
    if (!FamilyOf(b.kind).drawn) continue;
    EXPECT_EQ(b.required_draws, a.required_draws) << b.Id();
    EXPECT_EQ(b.draw_cap, 20000u) << b.Id();
    EXPECT_EQ(b.draws, std::min<uint64_t>(a.required_draws, 20000)) << b.Id();
    EXPECT_EQ(b.rerun_draws, 4 * b.draws) << b.Id();
    short_of_power += b.draws < b.required_draws;
  }
  EXPECT_GT(short_of_power, 10);
  EXPECT_NE(DescribePlan(capped).find("CAPPED"), std::string::npos);
  EXPECT_EQ(DescribePlan(full).find("CAPPED"), std::string::npos);
}

// A declared draw cost (ABI MINOR 1) caps each test at the profile's draw-time target over
// (cost x V) of its row; with --max-draws too, the smaller cap wins. Nothing is measured.
TEST(Plan, DeclaredDrawCostCapsByVocabulary) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  Profile standard;
  ASSERT_TRUE(ProfileByName("standard", &standard));
  adapters::SamplerInfo info = (*s)->info();
  const Plan free_plan = MakePlan(standard, info, 1);
  info.policies.draw_cost_ns_per_token = 16;
  const Plan costed = MakePlan(standard, info, 1);
  EXPECT_NE(PlanVersion(free_plan), PlanVersion(costed));
  PlanOptions options;
  options.max_draws = 100000;
  const Plan both = MakePlan(standard, info, 1, options);
  int capped = 0;
  for (std::size_t i = 0; i < costed.items.size(); ++i) {
    const PlanItem& it = costed.items[i];
    if (!FamilyOf(it.kind).drawn) continue;
    // The verifier's trials cost k + 1 rows; its largest f32 chain is V = 4099, k = 2 (the
    // fp16 / bf16 items share it).
    const double tokens =
        it.kind == ItemKind::kVerify
            ? 4099.0 * 3
            : static_cast<double>(PlannedRowByName(DTypeFromName(it.dtype), it.name, ~0u)
                                      .value_or(RowCase{})
                                      .vocab());
    ASSERT_GT(tokens, 0) << it.Id();
    const auto cap =
        static_cast<uint64_t>(std::floor(standard.draw_time_target_s * 1e9 / (16.0 * tokens)));
    EXPECT_EQ(it.draw_cap, cap) << it.Id();
    EXPECT_EQ(it.draws, std::min(it.required_draws, cap)) << it.Id();
    EXPECT_EQ(both.items[i].draws, std::min({it.required_draws, cap, uint64_t{100000}})) << it.Id();
    capped += it.draws < it.required_draws;
  }
  // wide_V32768 (38,146 of ~250k) and deep_tail_V180001 (6,944 of ~1M) in each dtype.
  EXPECT_GE(capped, 4);
  // A cost of 0 declares nothing and caps nothing.
  info.policies.draw_cost_ns_per_token = 0;
  EXPECT_EQ(PlanVersion(MakePlan(standard, info, 1)), PlanVersion(free_plan));
}

// --draw-time replaces the profile's draw time per test: the caps scale with it, the plan (and
// its version) says which it used, and without a declared cost it changes no draw count.
TEST(Plan, DrawTimeOptionReplacesTheProfilesTarget) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  Profile standard;
  ASSERT_TRUE(ProfileByName("standard", &standard));
  adapters::SamplerInfo info = (*s)->info();
  info.policies.draw_cost_ns_per_token = 50;
  PlanOptions longer;
  longer.draw_time_s = 150;
  const Plan base = MakePlan(standard, info, 1);
  const Plan more = MakePlan(standard, info, 1, longer);
  EXPECT_EQ(more.profile.draw_time_target_s, 150);
  EXPECT_EQ(base.profile.draw_time_target_s, standard.draw_time_target_s);
  EXPECT_NE(PlanVersion(base), PlanVersion(more));
  ASSERT_EQ(base.items.size(), more.items.size());
  bool deep_tail_seen = false;
  for (std::size_t i = 0; i < base.items.size(); ++i) {
    const PlanItem &a = base.items[i], &b = more.items[i];
    if (!FamilyOf(a.kind).drawn || a.draw_cap == 0) continue;
    // floor(t x 1e9 / (cost x V)): 7.5x the time gives 7.5x the cap, to within the floor.
    EXPECT_NEAR(static_cast<double>(b.draw_cap), 7.5 * static_cast<double>(a.draw_cap), 7.5)
        << a.Id();
    EXPECT_EQ(b.draws, std::min(b.required_draws, b.draw_cap)) << a.Id();
    if (a.Id() == "f32/deep_tail_V180001") {
      deep_tail_seen = true;
      EXPECT_EQ(a.draws, 2222u);   // floor(20e9 / (50 x 180001))
      EXPECT_EQ(b.draws, 16666u);  // floor(150e9 / (50 x 180001))
    }
  }
  EXPECT_TRUE(deep_tail_seen);
  EXPECT_NE(DescribePlan(more).find("target 150 s per test"), std::string::npos);
  // No declared cost: the option caps nothing (only the plan's version records it).
  info.policies.draw_cost_ns_per_token = 0;
  const Plan free_base = MakePlan(standard, info, 1);
  const Plan free_more = MakePlan(standard, info, 1, longer);
  for (std::size_t i = 0; i < free_base.items.size(); ++i) {
    EXPECT_EQ(free_base.items[i].draws, free_more.items[i].draws) << free_base.items[i].Id();
  }
}

// A capped test that cannot reach the profile's power runs its capped draws and is
// Inconclusive, never Pass, and says why; an uncapped one passes.
TEST(Plan, CappedTestIsInconclusiveNeverPass) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  Profile standard;
  ASSERT_TRUE(ProfileByName("standard", &standard));
  PlanOptions options;
  options.max_draws = 20000;
  for (const char* name : {"f32/llm_like_V1000", "f32/deep_tail_V180001"}) {
    for (const bool cap : {false, true}) {
      const Plan plan = MakePlan(standard, (*s)->info(), 1, cap ? options : PlanOptions{});
      const PlanItem* item = nullptr;
      for (const PlanItem& it : plan.items) {
        if (it.Id() == name) item = &it;
      }
      ASSERT_NE(item, nullptr) << name;
      const std::vector<results::TestResult> r = RunItem(**s, "stable_cpu", plan, *item, -1);
      ASSERT_EQ(r.size(), 1u);
      if (cap) {
        EXPECT_EQ(r[0].status, results::Status::kInconclusive) << name << ": " << r[0].note;
        EXPECT_NE(r[0].note.find("draw budget capped this test at 20000 draws"), std::string::npos)
            << r[0].note;
        EXPECT_EQ(r[0].draws, 20000u) << name;
      } else {
        EXPECT_EQ(r[0].status, results::Status::kPass) << name << ": " << r[0].note;
      }
    }
  }
}

// Generated rows from the raw 64-bit stream with portable mappings only: these digests are the
// same on every machine and standard library. A change here changes every plan's rows: bump
// "plan-v1" in PlanVersion with it, and regenerate the expectations that depend on rows. The
// digest covers the covering design's realized rows too (coverage.h; it changed when the design
// rows were added, plan-v4): a change of the coverage model, of the construction or of a class's
// realization changes it. It changed again when the planned row top_k_top_p_V64 was added, and
// when the rows of truncation's extremes and parameter rounding (signed_zero_tie_V8,
// top_k_2000_V4096, min_p_tiny_V4096, min_p_rounding_V8, top_p_rounding_V8) and masked_V300's
// mask bytes 1..255 were, when the penalty rows (penalty_rows.cc) were, with their
// histories and penalties, and when pen_overflow_V8 joined them. It changed with the Describe
// text alone (the rows' bits and histories did not) when the penalties became row-table fields:
// they are printed by RowParamsText, where they are not at their defaults. It changed when the
// logit-bias rows (bias_rows.cc) joined, with their biases and minimum lengths; the other rows
// and the design did not change.
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
      // The penalty rows' histories and penalties (and their parameters, in Describe).
      for (int64_t t : r.prompt_tokens) h = Mix(h, static_cast<uint64_t>(t));
      for (int64_t t : r.output_tokens) h = Mix(h, static_cast<uint64_t>(t) + (1ULL << 32));
      if (r.HasHistory()) h = Mix(h, FixedHash(Describe(r)));
      // The logit-bias rows' biases (bit patterns) and minimum lengths (in Describe).
      for (std::size_t j = 0; j < r.bias_tokens.size(); ++j) {
        h = Mix(h, static_cast<uint64_t>(r.bias_tokens[j]));
        h = Mix(h, std::bit_cast<uint32_t>(r.bias_values[j]));
      }
      if (!r.bias_tokens.empty() || r.min_tokens != 0) h = Mix(h, FixedHash(Describe(r)));
      // The packed-mask rows' masks and layout (in Describe).
      if (r.mask_layout != 0) {
        for (uint8_t b : r.mask) h = Mix(h, b);
        h = Mix(h, FixedHash(Describe(r)));
      }
    }
    adapters::SamplerInfo all;
    all.capabilities = 0xffffffffu;
    const Design design = MakeDesign(d, all, DesignOptions{4096, true});
    h = Mix(h, FixedHash(design.Canonical()));
    for (std::size_t j = 0; j < design.rows.size(); ++j) {
      const RowCase r = RealizeDesignRow(design, j, d, all, Mix(7, j));
      h = Mix(h, FixedHash(Describe(r)));
      for (uint32_t b : r.bits32) h = Mix(h, b);
      for (uint16_t b : r.bits16) h = Mix(h, b);
      for (uint8_t b : r.mask) h = Mix(h, b);
    }
  }
  EXPECT_EQ(h, 6704055754640080298u) << "row digest " << h;
}

// Issue 9: the boundary rows put a may-keep token in front of DIST-2 under each built-in's
// declared policies and every dtype.
TEST(Plan, BoundaryRowsHaveMayKeepTokens) {
  for (const char* name : {"stable_cpu", "naive", "floor_fix"}) {
    auto s = registry::OpenSampler(name);
    ASSERT_TRUE(s.ok()) << s.error().message;
    for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (const char* row_name : {"top_k_near_tie_V200", "top_p_on_cumsum_V8"}) {
        const auto row = PlannedRowByName(d, row_name, 0xffffffffu);
        ASSERT_TRUE(row.has_value()) << row_name;
        const auto ref = ComputeReference(row->view(), (*s)->info().policies);
        ASSERT_TRUE(ref.ok()) << ref.error().message;
        EXPECT_GE(std::count(ref->keep.begin(), ref->keep.end(), KeepClass::kMayKeep), 1)
            << name << " " << DTypeName(d) << " " << row_name;
      }
    }
  }
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

// A per-class requirement where the class's tolerance puts the profile's out of reach, stated
// in the plan; the fp32 plan is unchanged.
TEST(TolerantNull, PlanStatesPerClassRequirements) {
  Profile standard;
  ASSERT_TRUE(ProfileByName("standard", &standard));
  // A declaration like the test plug-ins': f32 rows, greedy, truncation and masks.
  adapters::SamplerInfo info;
  info.capabilities = SAMPCERT_CAP_F32 | SAMPCERT_CAP_TEMPERATURE_ZERO | SAMPCERT_CAP_TOP_K |
                      SAMPCERT_CAP_TOP_P | SAMPCERT_CAP_MIN_P | SAMPCERT_CAP_MASK;
  info.policies.greedy_tie_break = GreedyTieBreak::kLowestIndex;
  info.policies.accuracy = AccuracyClass::kF32;
  const Plan fp32 = MakePlan(standard, info, 1);
  info.policies.accuracy = AccuracyClass::kF16;
  const Plan fp16 = MakePlan(standard, info, 1);
  ASSERT_EQ(fp32.items.size(), fp16.items.size());
  EXPECT_NE(PlanVersion(fp32), PlanVersion(fp16));
  bool deep = false, probe = false;
  for (std::size_t i = 0; i < fp32.items.size(); ++i) {
    const PlanItem& a = fp32.items[i];
    const PlanItem& b = fp16.items[i];
    EXPECT_EQ(a.required_tv, 0) << a.Id();
    EXPECT_EQ(a.required_tail_change, 0) << a.Id();
    if (a.name == "deep_tail_V180001") {
      // fp16 may flush the deepest set (tokens below 2^-25) to 0: the requirement says so.
      EXPECT_GT(b.required_tail_change, standard.required_tail_change);
      deep = true;
    }
    if (a.name == "rounding_probe_V2") {
      // More draws to see bf16 rounding beyond fp16's admitted interval.
      EXPECT_GT(b.draws, a.draws);
      probe = true;
    }
  }
  EXPECT_TRUE(deep);
  EXPECT_TRUE(probe);
}

}  // namespace
}  // namespace sampcert::properties

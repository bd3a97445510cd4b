// The conformance plan (SPEC.md sections 10-12, REPRO-1): which tests a profile runs against a
// sampler, and everything each test will do, fixed before anything runs. A plan is a function of
// (profile, declared capabilities and policies, seed) alone: every item's inputs, seed, level and
// draw counts are here, so the same plan gives the same results on any machine, under any load,
// with any --jobs or shard split. Nothing measured at run time (wall-clock, a sampler's speed)
// enters it; a shard (--shard I/N) runs items i with i mod N == I, and the union of shards is the
// unsharded run.
#ifndef SAMPCERT_PROPERTIES_PLAN_H_
#define SAMPCERT_PROPERTIES_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "adapters/sampler.h"
#include "properties/families.h"
#include "properties/row_case.h"

namespace sampcert::properties {

struct Profile {
  std::string name;
  int valid_cases_per_dtype = 0;  // generated rows per dtype (about 15% of them invalid)
  std::size_t max_vocab = 0;
  double required_tv = 0;            // every distribution test must detect this TV w.p. 0.9
  uint64_t max_draws = 0;            // per distribution test
  double false_alarm_budget = 1e-3;  // per full run
  double rerun_reserve = 0.2;        // share of the budget kept for re-running suspicious tests
  int shrink_steps = 0;              // bound on shrinking steps per failure
  uint64_t shrink_work = 0;          // bound on the logits of the candidates tried per failure
  int shrink_failures = 0;           // (property, family) failures shrunk per item
  // Every tail set of TAIL-1 must detect this relative change of its mass w.p. 0.9.
  double required_tail_change = 0.2;
  // The draw budget (issue 10): declared draw time per statistical test, in seconds. A sampler
  // declaring its cost (draw_cost_ns_per_token) gets at most target / (cost x V) draws per test
  // on a row of V tokens; tests that cannot reach their power with them are Inconclusive.
  double draw_time_target_s = 20;
  // The covering design (coverage.h): whether it covers the truncation axes' triples as well as
  // every pair, and the draws of each valid design row pooled into DIST-3 (its own family,
  // "design", and the test over all rows).
  bool design_truncation_triples = true;
  uint64_t design_draws_per_row = 1024;
};
bool ProfileByName(const std::string& name, Profile* out);

// Sequential looks (SPEC STAT-4): every distribution and tail test looks at these fractions of
// its planned draws (the draws of look k are the first n_k of one stream) and spends its level
// by Bonferroni over the looks in these shares (most of it at the last look, so that a correct
// sampler pays little for the early looks).
inline constexpr int kLooks = 4;
inline constexpr int kLookDivisor[kLooks] = {64, 16, 4, 1};
inline constexpr double kLookShare[kLooks] = {1.0 / 16, 1.0 / 16, 1.0 / 8, 3.0 / 4};
// The cumulative draws of the looks of a test of n draws (strictly increasing, the last is n;
// looks that would repeat an earlier count are left out), and the level of each look.
std::vector<uint64_t> LookDraws(uint64_t n);
std::vector<double> LookLevels(uint64_t n, double level);

// The run's explicit choices that change the plan (REPRO-1: they are part of it).
struct PlanOptions {
  uint64_t max_draws = 0;  // --max-draws: per statistical test (its first run); 0 = none
  // --draw-time: replaces the profile's draw_time_target_s (STAT-4b) where > 0.
  double draw_time_s = 0;
};

// The declared cost of one draw per vocabulary token, in ns (0: not declared). One accessor so
// the plan reads the declaration in one place.
double DeclaredDrawCostNsPerToken(const adapters::SamplerInfo& info);

// One unit of the plan: the generated rows of one dtype, one statistical test on a planned row,
// or one declared deviation (its family: families.h).
struct PlanItem {
  ItemKind kind = ItemKind::kGeneratedRows;
  std::string dtype;  // "f32", "f16", "bf16"
  std::string name;   // planned row name (statistical items)
  double level = 0;   // its share of the false-alarm budget (statistical items)
  double rerun_level = 0;
  uint64_t seed = 0;         // the item's own seed, from the plan's seed and its name
  uint64_t draws = 0;        // all planned draws of the first run (statistical items)
  uint64_t rerun_draws = 0;  // the re-run after a rejection: 4x draws, from a fresh seed
  // The sequential looks of the first run and of the re-run (cumulative draws) and each look's
  // level (summing to level and rerun_level). DIST-3 (the deterministic item) has one look.
  std::vector<uint64_t> looks, rerun_looks;
  std::vector<double> look_levels, rerun_look_levels;
  // The draws the profile's required power needs at the last look's level, before the draw
  // budget; draws < required_draws means the budget capped the test (it is then Inconclusive
  // unless it fails).
  uint64_t required_draws = 0;
  uint64_t draw_cap = 0;  // the budget's cap on this test's draws (0: none)
  // The sub-tests sharing the item's level equally (Bonferroni): distribution items run the
  // G-test, the score test on log p and the band-conditional score test; tail items one exact
  // binomial per nested tail set.
  int subtests = 1;
  // What the test is powered for where the declared accuracy class's tolerance puts the
  // profile's requirement out of reach at the profile's draws (TOL-7): the TV (distribution
  // items) or the relative tail change (tail items) the plan's draws detect w.p. 0.9 under the
  // class's null. 0: the profile's requirement.
  double required_tv = 0;
  double required_tail_change = 0;
  // Generated-rows items: the rows of the dtype's covering design (coverage.h) and its digest
  // (FixedHash of Design::Canonical), so that a change of the design changes the plan.
  uint64_t design_rows = 0;
  uint64_t design_digest = 0;
  std::string Id() const {
    return dtype + "/" + (name.empty() ? std::string(FamilyOf(kind).name) : name);
  }
};

struct Plan {
  Profile profile;
  uint64_t seed = 0;
  std::vector<PlanItem> items;
  PlanOptions options;
  double draw_cost_ns_per_token = 0;  // the declaration the budget used
};

// The requirement an item is held to: its own (per accuracy class) where set, else the profile's.
double RequiredTv(const Plan& plan, const PlanItem& item);
double RequiredTailChange(const Plan& plan, const PlanItem& item);

// The plan for a sampler's declaration. NotSupported properties are reported by the items.
Plan MakePlan(const Profile& profile, const adapters::SamplerInfo& info, uint64_t seed,
              const PlanOptions& options = {});

// The plan as text, one line per statistical item (draws, looks, levels, cap) and the totals:
// `sampcert plan` prints it.
std::string DescribePlan(const Plan& plan);

// A short hex digest of everything the plan fixes (profile, seed, items with their levels,
// seeds and draw counts): reports carry it, merge refuses shards of different plans and diff
// says "plan changed" instead of comparing statuses.
std::string PlanVersion(const Plan& plan);

// The planned rows of the statistical tests, by name, every planned-row family's in table order
// (also used by the calibration test).
std::vector<std::pair<std::string, RowCase>> PlannedRows(DType dtype, uint32_t capabilities);
std::optional<RowCase> PlannedRowByName(DType dtype, const std::string& name,
                                        uint32_t capabilities);

// Helpers shared by the plan and the items.
DType DTypeFromName(const std::string& s);
RowCase MakeRow(DType dtype, const std::vector<float>& logits, float t, uint64_t row_id);
// An LLM-like row: a bell-shaped body (sd 2) and four spikes at 6..9, from a portable stream.
std::vector<float> LlmLike(std::size_t v, uint64_t seed);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_PLAN_H_

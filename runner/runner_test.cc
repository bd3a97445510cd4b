// The runner's isolation: a plug-in that crashes and one that hangs become Crash and Timeout
// results for the items they broke, and every other item of the plan still runs. Also: shards
// are a partition of the plan.
#include "runner/runner.h"

#include <gtest/gtest.h>

#include <set>

#include "adapters/sampler.h"
#include "registry/open_sampler.h"

namespace sampcert::runner {

using properties::MakePlan;
using properties::Profile;
using properties::ProfileByName;
namespace {

TEST(Runner, CrashesAndHangsBecomeStatusesAndTheRunGoesOn) {
  auto s = registry::OpenSampler(MISBEHAVING_PLUGIN_PATH);
  ASSERT_TRUE(s.ok()) << s.error().message;
  Profile profile;
  ASSERT_TRUE(ProfileByName("quick", &profile));
  profile.valid_cases_per_dtype = 5;
  const Plan plan = MakePlan(profile, (*s)->info(), 3);
  RunOptions opts;
  opts.jobs = 2;
  opts.item_timeout_s = 3;
  opts.time_budget_s = 2;
  std::set<std::string> done_items;
  opts.progress = [&](std::size_t, std::size_t, const PlanItem& item) {
    done_items.insert(item.dtype + "/" + item.name);
  };
  const std::vector<TestResult> results = RunPlan(**s, MISBEHAVING_PLUGIN_PATH, plan, opts);
  EXPECT_EQ(done_items.size(), plan.items.size());  // every item finished one way or another
  bool crash = false, timeout = false, ran = false;
  for (const TestResult& r : results) {
    if (r.status == Status::kCrash && r.family == "greedy_ties") {
      crash = true;
      // SIGSEGV, or under AddressSanitizer (which catches the fault itself) its exit status.
      EXPECT_TRUE(r.note.find("signal 11") != std::string::npos ||
                  r.note.find("exited with status") != std::string::npos)
          << r.note;
    }
    if (r.status == Status::kTimeout && r.family == "near_ties_V16") timeout = true;
    if (r.status == Status::kFail && r.family == "flat_V64") ran = true;  // token 0 every time
  }
  EXPECT_TRUE(crash);
  EXPECT_TRUE(timeout);
  EXPECT_TRUE(ran);
}

// A slow sampler (the minimal plug-in draws in O(V)) with a budget that cannot buy the profile's
// power is Inconclusive, never a silent Pass.
TEST(Runner, ShardsPartitionThePlan) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok());
  Profile profile;
  ASSERT_TRUE(ProfileByName("standard", &profile));
  const Plan plan = MakePlan(profile, (*s)->info(), 1);
  std::multiset<std::string> seen;
  for (int i = 0; i < 3; ++i) {
    RunOptions o;
    o.shard_index = i;
    o.shard_count = 3;
    for (const PlanItem& it : ShardItems(plan, o)) seen.insert(it.kind + it.dtype + it.name);
  }
  EXPECT_EQ(seen.size(), plan.items.size());
  for (const PlanItem& it : plan.items) EXPECT_EQ(seen.count(it.kind + it.dtype + it.name), 1u);
  // The levels are fixed by the plan, not the shard: Bonferroni over every statistical item.
  double total = 0;
  for (const PlanItem& it : plan.items) total += it.level + it.rerun_level;
  EXPECT_LE(total, profile.false_alarm_budget);
  EXPECT_GT(total, 0.5 * profile.false_alarm_budget);
}

}  // namespace
}  // namespace sampcert::runner

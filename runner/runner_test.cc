// The runner's isolation: a plug-in that crashes and one that hangs become Crash and Timeout
// results for the items they broke, and every other item of the plan still runs; a time budget
// makes a run incomplete, never a status; a worker's message is accepted only with its nonce
// and exactly the planned keys. Also: shards are a partition of the plan.
// (The hostile plug-in's misbehaviors run through the sampcert tool: tests/hostile_test.sh.)
#include "runner/runner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "adapters/sampler.h"
#include "registry/open_sampler.h"
#include "results/result_json.h"

namespace sampcert::runner {

using properties::MakePlan;
using properties::Profile;
using properties::ProfileByName;
namespace {

SamplerOpener Opener(const std::string& arg) {
  return [arg] { return registry::OpenSampler(arg); };
}

TEST(Runner, CrashesAndHangsBecomeStatusesAndTheRunGoesOn) {
  RunOptions opts;
  opts.jobs = 2;
  opts.item_timeout_s = 3;
  auto info = Describe(Opener(MISBEHAVING_PLUGIN_PATH), opts);
  ASSERT_TRUE(info.ok()) << info.error().message;
  Profile profile;
  ASSERT_TRUE(ProfileByName("quick", &profile));
  profile.valid_cases_per_dtype = 5;
  const Plan plan = MakePlan(profile, *info, 3);
  std::set<std::string> done_items;
  opts.progress = [&](const Progress& p) {
    done_items.insert(p.item->dtype + "/" + p.item->name);
    EXPECT_GT(p.estimated_total_s, 0);
  };
  auto outcome =
      RunPlan(Opener(MISBEHAVING_PLUGIN_PATH), MISBEHAVING_PLUGIN_PATH, plan, *info, opts);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->complete);
  EXPECT_EQ(done_items.size(), plan.items.size());  // every item finished one way or another
  bool crash = false, timeout = false, ran = false;
  for (const TestResult& r : outcome->results) {
    if (r.status == Status::kCrash && r.family == "greedy_ties") {
      crash = true;
      // SIGSEGV, or under AddressSanitizer (which catches the fault itself) its exit status.
      EXPECT_TRUE(r.note.find("signal 11") != std::string::npos ||
                  r.note.find("exited with status") != std::string::npos)
          << r.note;
      EXPECT_NE(r.note.find("during sample()"), std::string::npos) << r.note;
    }
    if (r.status == Status::kTimeout && r.family == "near_ties_V16") {
      timeout = true;
      // Stopped by its CPU time, not the wall clock, and says how to get a complete run.
      EXPECT_NE(r.note.find("CPU time"), std::string::npos) << r.note;
      EXPECT_NE(r.note.find("--item-timeout"), std::string::npos) << r.note;
    }
    if (r.status == Status::kFail && r.family == "flat_V64") ran = true;  // token 0 every time
  }
  EXPECT_TRUE(crash);
  EXPECT_TRUE(timeout);
  EXPECT_TRUE(ran);
}

// --time-budget stops the run and marks it incomplete; it never turns an item into a Timeout
// or Inconclusive, and never changes what an item tests (REPRO-1).
TEST(Runner, TimeBudgetStopsTheRunIncompleteWithoutChangingStatuses) {
  RunOptions opts;
  opts.item_timeout_s = 60;
  opts.time_budget_s = 1;
  auto info = Describe(Opener(MISBEHAVING_PLUGIN_PATH), opts);
  ASSERT_TRUE(info.ok()) << info.error().message;
  Profile profile;
  ASSERT_TRUE(ProfileByName("quick", &profile));
  const Plan plan = MakePlan(profile, *info, 1);
  opts.only_item = "f32/near_ties_V16";  // spins forever
  const auto started = std::chrono::steady_clock::now();
  auto outcome =
      RunPlan(Opener(MISBEHAVING_PLUGIN_PATH), MISBEHAVING_PLUGIN_PATH, plan, *info, opts);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 30);
  EXPECT_FALSE(outcome->complete);
  EXPECT_NE(outcome->incomplete_reason.find("--time-budget"), std::string::npos)
      << outcome->incomplete_reason;
  EXPECT_TRUE(outcome->results.empty());  // the unfinished item is dropped, not a status
}

// A sampler that cannot be loaded is an error naming the cause, from the describe worker.
TEST(Runner, DescribeNamesWhyASamplerCannotBeLoaded) {
  RunOptions opts;
  auto missing = Describe(Opener("/nonexistent/libx.so"), opts);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no such file"), std::string::npos)
      << missing.error().message;
  auto builtin = Describe(Opener("stable_cpu"), opts);
  ASSERT_TRUE(builtin.ok()) << builtin.error().message;
  EXPECT_EQ(builtin->name, "stable_cpu");
  // The declaration survives the trip through the describe worker whole.
  EXPECT_EQ(InfoToJson(InfoFromJson(InfoToJson(*builtin))), InfoToJson(*builtin));
}

// The parent accepts exactly the results the plan requires, with the item's nonce.
TEST(Runner, WorkerMessagesAreCheckedAgainstThePlannedKeys) {
  PlanItem item;
  item.kind = properties::ItemKind::kGeneratedRows;
  item.dtype = "f32";
  adapters::SamplerInfo info;
  info.name = "fake";
  const nlohmann::json declared = InfoToJson(info);
  auto result = [](const std::string& property, const std::string& family) {
    TestResult r;
    r.property = property;
    r.dtype = "f32";
    r.family = family;
    return results::ToJson(r);
  };
  const ResultKeys want = {{"ABI-1", "deterministic"}, {"PROB-1", "llm_like"}};
  auto message = [&](const std::string& nonce, nlohmann::json results) {
    return nlohmann::json{{"nonce", nonce}, {"info", declared}, {"results", results}}.dump();
  };
  const nlohmann::json both = {result("PROB-1", "llm_like"), result("ABI-1", "deterministic")};
  auto ok = CheckWorkerMessage(message("n1", both), "n1", declared, item, &want);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->size(), 2u);
  // Fewer, extra, forged, foreign, malformed: each refused, naming what was received.
  auto fewer = CheckWorkerMessage(message("n1", {result("ABI-1", "deterministic")}), "n1", declared,
                                  item, &want);
  ASSERT_FALSE(fewer.ok());
  EXPECT_NE(fewer.error().message.find("missing: PROB-1/llm_like"), std::string::npos)
      << fewer.error().message;
  nlohmann::json three = both;
  three.push_back(result("DIST-1", "x"));
  auto extra = CheckWorkerMessage(message("n1", three), "n1", declared, item, &want);
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.error().message.find("unexpected: DIST-1/x"), std::string::npos);
  auto forged = CheckWorkerMessage("[]", "n1", declared, item, &want);
  ASSERT_FALSE(forged.ok());
  EXPECT_NE(forged.error().message.find("received '[]'"), std::string::npos)
      << forged.error().message;
  EXPECT_FALSE(CheckWorkerMessage(message("n2", both), "n1", declared, item, &want).ok());
  EXPECT_FALSE(
      CheckWorkerMessage("{\"nonce\": \"n1\", \"info\"", "n1", declared, item, &want).ok());
  nlohmann::json bad_status = both;
  bad_status[0]["status"] = "Excellent";
  EXPECT_FALSE(CheckWorkerMessage(message("n1", bad_status), "n1", declared, item, &want).ok());
  // Another declaration in the worker: a Crash naming the difference.
  adapters::SamplerInfo other = info;
  other.version = "2";
  auto differs = CheckWorkerMessage(
      nlohmann::json{{"nonce", "n1"}, {"info", InfoToJson(other)}, {"results", both}}.dump(), "n1",
      declared, item, &want);
  ASSERT_FALSE(differs.ok());
  EXPECT_NE(differs.error().message.find("version"), std::string::npos) << differs.error().message;
  // Without the plan's keys, the runner's own ABI-1 result is still required.
  EXPECT_FALSE(CheckWorkerMessage(message("n1", {result("PROB-1", "llm_like")}), "n1", declared,
                                  item, nullptr)
                   .ok());
}

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
    for (const PlanItem& it : ShardItems(plan, o)) seen.insert(it.Id());
  }
  EXPECT_EQ(seen.size(), plan.items.size());
  for (const PlanItem& it : plan.items) EXPECT_EQ(seen.count(it.Id()), 1u);
  // The levels are fixed by the plan, not the shard: Bonferroni over every statistical item.
  double total = 0;
  for (const PlanItem& it : plan.items) total += it.level + it.rerun_level;
  // Each item runs at half its Bonferroni share (the brief's margin): half the budget in all.
  EXPECT_NEAR(total, 0.5 * profile.false_alarm_budget, 1e-15);
}

}  // namespace
}  // namespace sampcert::runner

// Runs a plan's items, each in a forked worker process by default: a sampler that crashes
// (a signal, an abort) or hangs (past the item's time limit) becomes a Crash or Timeout result
// for that item, and the run goes on. --jobs N runs N workers at once.
#ifndef SAMPCERT_RUNNER_RUNNER_H_
#define SAMPCERT_RUNNER_RUNNER_H_

#include <functional>
#include <string>
#include <vector>

#include "adapters/sampler.h"
#include "properties/conformance.h"

namespace sampcert::runner {

using properties::Plan;
using properties::PlanItem;
using results::Status;
using results::TestResult;

struct RunOptions {
  int jobs = 1;
  int shard_index = 0;
  int shard_count = 1;
  double time_budget_s = 0;  // whole-run wall-clock limit (0: none); see the runner issue
  double item_timeout_s = 300;
  bool isolate = true;  // fork a worker per item
  // Restrict to items of this dtype / this "dtype/name" (reproduction), and one case.
  std::string only_dtype;
  std::string only_item;
  int64_t only_case = -1;
  std::function<void(std::size_t done, std::size_t total, const PlanItem& item)> progress;
};

// The items this shard runs (index mod shard_count == shard_index, after the filters).
std::vector<PlanItem> ShardItems(const Plan& plan, const RunOptions& options);

std::vector<TestResult> RunPlan(adapters::Sampler& sampler, const std::string& sampler_arg,
                                const Plan& plan, const RunOptions& options);

}  // namespace sampcert::runner

#endif  // SAMPCERT_RUNNER_RUNNER_H_

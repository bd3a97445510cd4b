// The conformance plan and its execution: which tests a profile runs against a sampler, each
// test's share of the run's false-alarm budget, and the properties of SPEC.md section 10 run on
// generated rows (deterministic ones, shrunk on failure) and on planned rows (statistical ones).
//
// The plan is a list of items fixed by (profile, declared capabilities) alone, so a shard
// (--shard I/N) runs items i with i mod N == I and the union of shards is the unsharded run.
// Each item runs through the Sampler handle only, and is designed to run in a worker process:
// its results are plain data (serializable), and a crash or hang of the sampler becomes the
// item's status (runner.h).
#ifndef SAMPCERT_PROPERTIES_CONFORMANCE_H_
#define SAMPCERT_PROPERTIES_CONFORMANCE_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "adapters/sampler.h"
#include "properties/row_case.h"
#include "results/test_result.h"

namespace sampcert::properties {

// The result model lives below properties/ and reports/ (results/).
using results::Failure;
using results::Status;
using results::TestResult;

struct Profile {
  std::string name;
  int valid_cases_per_dtype = 0;  // generated rows per dtype (about 15% of them invalid)
  std::size_t max_vocab = 0;
  double required_tv = 0;            // every distribution test must detect this TV w.p. 0.9
  uint64_t max_draws = 0;            // per distribution test
  double false_alarm_budget = 1e-3;  // per full run
  double rerun_reserve = 0.2;        // share of the budget kept for re-running suspicious tests
  int shrink_steps = 0;              // bound on shrinking steps per failure
};
bool ProfileByName(const std::string& name, Profile* out);

// One unit of the plan: the deterministic properties of one dtype, or one statistical test.
struct PlanItem {
  std::string kind;   // "deterministic", "distribution", "tail", "deviation"
  std::string dtype;  // "f32", "f16", "bf16"
  std::string name;   // planned row name (statistical items)
  double level = 0;   // its share of the false-alarm budget (statistical items)
  double rerun_level = 0;
};

struct Plan {
  Profile profile;
  uint64_t seed = 0;
  std::vector<PlanItem> items;
};

// The plan for a sampler's declaration. NotSupported properties are reported by the items.
Plan MakePlan(const Profile& profile, const adapters::SamplerInfo& info, uint64_t seed);

// Runs one item against the sampler. Everything it tests (rows, seeds, draw counts) follows
// from the plan alone (REPRO-1): no clock, no measured speed. `only_case` >= 0 re-runs a single
// generated case of a deterministic item (the reproduction command).
std::vector<TestResult> RunItem(adapters::Sampler& sampler, const std::string& sampler_arg,
                                const Plan& plan, const PlanItem& item, int64_t only_case = -1);

// The properties of SPEC.md section 10 the runner checks, with one line each.
const std::vector<std::pair<std::string, std::string>>& PropertyCatalog();

// The planned rows of the statistical tests, by name (also used by the calibration test).
std::vector<std::pair<std::string, RowCase>> PlannedRows(DType dtype, uint32_t capabilities);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_CONFORMANCE_H_

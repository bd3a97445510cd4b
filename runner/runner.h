// Runs a plan's items, each in a worker process (runner/worker.h) by default, and nothing of the
// sampler in this process: a "describe" worker loads the sampler (library constructors,
// get_info, create) and sends its declaration back as data; every item's worker loads and
// creates its own sampler, checks that it declares the same, runs the item and sends its results
// back over a private channel with the item's nonce (runner/worker_message.h). Whatever the
// sampler does (a signal, exit(), a hang, a forked child, a forged result, writes outside its
// buffers) becomes a status of the items it broke and the run goes on. `sampcert info` and
// `sampcert sample` open samplers through the same workers. SPEC.md section 14 states the
// threat model and what is guaranteed.
#ifndef SAMPCERT_RUNNER_RUNNER_H_
#define SAMPCERT_RUNNER_RUNNER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "adapters/sampler.h"
#include "properties/conformance.h"
#include "runner/worker_message.h"

namespace sampcert::runner {

using properties::Plan;
using properties::PlanItem;
using results::Status;
using results::TestResult;

// Opens a fresh sampler (built-in or plug-in). Called only inside workers, unless isolate is off.
using SamplerOpener = std::function<Expected<std::unique_ptr<adapters::Sampler>>()>;

struct Progress {
  std::size_t done = 0, total = 0;
  const PlanItem* item = nullptr;  // the item just finished
  double elapsed_s = 0;
  double estimated_total_s = 0;  // from the items finished so far; 0 until one has
};

struct RunOptions {
  int jobs = 1;
  int shard_index = 0;
  int shard_count = 1;
  // Whole-run wall-clock limit in seconds (0: none). When it is reached no item starts, running
  // items are stopped and dropped, and the run is incomplete. It never changes a status.
  double time_budget_s = 0;
  // CPU seconds (user + system, every thread of the worker) one item may use: RLIMIT_CPU in
  // the worker. Past it the item is a Timeout.
  double item_timeout_s = 300;
  // Wall-clock backstop for a worker that sleeps or blocks instead of computing (0: derived,
  // 4 x item_timeout_s + 30 s, so that load on the host never turns an item into a Timeout).
  double wall_backstop_s = 0;
  // RLIMIT_AS of a worker in bytes (0: none). Off under the sanitizers (their shadow memory
  // reserves terabytes of address space) and for CUDA (the driver reserves it too).
  uint64_t memory_limit_bytes = 0;
  bool isolate = true;  // false: everything in this process (--no-isolation), no protection
  // Restrict to items of this dtype / this "dtype/name" (reproduction), and one case.
  std::string only_dtype;
  std::string only_item;
  int64_t only_case = -1;
  std::function<void(const Progress&)> progress;
  // Told, once per process, why a worker runs without its system-call filter (SPEC.md
  // section 14: the filter is off where seccomp cannot be loaded, or in a build without it).
  std::function<void(const std::string&)> warn;
};

// The items this shard runs (index mod shard_count == shard_index, after the filters).
std::vector<PlanItem> ShardItems(const Plan& plan, const RunOptions& options);

// What a sampler declares, from a describe worker (or in-process when !options.isolate). Any
// failure to load, describe or create is an error naming its cause: the error's message, or
// the signal / exit status and the call during which it happened. The host's own failures
// (fork, pipes, the open-file limit) have code kInternal; the sampler's have any other.
Expected<adapters::SamplerInfo> Describe(const SamplerOpener& open, const RunOptions& options);

struct RunOutcome {
  std::vector<TestResult> results;
  bool complete = true;
  std::string incomplete_reason;  // e.g. "interrupted by SIGINT after 12 of 40 items"
  int signal = 0;                 // the signal that interrupted the run, 0 if none
};

// Runs the shard's items. `declared` is what Describe returned: every worker's sampler must
// declare exactly that. An error is a host failure (out of file descriptors, fork failed), not
// the sampler's fault: the caller exits 2. SIGINT / SIGTERM during the run stop it: the workers
// are killed and the outcome is incomplete.
Expected<RunOutcome> RunPlan(const SamplerOpener& open, const std::string& sampler_arg,
                             const Plan& plan, const adapters::SamplerInfo& declared,
                             const RunOptions& options);

// The declaration as data (every field, policies as their ABI numbers) and back; the describe
// worker's message, and what each item's worker is compared against (adapters/declarations.h).
using adapters::InfoFromJson;
using adapters::InfoToJson;

// The ABI-1 result of an item: Pass, or Fail naming the first call that used a buffer outside
// the header's rules (adapters::Sampler records them).
TestResult AbiResult(const adapters::Sampler& sampler, const std::string& sampler_arg,
                     const Plan& plan, const PlanItem& item);

// `sampcert sample`: one call's draws, in a worker with the limits of a plan item. Status
// kPass: `tokens`; kFail: the sampler returned an error (`code`, `message`); kCrash / kTimeout:
// the worker died or ran out of time (`message` says how, as a plan item's note would).
struct SampleOutcome {
  Status status = Status::kPass;
  std::vector<int64_t> tokens;
  ErrorCode code = ErrorCode::kOk;
  std::string message;
};

// Draws `draws` tokens per row of `batch` under `seed`. `declared` is what Describe returned:
// the worker's sampler must declare exactly that (else kCrash). An error is a host failure.
Expected<SampleOutcome> SampleInWorker(const SamplerOpener& open,
                                       const adapters::SamplerInfo& declared,
                                       const adapters::Batch& batch, uint64_t seed, uint64_t draws,
                                       const RunOptions& options);

}  // namespace sampcert::runner

#endif  // SAMPCERT_RUNNER_RUNNER_H_

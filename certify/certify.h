// Certify(): one certification run as a library call, the same for every front end (the
// `sampcert run` command, and any other that links this): describe the sampler in a worker,
// make the plan, run it (isolated), apply the expectations, and publish the report set
// (DIR/report.{json,html,junit.xml} with report.manifest.json). Every option is checked before
// any work, the output folder included; a sampler that cannot be loaded or described and a host
// failure are errors with their cause, never a verdict.
#ifndef SAMPCERT_CERTIFY_CERTIFY_H_
#define SAMPCERT_CERTIFY_CERTIFY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "properties/plan.h"
#include "reports/report.h"
#include "runner/runner.h"

namespace sampcert::certify {

// More workers than this is a typo, not a machine (each is a process with its own pipe).
inline constexpr int kMaxJobs = 256;
// --item-timeout and --time-budget at most (about 116 days): beyond is a typo, and an item
// timeout of 1e20 s overflowed where it became RLIMIT_CPU (every item a Timeout at once).
inline constexpr double kMaxSeconds = 1e7;

struct CertifyRequest {
  std::string sampler;
  std::optional<std::string> sampler_config;  // --sampler-config, for create()
  std::string profile = "standard";
  uint64_t seed = 1;
  int jobs = 1;
  std::string shard = "0/1";
  double time_budget_s = 0;  // whole-run wall-clock limit; reached: the run is incomplete
  std::string out_dir = "sampcert-report";
  std::string expect_file;         // expectations: the known failures
  bool expect_non_strict = false;  // a known failure that now passes is reported, not failed
  bool no_isolation = false;
  double item_timeout_s = 300;  // CPU seconds a plan item may use; past it a Timeout
  std::string only_dtype;
  std::string only_item;
  int64_t only_case = -1;
  bool progress = true;    // the CLI's progress line (front ends pass on_progress instead)
  uint64_t max_draws = 0;  // --max-draws: per statistical test (part of the plan); 0 = none
  // --draw-time: the declared draw time per statistical test for a sampler that declares a draw
  // cost (SPEC STAT-4b; part of the plan); 0 = the profile's (20 s).
  double draw_time_s = 0;
  // --no-speed: no speed phase after the run (SPEC REPORT-3), so the report has no speed section.
  bool no_speed = false;
  // Called after every finished item (on the calling thread).
  std::function<void(const runner::Progress&)> on_progress;
  // Called with a warning the run gives once (the workers' system-call filter is off, say).
  std::function<void(const std::string&)> on_warning;
};

// This build's version (CMake's PROJECT_VERSION) and git revision, as report.json's context
// and `sampcert --version` give them.
std::string_view ToolVersion();
std::string_view GitRevision();

// A worker's address-space limit for this build (0: none), for every command that opens a
// sampler in a worker: `run`, `plan`, `info` and `sample`.
uint64_t DefaultMemoryLimit();

// What went wrong before there was a verdict to report.
enum class CertifyError {
  kNone,
  kUsage,    // an option is invalid (checked before any work)
  kSampler,  // the sampler cannot be loaded, described or created
  kHost,     // the host failed (fork, descriptors, the output folder)
};

// A describe step that failed: the host's own failure (kInternal: fork, pipes, the open-file
// limit) or the sampler's (it cannot be loaded, described or created).
CertifyError DescribeFailure(const Error& e);

struct CertifyOutcome {
  CertifyError error = CertifyError::kNone;
  std::string message;  // the error, when error != kNone (not yet escaped for a terminal)
  reports::Report report;
  std::string report_path;  // the published report.json
};

CertifyOutcome Certify(const CertifyRequest& request);

// The plan `Certify` would run for the same sampler, profile, seed and --max-draws, from the
// sampler's declaration (described in a worker), without running it.
struct PlanOutcome {
  CertifyError error = CertifyError::kNone;
  std::string message;
  properties::Plan plan;
};
PlanOutcome PlanFor(const CertifyRequest& request);

}  // namespace sampcert::certify

#endif  // SAMPCERT_CERTIFY_CERTIFY_H_

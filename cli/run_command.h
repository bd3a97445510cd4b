// `sampcert run`: certifies one sampler against a profile's plan, prints a summary (with a
// progress line on a terminal) and publishes DIR/report.{json,html,junit.xml} as one set (with
// report.manifest.json). Exit codes: 0 conformant (only Pass, Warning, NotSupported, Waived), 1
// not conformant (or, with --expect, any FIX / REGRESSION / DIFFERENCE against the
// expectations, or a run stopped by --time-budget: incomplete), 2 usage errors (every option is
// checked before any work, --out included), a sampler that cannot be loaded, or a host error;
// 128 + N when signal N (SIGINT, SIGTERM) stopped the run, after writing what was finished as an
// incomplete report.
#ifndef SAMPCERT_CLI_RUN_COMMAND_H_
#define SAMPCERT_CLI_RUN_COMMAND_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace sampcert::cli {

// More workers than this is a typo, not a machine (each is a process with its own pipe).
inline constexpr int kMaxJobs = 256;

struct RunRequest {
  std::string sampler;
  std::optional<std::string> sampler_config;  // --sampler-config, for create()
  std::string profile = "standard";
  uint64_t seed = 1;
  int jobs = 1;
  std::string shard = "0/1";
  double time_budget_s = 0;  // whole-run wall-clock limit; reached: the run is incomplete
  std::string out_dir = "sampcert-report";
  std::string expect_file;  // expectations / waivers
  bool no_isolation = false;
  double item_timeout_s = 300;  // CPU seconds a plan item may use; past it a Timeout
  std::string only_dtype;
  std::string only_item;
  int64_t only_case = -1;
  bool progress = true;
  uint64_t max_draws = 0;  // --max-draws: per statistical test (part of the plan); 0 = none
};

int RunRun(const RunRequest& request, std::ostream& out, std::ostream& err);

// A worker's address-space limit for this build (0: none), for every command that opens a
// sampler in a worker: `run`, `plan`, `info` and `sample`.
uint64_t DefaultMemoryLimit();

// `sampcert plan`: prints the plan `run` would run for the same sampler, profile, seed and
// --max-draws (every statistical test's draws, looks, levels and budget cap, and the totals),
// without running it. Exit codes: 0, or 2 for usage errors and a sampler that cannot be loaded.
int RunPlanDump(const RunRequest& request, std::ostream& out, std::ostream& err);

}  // namespace sampcert::cli

#endif  // SAMPCERT_CLI_RUN_COMMAND_H_

// `sampcert run`: certifies one sampler against a profile's plan (certify::Certify), prints a
// summary (with a progress line on a terminal) and publishes DIR/report.{json,html,junit.xml}
// as one set (with report.manifest.json). The exit code is the verdict's (reports/verdict.h, SPEC
// section 11): 0 CONFORMANT, or with --expect matching its known failures, or a partial run (shard,
// filters) with no new failure; 1 NOT CONFORMANT (with --expect: a difference from the
// expectations); 2 usage errors (every option is checked before any work, --out included); 3 a
// sampler that cannot be loaded or described; 4 a host error; 5 a run stopped by --time-budget
// (incomplete); 128 + N when signal N (SIGINT, SIGTERM) stopped the run, after writing what was
// finished as an incomplete report.
#ifndef SAMPCERT_CLI_RUN_COMMAND_H_
#define SAMPCERT_CLI_RUN_COMMAND_H_

#include <ostream>

#include "certify/certify.h"

namespace sampcert::cli {

using certify::DefaultMemoryLimit;
using certify::kMaxJobs;
using RunRequest = certify::CertifyRequest;

// The exit code of an error before any verdict (reports/verdict.h): 2, 3 or 4.
int ExitCodeOf(certify::CertifyError e);

int RunRun(const RunRequest& request, std::ostream& out, std::ostream& err);

// `sampcert plan`: prints the plan `run` would run for the same sampler, profile, seed and
// --max-draws (every statistical test's draws, looks, levels and budget cap, and the totals),
// without running it. Exit codes: 0, 2 for usage errors, 3 for a sampler that cannot be loaded.
int RunPlanDump(const RunRequest& request, std::ostream& out, std::ostream& err);

}  // namespace sampcert::cli

#endif  // SAMPCERT_CLI_RUN_COMMAND_H_

// `sampcert run`: certifies one sampler against a profile's plan (certify::Certify), prints a
// summary (with a progress line on a terminal) and publishes DIR/report.{json,html,junit.xml}
// as one set (with report.manifest.json). Exit codes: 0 conformant (only Pass, Warning,
// NotSupported, Waived), 1 not conformant (or, with --expect, any FIX / REGRESSION / DIFFERENCE
// against the expectations, or a run stopped by --time-budget: incomplete), 2 usage errors
// (every option is checked before any work, --out included), a sampler that cannot be loaded, or
// a host error; 128 + N when signal N (SIGINT, SIGTERM) stopped the run, after writing what was
// finished as an incomplete report.
#ifndef SAMPCERT_CLI_RUN_COMMAND_H_
#define SAMPCERT_CLI_RUN_COMMAND_H_

#include <ostream>

#include "certify/certify.h"

namespace sampcert::cli {

using certify::DefaultMemoryLimit;
using certify::kMaxJobs;
using RunRequest = certify::CertifyRequest;

int RunRun(const RunRequest& request, std::ostream& out, std::ostream& err);

// `sampcert plan`: prints the plan `run` would run for the same sampler, profile, seed and
// --max-draws (every statistical test's draws, looks, levels and budget cap, and the totals),
// without running it. Exit codes: 0, or 2 for usage errors and a sampler that cannot be loaded.
int RunPlanDump(const RunRequest& request, std::ostream& out, std::ostream& err);

}  // namespace sampcert::cli

#endif  // SAMPCERT_CLI_RUN_COMMAND_H_

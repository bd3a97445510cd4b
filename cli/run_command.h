// `sampcert run`: certifies one sampler against a profile's plan, prints a summary (with a
// progress line on a terminal) and writes DIR/report.json. Exit codes: 0 conformant (only Pass,
// Warning, NotSupported, Waived), 1 not conformant (or, with --expect, any FIX / REGRESSION /
// DIFFERENCE against the expectations), 2 usage errors or a sampler that cannot be loaded.
#ifndef SAMPCERT_CLI_RUN_COMMAND_H_
#define SAMPCERT_CLI_RUN_COMMAND_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace sampcert::cli {

struct RunRequest {
  std::string sampler;
  std::optional<std::string> sampler_config;  // --sampler-config, for create()
  std::string profile = "standard";
  uint64_t seed = 1;
  int jobs = 1;
  std::string shard = "0/1";
  double time_budget_s = 0;  // 0: the profile's default
  std::string out_dir = "sampcert-report";
  std::string expect_file;  // expectations / waivers
  bool no_isolation = false;
  double item_timeout_s = 300;  // a plan item running longer is a Timeout
  std::string only_dtype;
  std::string only_item;
  int64_t only_case = -1;
  bool progress = true;
};

int RunRun(const RunRequest& request, std::ostream& out, std::ostream& err);

}  // namespace sampcert::cli

#endif  // SAMPCERT_CLI_RUN_COMMAND_H_

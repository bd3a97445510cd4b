#include "cli/run_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "adapters/sampler.h"
#include "properties/conformance.h"
#include "registry/open_sampler.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/report.h"
#include "reports/report_json.h"
#include "runner/runner.h"

#ifndef SAMPCERT_GIT_REVISION
#define SAMPCERT_GIT_REVISION "unknown"
#endif
#ifndef SAMPCERT_VERSION
#define SAMPCERT_VERSION "0.0.0"
#endif

namespace sampcert::cli {
namespace {

using nlohmann::json;
using results::TestResult;

std::string CpuName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

}  // namespace

int RunRun(const RunRequest& req, std::ostream& out, std::ostream& err) {
  properties::Profile profile;
  if (!properties::ProfileByName(req.profile, &profile)) {
    fmt::print(err, "error: --profile must be quick, standard or full, not '{}'\n", req.profile);
    return 2;
  }
  int shard_i = 0, shard_n = 1;
  if (std::sscanf(req.shard.c_str(), "%d/%d", &shard_i, &shard_n) != 2 || shard_n < 1 ||
      shard_i < 0 || shard_i >= shard_n) {
    fmt::print(err, "error: --shard must be I/N with 0 <= I < N, not '{}'\n", req.shard);
    return 2;
  }
  reports::Expectations expectations;
  if (!req.expect_file.empty()) {
    std::string why;
    if (!reports::LoadExpectations(req.expect_file, &expectations, &why)) {
      fmt::print(err, "error: {}\n", why);
      return 2;
    }
  }
  auto opened = registry::OpenSampler(req.sampler, req.sampler_config);
  if (!opened.ok()) {
    fmt::print(err, "error: {}\n", opened.error().message);
    return 2;
  }
  adapters::Sampler& sampler = **opened;
  const auto started = std::chrono::steady_clock::now();
  const properties::Plan plan = properties::MakePlan(profile, sampler.info(), req.seed);

  runner::RunOptions opts;
  opts.jobs = std::max(1, req.jobs);
  opts.shard_index = shard_i;
  opts.shard_count = shard_n;
  opts.time_budget_s = req.time_budget_s > 0        ? req.time_budget_s
                       : profile.name == "quick"    ? 4
                       : profile.name == "standard" ? 30
                                                    : 300;
  opts.isolate = !req.no_isolation;
  opts.item_timeout_s = req.item_timeout_s;
  opts.only_dtype = req.only_dtype;
  opts.only_item = req.only_item;
  opts.only_case = req.only_case;
  const bool tty = req.progress && isatty(STDERR_FILENO);
  if (tty) {
    opts.progress = [&err](std::size_t done, std::size_t total, const properties::PlanItem& item) {
      fmt::print(err, "\r\033[K[{}/{}] {} {} {}", done, total, item.kind, item.dtype, item.name);
      err.flush();
    };
  }
  std::vector<TestResult> results = runner::RunPlan(sampler, req.sampler, plan, opts);
  if (tty) fmt::print(err, "\r\033[K");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  reports::Report report;
  // Expectations (also the waiver file): a known failure becomes Waived; a difference either
  // way is reported.
  if (!req.expect_file.empty()) {
    report.expectation_differences = reports::ApplyExpectations(expectations, &results);
  }
  reports::SortResults(&results);
  report.results = std::move(results);
  report.context = {{"tool", "sampcert"},
                    {"tool_version", SAMPCERT_VERSION},
                    {"git_revision", SAMPCERT_GIT_REVISION},
                    {"compiler", std::string("GCC ") + __VERSION__},
                    {"cpu", CpuName()},
                    {"profile", profile.name},
                    {"seed", req.seed},
                    {"plan_version", properties::PlanVersion(plan)},
                    {"shard", req.shard},
                    {"jobs", opts.jobs},
                    {"isolation", opts.isolate ? "fork" : "none"},
                    {"time_budget_s", opts.time_budget_s},
                    {"seconds", reports::Number(seconds)},
                    {"false_alarm_budget", profile.false_alarm_budget},
                    {"required_tv", profile.required_tv},
                    {"expectations", req.expect_file}};
  report.sampler = reports::SamplerToJson(sampler.info(), req.sampler, req.sampler_config);

  std::error_code ec;
  std::filesystem::create_directories(req.out_dir, ec);
  const std::filesystem::path dir(req.out_dir);
  const std::string path = (dir / "report.json").string();
  for (const auto& [file, text] :
       {std::pair{path, reports::ReportToJson(report).dump(2)},
        std::pair{(dir / "report.html").string(), reports::RenderHtml(report)},
        std::pair{(dir / "report.junit.xml").string(), reports::RenderJUnit(report)}}) {
    if (std::string why = reports::WriteFileAtomically(file, text); !why.empty()) {
      fmt::print(err, "error: {}\n", why);
      return 2;
    }
  }
  fmt::print(out, "{}", reports::TextSummary(report, path));
  return reports::Conformant(report) ? 0 : 1;
}

}  // namespace sampcert::cli

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

// A worker's address-space limit: the machine's physical memory, so that a runaway allocation
// fails in the worker (a Crash) instead of swapping the host. None under AddressSanitizer, whose
// shadow memory reserves terabytes of address space; there an out-of-memory worker ends with
// ASan's own report (exit status 1) or the kernel's OOM killer (a SIGKILL the runner names).
// Nor in builds with CUDA: the driver reserves address space far beyond memory (a CUDA
// sampler's out-of-memory is its own cudaErrorMemoryAllocation, returned as an error).
uint64_t DefaultMemoryLimit() {
#if defined(__SANITIZE_ADDRESS__) || defined(SAMPCERT_HAVE_CUDA)
  return 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return 0;
#endif
#endif
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return std::max<uint64_t>(uint64_t{4} << 30,
                            static_cast<uint64_t>(pages) * static_cast<uint64_t>(page));
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
  runner::RunOptions opts;
  opts.jobs = std::max(1, req.jobs);
  opts.shard_index = shard_i;
  opts.shard_count = shard_n;
  opts.time_budget_s = req.time_budget_s;  // 0: none (a budget never changes a status)
  opts.isolate = !req.no_isolation;
  opts.item_timeout_s = req.item_timeout_s;
  opts.memory_limit_bytes = DefaultMemoryLimit();
  opts.only_dtype = req.only_dtype;
  opts.only_item = req.only_item;
  opts.only_case = req.only_case;
  // An item must return exactly the keys the plan requires (and the runner's ABI-1).
  opts.expected_keys = [](const properties::Plan& p, const properties::PlanItem& item,
                          const adapters::SamplerInfo& i, int64_t only_case) {
    return properties::ExpectedResultKeys(p, item, i, only_case);
  };
  // Nothing of the sampler runs in this process (unless --no-isolation): it is opened inside
  // the describe worker and inside every item's worker.
  const std::string sampler_arg = req.sampler;
  const runner::SamplerOpener open = [sampler_arg] { return registry::OpenSampler(sampler_arg); };
  auto described = runner::Describe(open, opts);
  if (!described.ok()) {
    fmt::print(err, "error: {}\n", described.error().message);
    return 2;
  }
  const adapters::SamplerInfo info = *described;
  const auto started = std::chrono::steady_clock::now();
  const properties::Plan plan = properties::MakePlan(profile, info, req.seed);
  const bool tty = req.progress && isatty(STDERR_FILENO);
  if (tty) {
    opts.progress = [&err](const runner::Progress& p) {
      fmt::print(err, "\r\033[K[{}/{}] {} {} {}  {:.0f} s", p.done, p.total, p.item->kind,
                 p.item->dtype, p.item->name, p.elapsed_s);
      if (p.done < p.total && p.estimated_total_s > 0) {
        fmt::print(err, ", about {:.0f} s left", p.estimated_total_s - p.elapsed_s);
      }
      err.flush();
    };
  }
  auto ran = runner::RunPlan(open, req.sampler, plan, info, opts);
  if (tty) fmt::print(err, "\r\033[K");
  if (!ran.ok()) {
    fmt::print(err, "error: {}\n", ran.error().message);
    return 2;
  }
  std::vector<TestResult> results = std::move(ran->results);
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
                    {"item_timeout_cpu_s", opts.item_timeout_s},
                    {"seconds", reports::Number(seconds)},
                    {"false_alarm_budget", profile.false_alarm_budget},
                    {"required_tv", profile.required_tv},
                    {"expectations", req.expect_file}};
  report.sampler = reports::SamplerToJson(info, req.sampler);
  report.complete = ran->complete;
  report.incomplete_reason = ran->incomplete_reason;

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
  if (!report.complete) {
    // Not a certificate, whatever the finished items say.
    fmt::print(out, "INCOMPLETE: {}\n", report.incomplete_reason);
    return ran->signal != 0 ? 128 + ran->signal : 1;
  }
  return reports::Conformant(report) ? 0 : 1;
}

}  // namespace sampcert::cli

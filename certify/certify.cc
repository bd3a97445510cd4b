#include "certify/certify.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "properties/clauses.h"
#include "properties/conformance.h"
#include "registry/open_sampler.h"
#include "reports/report_fallback.h"
#include "reports/report_json.h"
#include "reports/report_set.h"
#include "reports/sha256.h"
#include "results/shell_quote.h"
#include "results/text.h"
#include "runner/speed.h"

#ifndef SAMPCERT_GIT_REVISION
#define SAMPCERT_GIT_REVISION "unknown"
#endif
#ifndef SAMPCERT_VERSION
#define SAMPCERT_VERSION "0.0.0"
#endif

namespace sampcert::certify {
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

CertifyOutcome Failed(CertifyError error, std::string message) {
  CertifyOutcome out;
  out.error = error;
  out.message = std::move(message);
  return out;
}

// Everything about the options that can be checked without the sampler, checked before any
// work: a typo must not give a CONFORMANT verdict over 0 results, nor a run that never ends.
// Messages are raw here; a front end escapes them for its output (the terminal's, say).
std::string ValidateOptions(const CertifyRequest& req, int* shard_i, int* shard_n) {
  if (!reports::ParseShard(req.shard, shard_i, shard_n)) {
    return fmt::format("--shard must be I/N in plain decimal with 0 <= I < N <= {}, not '{}'",
                       reports::kMaxShards, req.shard);
  }
  if (req.jobs < 1 || req.jobs > kMaxJobs) {
    return fmt::format("--jobs must be in [1, {}], not {}", kMaxJobs, req.jobs);
  }
  // The command line checks these on the text (cli/option_checks.h); here for every caller.
  if (!std::isfinite(req.item_timeout_s) || req.item_timeout_s <= 0 ||
      req.item_timeout_s > kMaxSeconds) {
    return fmt::format("--item-timeout must be a number of seconds in (0, {}], not {}", kMaxSeconds,
                       req.item_timeout_s);
  }
  if (!std::isfinite(req.time_budget_s) || req.time_budget_s < 0 ||
      req.time_budget_s > kMaxSeconds) {
    return fmt::format("--time-budget must be a number of seconds in [0, {}] (0: none), not {}",
                       kMaxSeconds, req.time_budget_s);
  }
  if (!req.only_dtype.empty() && req.only_dtype != "f32" && req.only_dtype != "f16" &&
      req.only_dtype != "bf16") {
    return fmt::format("--dtype must be f32, f16 or bf16, not '{}'", req.only_dtype);
  }
  if (req.only_case < -1) return fmt::format("--case must be >= 0, not {}", req.only_case);
  return {};
}

// A plug-in given by path (OpenSampler's rule: a '/' or a ".so" suffix, and not an exec:
// command, whose program is recorded as sampler.exec instead).
bool IsPluginPath(const std::string& s) {
  if (s.starts_with("exec:")) return false;
  return s.find('/') != std::string::npos || s.ends_with(".so");
}

runner::RunOptions MakeRunOptions(const CertifyRequest& req, int shard_i, int shard_n) {
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
  opts.progress = req.on_progress;
  opts.warn = req.on_warning;
  return opts;
}

// Nothing of the sampler runs in this process (unless --no-isolation): it is opened inside the
// describe worker and inside every item's worker.
runner::SamplerOpener Opener(const CertifyRequest& req) {
  return [sampler = req.sampler, config = req.sampler_config] {
    return registry::OpenSampler(sampler, config);
  };
}

// Filters must select something: `--item nope` or `--dtype f16` for a sampler without f16
// items would otherwise certify 0 results.
std::string CheckFilters(const CertifyRequest& req, const properties::Plan& plan,
                         const runner::RunOptions& opts) {
  bool dtype_found = req.only_dtype.empty(), item_found = req.only_item.empty();
  std::string names;
  for (const properties::PlanItem& it : plan.items) {
    dtype_found |= it.dtype == req.only_dtype;
    if (it.dtype + "/" + it.name == req.only_item) item_found = true;
    if (!it.name.empty() && names.size() < 300) {
      names += (names.empty() ? "" : ", ") + it.dtype + "/" + it.name;
    }
  }
  if (!dtype_found) {
    return fmt::format("--dtype {}: the plan has no item of that dtype", req.only_dtype);
  }
  if (!item_found) {
    return fmt::format("--item '{}' matches no plan item (they are: {}{})", req.only_item, names,
                       names.size() >= 300 ? ", ..." : "");
  }
  // The cases of a dtype's generated-rows item: the profile's generated rows, then its covering
  // design's rows (properties/coverage.h).
  uint64_t design_rows = 0;
  for (const properties::PlanItem& it : plan.items) {
    if (it.kind != properties::ItemKind::kGeneratedRows) continue;
    if (!req.only_dtype.empty() && it.dtype != req.only_dtype) continue;
    design_rows = std::max(design_rows, it.design_rows);
  }
  const int64_t cases = plan.profile.valid_cases_per_dtype + static_cast<int64_t>(design_rows);
  if (req.only_case >= cases) {
    return fmt::format(
        "--case {} is past the profile's {} cases (0 to {}: {} generated rows, then {} design "
        "rows)",
        req.only_case, plan.profile.name, cases - 1, plan.profile.valid_cases_per_dtype,
        design_rows);
  }
  // The filters together must select something too (--case applies to the generated-row items
  // only, so `--item f32/flat_V64 --case 3` selects nothing).
  runner::RunOptions whole = opts;
  whole.shard_index = 0;
  whole.shard_count = 1;
  if (runner::ShardItems(plan, whole).empty()) {
    return "--dtype, --item and --case together select no plan item";
  }
  return {};
}

// The run's context: the tool, the machine, and every choice that fixes the plan.
json ReportContext(const CertifyRequest& req, const properties::Plan& plan,
                   const runner::RunOptions& opts, double seconds) {
  json context = {{"tool", "sampcert"},
                  {"tool_version", ToolVersion()},
                  {"git_revision", GitRevision()},
                  {"compiler", std::string("GCC ") + __VERSION__},
                  {"cpu", CpuName()},
                  {"profile", plan.profile.name},
                  {"seed", req.seed},
                  {"plan_version", properties::PlanVersion(plan)},
                  {"shard", req.shard},
                  {"jobs", opts.jobs},
                  {"isolation", opts.isolate ? "fork" : "none"},
                  {"time_budget_s", opts.time_budget_s},
                  {"item_timeout_cpu_s", opts.item_timeout_s},
                  {"max_draws", req.max_draws},
                  {"draw_time_target_s", plan.profile.draw_time_target_s},
                  {"seconds", reports::Number(seconds)},
                  {"false_alarm_budget", plan.profile.false_alarm_budget},
                  {"required_tv", plan.profile.required_tv},
                  {"expectations", req.expect_file}};
  // The filters, so that `report merge` can refuse a filtered run passed off as a shard.
  json filters = json::object();
  if (!req.only_dtype.empty()) filters["dtype"] = req.only_dtype;
  if (!req.only_item.empty()) filters["item"] = req.only_item;
  if (req.only_case >= 0) filters["case"] = req.only_case;
  context["filters"] = filters;
  return context;
}

// The sampler's words of every reproduction command: shell-quoted, with its config, so a
// pasted line runs exactly this sampler and nothing else.
std::string ReproductionSampler(const CertifyRequest& req) {
  return results::ShellQuote(req.sampler) +
         (req.sampler_config ? " --sampler-config " + results::ShellQuote(*req.sampler_config)
                             : std::string());
}

// The speed section (SPEC REPORT-3), measured after a whole run: none for a shard, a filtered
// or incomplete run (a part of a run is no certification to stand beside), with --no-speed, or
// after a Crash or Timeout result.
// A host failure here is recorded as the speed's error, and SIGINT / SIGTERM end the phase
// with no section: neither costs the run its report.
json SpeedSection(const CertifyRequest& req, const properties::Plan& plan,
                  const adapters::SamplerInfo& info, const runner::RunOptions& opts, bool complete,
                  const std::vector<TestResult>& results) {
  const runner::SpeedSetup* setup = runner::SpeedSetupFor(plan.profile.name);
  if (req.no_speed || setup == nullptr || !complete || opts.shard_count != 1 ||
      !req.only_dtype.empty() || !req.only_item.empty() || req.only_case >= 0) {
    return nullptr;
  }
  // Nor for a sampler that crashed or ran out of time in the run (pinned by --expect or not):
  // timing it would meet the same end again, at the cost of another worker's time limit.
  const auto broken = [](results::Status s) {
    return s == results::Status::kCrash || s == results::Status::kTimeout;
  };
  if (std::ranges::any_of(results, [&](const TestResult& r) {
        return broken(r.status) || (r.known_failure && broken(r.known_failure->status));
      })) {
    return nullptr;
  }
  auto measured = runner::MeasureSpeed(Opener(req), info, *setup, opts);
  runner::SpeedOutcome speed;
  if (measured.ok()) {
    if (measured->interrupted) return nullptr;  // the run is whole; its report goes out now
    speed = std::move(measured).value();
  } else {
    speed.status = runner::SpeedStatus::kError;
    speed.message = measured.error().message;
    speed.vocab = setup->vocab;
  }
  json shapes = json::array();
  for (const runner::SpeedShape& s : speed.shapes) {
    shapes.push_back({{"rows", s.rows},
                      {"calls", s.calls},
                      {"ns_per_row", reports::Number(s.ns_per_row)},
                      {"rows_per_s", reports::Number(1e9 / s.ns_per_row)}});
  }
  json out = {{"informational", true},
              {"status", runner::SpeedStatusName(speed.status)},
              {"machine", {{"cpu", CpuName()}, {"cores", std::thread::hardware_concurrency()}}},
              {"dtype", DTypeName(speed.dtype)},
              {"vocab", speed.vocab},
              {"draws_per_row", 1},
              {"shapes", shapes},
              {"seconds", reports::Number(speed.seconds)}};
  if (!speed.message.empty()) out["message"] = speed.message.substr(0, 4000);
  return out;
}

}  // namespace

// A describe step that failed: the host's own failure (kInternal: fork, pipes, the open-file
// limit) or the sampler's (it cannot be loaded, described or created).
CertifyError DescribeFailure(const Error& e) {
  return e.code == ErrorCode::kInternal ? CertifyError::kHost : CertifyError::kSampler;
}

std::string_view ToolVersion() { return SAMPCERT_VERSION; }
std::string_view GitRevision() { return SAMPCERT_GIT_REVISION; }

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

PlanOutcome PlanFor(const CertifyRequest& req) {
  PlanOutcome out;
  properties::Profile profile;
  if (!properties::ProfileByName(req.profile, &profile)) {
    out.error = CertifyError::kUsage;
    out.message = fmt::format("--profile must be quick, standard or full, not '{}'", req.profile);
    return out;
  }
  auto described = runner::Describe(Opener(req), MakeRunOptions(req, 0, 1));
  if (!described.ok()) {
    out.error = DescribeFailure(described.error());
    out.message = described.error().message;
    return out;
  }
  properties::PlanOptions plan_options;
  plan_options.max_draws = req.max_draws;
  plan_options.draw_time_s = req.draw_time_s;
  out.plan = properties::MakePlan(profile, *described, req.seed, plan_options);
  return out;
}

CertifyOutcome Certify(const CertifyRequest& req) {
  properties::Profile profile;
  if (!properties::ProfileByName(req.profile, &profile)) {
    return Failed(CertifyError::kUsage,
                  fmt::format("--profile must be quick, standard or full, not '{}'", req.profile));
  }
  int shard_i = 0, shard_n = 1;
  if (std::string why = ValidateOptions(req, &shard_i, &shard_n); !why.empty()) {
    return Failed(CertifyError::kUsage, why);
  }
  reports::Expectations expectations;
  if (!req.expect_file.empty()) {
    std::string why;
    if (!reports::LoadExpectations(req.expect_file, &expectations, &why)) {
      return Failed(CertifyError::kUsage, why);
    }
  }
  // An unwritable --out is found now, not after the run.
  if (std::string why = reports::CheckWritableFolder(req.out_dir); !why.empty()) {
    return Failed(CertifyError::kUsage, why);
  }
  std::string file_sha256;
  if (IsPluginPath(req.sampler)) {
    std::string why;
    file_sha256 = reports::FileSha256(req.sampler, &why);
    if (file_sha256.empty()) return Failed(CertifyError::kSampler, why);
  }
  runner::RunOptions opts = MakeRunOptions(req, shard_i, shard_n);
  const runner::SamplerOpener open = Opener(req);
  auto described = runner::Describe(open, opts);
  if (!described.ok()) return Failed(DescribeFailure(described.error()), described.error().message);
  const adapters::SamplerInfo info = *described;
  const auto started = std::chrono::steady_clock::now();
  properties::PlanOptions plan_options;
  plan_options.max_draws = req.max_draws;
  plan_options.draw_time_s = req.draw_time_s;
  const properties::Plan plan = properties::MakePlan(profile, info, req.seed, plan_options);
  if (plan.items.empty()) {  // before the filters: with none given, they are not the cause
    return Failed(
        CertifyError::kSampler,
        fmt::format("sampler '{}' declares no dtype (capabilities: {}), so its plan has "
                    "no item: a sampler that declares nothing certifies nothing",
                    info.name,
                    info.capabilities == 0
                        ? "none"
                        : fmt::format("{}", fmt::join(adapters::CapabilityNames(info.capabilities),
                                                      ", "))));
  }
  if (std::string why = CheckFilters(req, plan, opts); !why.empty()) {
    return Failed(CertifyError::kUsage, why);
  }
  auto ran = runner::RunPlan(open, ReproductionSampler(req), plan, info, opts);
  if (!ran.ok()) return Failed(CertifyError::kHost, ran.error().message);
  std::vector<TestResult> results = std::move(ran->results);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  CertifyOutcome out;
  reports::Report& report = out.report;
  reports::SortResults(&results);
  report.results = std::move(results);
  report.context = ReportContext(req, plan, opts, seconds);
  report.sampler = reports::SamplerToJson(info, req.sampler, file_sha256, req.sampler_config);
  report.complete = ran->complete;
  report.incomplete_reason = ran->incomplete_reason;
  report.signal = ran->signal;
  for (const properties::Clause& c : properties::Clauses()) {
    reports::ClauseLine line{
        std::string(c.id), std::string(c.promise), {}, std::string(c.not_exercised)};
    for (const properties::Evidence& e : properties::EvidenceOf(c)) {
      static constexpr const char* kKinds[] = {"row", "chain", "design", "property"};
      line.evidence.push_back(std::string(kKinds[static_cast<int>(e.kind)]) + ":" + e.name);
    }
    report.clauses.push_back(std::move(line));
  }
  // Expectations: each failure an entry pins becomes a KnownFailure; a difference either way is
  // reported (after the context, which says whether the run covers the whole plan).
  if (!req.expect_file.empty()) {
    reports::ApplyExpectations(expectations, !req.expect_non_strict, &report);
  }
  // After the verdict is decided, and outside it: the sampler's speed (SPEC REPORT-3).
  report.speed = SpeedSection(req, plan, info, opts, ran->complete, report.results);
  if (std::string why = reports::WriteReportSetOrFallback(req.out_dir, report, &out.report_path);
      !why.empty()) {
    return Failed(CertifyError::kHost, why);
  }
  return out;
}

}  // namespace sampcert::certify

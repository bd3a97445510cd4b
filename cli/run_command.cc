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
#include "properties/runner.h"
#include "reports/report_json.h"

#ifndef SAMPCERT_GIT_REVISION
#define SAMPCERT_GIT_REVISION "unknown"
#endif
#ifndef SAMPCERT_VERSION
#define SAMPCERT_VERSION "0.0.0"
#endif

namespace sampcert::cli {
namespace {

using nlohmann::json;
using properties::Status;
using properties::TestResult;

int Severity(Status s) {
  switch (s) {
    case Status::kWaived: return 0;
    case Status::kNotSupported: return 1;
    case Status::kPass: return 2;
    case Status::kWarning: return 3;
    case Status::kInconclusive: return 4;
    case Status::kFail: return 5;
    case Status::kTimeout: return 6;
    case Status::kCrash: return 7;
  }
  return 7;
}

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

// (property, dtype) -> worst status over families.
std::map<std::pair<std::string, std::string>, Status> Aggregate(
    const std::vector<TestResult>& results) {
  std::map<std::pair<std::string, std::string>, Status> agg;
  for (const TestResult& r : results) {
    auto key = std::make_pair(r.property, r.dtype);
    auto it = agg.find(key);
    if (it == agg.end() || Severity(r.status) > Severity(it->second)) agg[key] = r.status;
  }
  return agg;
}

struct Expectation {
  Status status;
  std::string reason;
};

bool LoadExpectations(const std::string& path,
                      std::map<std::pair<std::string, std::string>, Expectation>* out,
                      std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read expectations file " + path;
    return false;
  }
  try {
    const json j = json::parse(in);
    for (const json& e : j.at("entries")) {
      Status s;
      if (!properties::ParseStatus(e.at("status").get<std::string>(), &s)) {
        *error = "unknown status in " + path + ": " + e.at("status").dump();
        return false;
      }
      (*out)[{e.at("property").get<std::string>(), e.at("dtype").get<std::string>()}] =
          Expectation{s, e.value("reason", "")};
    }
  } catch (const std::exception& e) {
    *error = "malformed expectations file " + path + ": " + e.what();
    return false;
  }
  return true;
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
  std::map<std::pair<std::string, std::string>, Expectation> expectations;
  if (!req.expect_file.empty()) {
    std::string why;
    if (!LoadExpectations(req.expect_file, &expectations, &why)) {
      fmt::print(err, "error: {}\n", why);
      return 2;
    }
  }
  auto opened = adapters::OpenSampler(req.sampler);
  if (!opened.ok()) {
    fmt::print(err, "error: {}\n", opened.error().message);
    return 2;
  }
  adapters::Sampler& sampler = **opened;
  const auto started = std::chrono::steady_clock::now();
  const properties::Plan plan = properties::MakePlan(profile, sampler.info(), req.seed);

  properties::RunOptions opts;
  opts.jobs = std::max(1, req.jobs);
  opts.shard_index = shard_i;
  opts.shard_count = shard_n;
  opts.time_budget_s = req.time_budget_s > 0        ? req.time_budget_s
                       : profile.name == "quick"    ? 4
                       : profile.name == "standard" ? 30
                                                    : 300;
  opts.isolate = !req.no_isolation;
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
  std::vector<TestResult> results = properties::RunPlan(sampler, req.sampler, plan, opts);
  if (tty) fmt::print(err, "\r\033[K");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  // Expectations (also the waiver file): a known failure becomes Waived; a difference either
  // way is reported.
  std::vector<std::string> diffs;
  if (!req.expect_file.empty()) {
    const auto agg = Aggregate(results);
    for (auto& [key, exp] : expectations) {
      auto it = agg.find(key);
      if (it == agg.end()) continue;  // not run in this shard or filtered out
      const std::string name = key.first + "/" + key.second;
      if (properties::IsConformant(it->second)) {
        diffs.push_back(fmt::format("FIX {}: expected {}, now {}", name,
                                    properties::StatusName(exp.status),
                                    properties::StatusName(it->second)));
      } else if (it->second != exp.status) {
        diffs.push_back(fmt::format("DIFFERENCE {}: expected {}, now {}", name,
                                    properties::StatusName(exp.status),
                                    properties::StatusName(it->second)));
      } else {
        for (TestResult& r : results) {
          if (r.property == key.first && r.dtype == key.second && r.status == exp.status) {
            r.status = Status::kWaived;
            r.note = std::string("waived (") + properties::StatusName(exp.status) +
                     "): " + exp.reason + (r.note.empty() ? "" : "; " + r.note);
          }
        }
      }
    }
    for (const auto& [key, status] : Aggregate(results)) {
      if (!properties::IsConformant(status) && !expectations.count(key)) {
        diffs.push_back(fmt::format("REGRESSION {}/{}: expected a conformant status, now {}",
                                    key.first, key.second, properties::StatusName(status)));
      }
    }
  }

  // The verdict.
  const auto agg = Aggregate(results);
  std::map<std::string, int> counts;
  json certified = json::array(), not_conformant = json::array();
  bool conformant = diffs.empty();
  for (const auto& [key, status] : agg) {
    const std::string name = key.first + "/" + key.second;
    if (status == Status::kPass || status == Status::kWarning) certified.push_back(name);
    if (!properties::IsConformant(status)) {
      not_conformant.push_back(name);
      conformant = false;
    }
  }
  for (const TestResult& r : results) ++counts[properties::StatusName(r.status)];

  json report;
  report["schema_version"] = reports::kSchemaVersion;
  report["context"] = {{"tool", "sampcert"},
                       {"tool_version", SAMPCERT_VERSION},
                       {"git_revision", SAMPCERT_GIT_REVISION},
                       {"compiler", __VERSION__},
                       {"cpu", CpuName()},
                       {"profile", profile.name},
                       {"seed", req.seed},
                       {"shard", req.shard},
                       {"jobs", opts.jobs},
                       {"isolation", opts.isolate ? "fork" : "none"},
                       {"time_budget_s", opts.time_budget_s},
                       {"seconds", reports::Number(seconds)},
                       {"false_alarm_budget", profile.false_alarm_budget},
                       {"required_tv", profile.required_tv}};
  report["sampler"] = reports::SamplerToJson(sampler.info(), req.sampler);
  json rs = json::array();
  for (const TestResult& r : results) rs.push_back(reports::ToJson(r));
  report["results"] = rs;
  report["summary"] = counts;
  report["verdict"] = {{"conformant", conformant},
                       {"certified", certified},
                       {"not_conformant", not_conformant},
                       {"expectation_differences", diffs}};

  std::error_code ec;
  std::filesystem::create_directories(req.out_dir, ec);
  const std::string path = (std::filesystem::path(req.out_dir) / "report.json").string();
  if (std::string why = reports::WriteFileAtomically(path, report.dump(2)); !why.empty()) {
    fmt::print(err, "error: {}\n", why);
    return 2;
  }

  // The summary: a property x dtype matrix, the failures, the verdict.
  const adapters::SamplerInfo& info = sampler.info();
  fmt::print(out, "sampcert {} — sampler {} {} — profile {} seed {} shard {} — {:.1f} s\n",
             SAMPCERT_VERSION, info.name, info.version, profile.name, req.seed, req.shard, seconds);
  std::set<std::string> props, dtypes;
  for (const auto& [key, status] : agg) {
    props.insert(key.first);
    dtypes.insert(key.second);
  }
  fmt::print(out, "{:<12}", "property");
  for (const std::string& d : dtypes) fmt::print(out, " {:<13}", d);
  fmt::print(out, "\n");
  for (const std::string& p : props) {
    fmt::print(out, "{:<12}", p);
    for (const std::string& d : dtypes) {
      auto it = agg.find({p, d});
      fmt::print(out, " {:<13}", it == agg.end() ? "-" : properties::StatusName(it->second));
    }
    fmt::print(out, "\n");
  }
  int shown = 0;
  for (const TestResult& r : results) {
    if (properties::IsConformant(r.status) || r.status == Status::kInconclusive) continue;
    if (++shown > 15) break;
    fmt::print(out, "\n{} {} [{}] {}: {}\n", properties::StatusName(r.status), r.property, r.dtype,
               r.family, r.failure ? r.failure->message : r.note);
    if (r.failure) {
      fmt::print(out, "  input:   {}\n", r.failure->input);
      if (!r.failure->minimal_input.empty() && r.failure->minimal_input != r.failure->input) {
        fmt::print(out, "  minimal: {}\n", r.failure->minimal_input);
      }
      if (!r.failure->reproduction.empty()) {
        fmt::print(out, "  reproduce: {}\n", r.failure->reproduction);
      }
    }
  }
  for (const TestResult& r : results) {
    if (r.status == Status::kInconclusive) {
      fmt::print(out, "\nInconclusive {} [{}] {}: {}\n", r.property, r.dtype, r.family, r.note);
    }
  }
  for (const std::string& d : diffs) fmt::print(out, "\n{}", d);
  fmt::print(out, "\n{} results:", results.size());
  for (const auto& [status, n] : counts) fmt::print(out, " {} {}", n, status);
  const int waived = counts.count("Waived") ? counts.at("Waived") : 0;
  fmt::print(
      out, "\nverdict: {}{} (report: {})\n", conformant ? "CONFORMANT" : "NOT CONFORMANT",
      conformant && waived > 0
          ? fmt::format(" with {} waived results (expected failures, {})", waived, req.expect_file)
          : "",
      path);
  return conformant ? 0 : 1;
}

}  // namespace sampcert::cli

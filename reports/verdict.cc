#include "reports/verdict.h"

#include <fmt/format.h>

#include <map>
#include <stdexcept>

#include "reports/expectations.h"
#include "reports/report.h"

namespace sampcert::reports {

using nlohmann::json;
using results::Status;

namespace {

constexpr OutcomeInfo kOutcomes[] = {
    {OutcomeKind::kConformant, "Conformant", "CONFORMANT", "ok"},
    {OutcomeKind::kMatchesExpectations, "MatchesExpectations", "NOT CONFORMANT", "known"},
    {OutcomeKind::kNotConformant, "NotConformant", "NOT CONFORMANT", "bad"},
    {OutcomeKind::kPartial, "Partial", "PARTIAL, no verdict for the sampler", "partial"},
    {OutcomeKind::kIncomplete, "Incomplete", "INCOMPLETE, no verdict", "incomplete"},
};

std::string Count(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// "206 Fail, 51 Inconclusive": the new (not known) failing results by status.
std::string ByStatus(const Report& report) {
  std::map<std::string, int> counts;
  for (const results::TestResult& r : report.results) {
    if (!results::IsConformant(r.status) && r.status != Status::kKnownFailure) {
      ++counts[results::StatusName(r.status)];
    }
  }
  std::string out;
  for (const auto& [status, n] : counts) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, status);
  }
  return out;
}

// "2 new failures, 1 known failure now passes": the differences that fail the check.
std::string DifferenceCounts(const Report& report, bool strict) {
  int fixes = 0, regressions = 0, other = 0;
  for (const ExpectationDifference& d : report.expectation_differences) {
    switch (d.kind) {
      case DifferenceKind::kFix: fixes += strict; break;
      case DifferenceKind::kRegression: ++regressions; break;
      case DifferenceKind::kDifference: ++other; break;
    }
  }
  std::string out;
  const auto add = [&](int n, const char* one, const char* many) {
    if (n > 0) out += (out.empty() ? "" : ", ") + Count(n, one, many);
  };
  add(regressions, "new failure", "new failures");
  add(fixes, "known failure now passes", "known failures now pass");
  add(other, "result differs from its entry", "results differ from their entries");
  return out;
}

}  // namespace

const OutcomeInfo& Info(OutcomeKind kind) {
  for (const OutcomeInfo& o : kOutcomes) {
    if (o.kind == kind) return o;
  }
  throw std::logic_error("Info: an OutcomeKind missing from the table");
}

bool ParseOutcome(const std::string& name, OutcomeKind* out) {
  for (const OutcomeInfo& o : kOutcomes) {
    if (name == o.name) {
      *out = o.kind;
      return true;
    }
  }
  return false;
}

std::string PartialScope(const Report& report) {
  const json& c = report.context;
  const json filters = c.is_object() ? c.value("filters", json()) : json();
  if (!filters.is_object()) return "its filters are not recorded";
  std::string scope;
  const std::string shard =
      c.is_object() && c.contains("shard") && c["shard"].is_string() ? c["shard"] : "0/1";
  int index = 0, count = 1;
  if (ParseShard(shard, &index, &count)) {
    if (count > 1) scope = "shard " + shard;
  } else if (!shard.starts_with("merged from ")) {
    scope = "shard '" + shard + "'";
  }
  std::string names;
  for (const char* f : {"dtype", "item", "case"}) {
    if (!filters.contains(f)) continue;
    const json& v = filters[f];
    names += fmt::format(" --{} {}", f, v.is_string() ? v.get<std::string>() : v.dump());
  }
  if (!names.empty()) scope += (scope.empty() ? "filtered:" : ", filtered:") + names;
  return scope;
}

Outcome Verdict(const Report& report) {
  Outcome o;
  const json context = report.context.is_object() ? report.context : json::object();
  const bool strict = context.value("expectations_strict", true);
  int fixes_allowed = 0;
  for (const results::TestResult& r : report.results) {
    if (r.status == Status::kKnownFailure) {
      ++o.known_failures;
    } else if (!results::IsConformant(r.status)) {
      ++o.failures;
    }
  }
  for (const ExpectationDifference& d : report.expectation_differences) {
    if (d.kind == DifferenceKind::kFix && !strict) {
      ++fixes_allowed;
    } else {
      ++o.differences;
    }
  }
  o.scope = PartialScope(report);
  const std::string known = Count(o.known_failures, "known failure", "known failures");
  const std::string stale = fixes_allowed == 0
                                ? ""
                                : fmt::format("; {} (not strict: update the expectations file)",
                                              Count(fixes_allowed, "known failure now passes",
                                                    "known failures now pass"));
  const auto set = [&](OutcomeKind kind, int exit_code, const std::string& detail) {
    o.kind = kind;
    o.exit_code = exit_code;
    o.text = std::string(Info(kind).headline) + (detail.empty() ? "" : ": " + detail);
  };
  if (!report.complete) {
    // No "CONFORMANT" in any form: the finished items say nothing of the rest.
    const int code =
        report.signal > 0 ? kSignalExitBase + report.signal : Code(ExitCode::kIncomplete);
    std::string found;
    if (o.failures > 0) found = Count(o.failures, "new failure", "new failures");
    if (o.known_failures > 0) found += (found.empty() ? "" : ", ") + known;
    set(OutcomeKind::kIncomplete, code,
        fmt::format(
            "{}{}",
            report.incomplete_reason.empty() ? "the run stopped early" : report.incomplete_reason,
            found.empty() ? "" : " (in the items that finished: " + found + ")"));
    return o;
  }
  // Differences exist only against an expectations file; they include every new failure.
  const std::string failing =
      o.differences > 0
          ? fmt::format("differs from its expectations: {}{}", DifferenceCounts(report, strict),
                        o.known_failures > 0 ? " (and " + known + ")" : "")
          : fmt::format("{} ({})", Count(o.failures, "failing result", "failing results"),
                        ByStatus(report));
  const bool failed = o.failures > 0 || o.differences > 0;
  if (!o.scope.empty()) {
    // VERDICT-1: part of the plan is no verdict on the sampler, either way; it exits by what it
    // covered, so that sharded CI jobs fail on a failing shard.
    set(OutcomeKind::kPartial, Code(failed ? ExitCode::kNotConformant : ExitCode::kOk),
        failed ? fmt::format("{}; in this part: {}", o.scope, failing)
               : fmt::format("{}; no new failure in this part{}{}", o.scope,
                             o.known_failures > 0 ? ", matches its " + known : "", stale));
    return o;
  }
  if (failed) {
    set(OutcomeKind::kNotConformant, Code(ExitCode::kNotConformant), failing);
    return o;
  }
  if (o.known_failures > 0) {
    set(OutcomeKind::kMatchesExpectations, Code(ExitCode::kOk),
        fmt::format("matches its {}, no new ones{}", known, stale));
    return o;
  }
  if (report.results.empty()) {
    set(OutcomeKind::kNotConformant, Code(ExitCode::kNotConformant),
        "no results: nothing was certified");
    return o;
  }
  // A Warning is a declared deviation with its measured size (POL-5, VER-DEV-1): conformant,
  // but never silently so.
  int warnings = 0;
  for (const results::TestResult& r : report.results) warnings += r.status == Status::kWarning;
  std::string detail = warnings > 0 ? fmt::format("with {} (declared deviations: see each)",
                                                  Count(warnings, "warning", "warnings"))
                                    : "";
  if (!stale.empty()) detail += detail.empty() ? stale.substr(2) : stale;
  set(OutcomeKind::kConformant, Code(ExitCode::kOk), detail);
  return o;
}

}  // namespace sampcert::reports

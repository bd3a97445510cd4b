// A conformance report: the run's context, the sampler's declaration, the results, and what
// follows from them (summary, verdict, differences from the expectations). Built by
// `sampcert run`, merged from shards, diffed between runs, rendered as JSON, HTML and JUnit.
#ifndef SAMPCERT_REPORTS_REPORT_H_
#define SAMPCERT_REPORTS_REPORT_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "results/test_result.h"

namespace sampcert::reports {

using Key = std::pair<std::string, std::string>;  // (property, dtype)

int Severity(results::Status s);  // Waived < NotSupported < Pass < ... < Crash

// The worst status of each (property, dtype) over row families.
std::map<Key, results::Status> Aggregate(const std::vector<results::TestResult>& results);

// Expectations, also the waiver file: {"entries": [{"property", "dtype", "status", "reason"}]}.
struct Expectation {
  results::Status status;
  std::string reason;
};
using Expectations = std::map<Key, Expectation>;
bool LoadExpectations(const std::string& path, Expectations* out, std::string* error);

// Marks expected failures Waived (with the reason) and returns the differences: "FIX ...",
// "REGRESSION ...", "DIFFERENCE ...". (property, dtype) pairs absent from the results (another
// shard's) are not compared.
std::vector<std::string> ApplyExpectations(const Expectations& expectations,
                                           std::vector<results::TestResult>* results);

struct Report {
  nlohmann::json context;  // tool, version, revision, compiler, CPU, profile, seed, shard, ...
  nlohmann::json sampler;  // name, version, argument, capabilities, policies
  std::vector<results::TestResult> results;
  std::vector<std::string> expectation_differences;
  // False when the run stopped before finishing its plan (a signal, --time-budget): the results
  // are what was finished, and `incomplete_reason` says why. merge refuses incomplete reports.
  bool complete = true;
  std::string incomplete_reason;
};

bool Conformant(const Report& report);

// The canonical order of results (REPRO-1): by dtype (f32, f16, bf16), then property, then
// family. `sampcert run` and `report merge` both write it, so a report does not depend on which
// worker finished first or on the shard split.
void SortResults(std::vector<results::TestResult>* results);
nlohmann::json ReportToJson(const Report& report);  // adds summary and verdict
// Reads a report written by ReportToJson; an empty error means success.
Report ReportFromJson(const nlohmann::json& j, std::string* error);
bool ReadReport(const std::string& path, Report* out, std::string* error);

// Joins shard reports of one run (same sampler, profile and seed) into the report the unsharded
// run would have written: the union of results and of expectation differences.
bool Merge(const std::vector<Report>& shards, Report* out, std::string* error);

// FIX / REGRESSION / DIFFERENCE per (property, dtype) between two reports.
std::vector<std::string> Diff(const Report& before, const Report& after);

// The readable summary `sampcert run` prints.
std::string TextSummary(const Report& report, const std::string& path);

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_REPORT_H_

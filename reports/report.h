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

#include "reports/expectations.h"
#include "reports/verdict.h"
#include "results/test_result.h"

namespace sampcert::reports {

using Key = std::pair<std::string, std::string>;  // (property, dtype)

// NotSupported < Pass < Warning < KnownFailure < Inconclusive < Fail < Timeout < Crash: a cell
// shows the most severe status of its row families, so a known failure is never shown as a
// Pass, and a new problem is never hidden behind a known one.
int Severity(results::Status s);

// The most severe status of each (property, dtype) over row families.
std::map<Key, results::Status> Aggregate(const std::vector<results::TestResult>& results);

// One clause of the traceability table (SPEC TRACE-1) as the run's suite had it: its evidence
// words (row:, chain:, design:, property:) or the reason no planned input decides it. The
// report's coverage section says which of the words this run's results exercised.
struct ClauseLine {
  std::string id;
  std::string promise;
  std::vector<std::string> evidence;
  std::string not_exercised;
};

struct Report {
  nlohmann::json context;  // tool, version, revision, compiler, CPU, profile, seed, shard, ...
  nlohmann::json sampler;  // name, version, argument, capabilities, policies
  std::vector<results::TestResult> results;
  std::vector<ExpectationDifference> expectation_differences;  // sorted (ApplyExpectations)
  // False when the run stopped before finishing its plan (a signal, --time-budget): the results
  // are what was finished, and `incomplete_reason` says why. merge refuses incomplete reports.
  bool complete = true;
  std::string incomplete_reason;
  int signal = 0;  // the signal that stopped the run (exit 128 + signal), 0 if none
  std::vector<ClauseLine> clauses;  // SPEC TRACE-1 (schema 3.3); empty in older reports
  // SPEC REPORT-3 (schema 3.5): the sampler's speed as the run measured it after its plan, with
  // the machine; informational, never read by the verdict. Null where none was measured (a
  // shard, a filtered or incomplete run, --no-speed, a merge, an older report).
  nlohmann::json speed;
};

// Whether this report's results exercised an evidence word: a result of that family (row:,
// chain:), of that property (property:, not NotSupported), or a design class some property
// exercised (design:AXIS.CLASS).
bool EvidenceExercised(const Report& report, const std::string& word);

// SPEC section 11, "Screens are not passes": the profile's target (the TV every distribution
// test should detect with probability 0.9), as the report's context records it.
double TargetTv(const Report& report);

// A statistical result that did not fail (Pass or Warning) whose stated power (STAT-5) is short
// of the profile's target: a screen, a diagnostic that certifies no distribution claim. Every
// format labels it: report.json's "screen", the terminal's and the HTML's "(screen)", JUnit's
// test case name and output.
bool IsScreen(const results::TestResult& r, double target_tv);

// The report's coverage table (SPEC COV-1): per coverage-model axis and class, the properties
// that exercised it on design rows with their row counts (over dtypes), or the declaration's
// reason to exclude it; from the results' coverage tags alone, so a merge of shards gets it too.
struct CoverageCell {
  std::string axis;
  std::string cls;
  std::map<std::string, uint64_t> rows_by_property;
  std::string excluded;  // the reason, when no property exercised the class
};
std::vector<CoverageCell> CoverageTable(const std::vector<results::TestResult>& results);

// The canonical order of results (REPRO-1): by dtype (f32, f16, bf16), then property, then
// family. `sampcert run` and `report merge` both write it, so a report does not depend on which
// worker finished first or on the shard split.
void SortResults(std::vector<results::TestResult>* results);
nlohmann::json ReportToJson(const Report& report);  // adds summary and verdict
// Reads a report written by ReportToJson; an empty error means success. The JSON is validated
// against the embedded schema first (errors name the JSON path); a result given twice (the
// same dtype, property and family) is refused.
Report ReportFromJson(const nlohmann::json& j, std::string* error);
// Reads report.json as part of its verified set (report_set.h: ReadReportSet), by the bounded
// strict reader (results/strict_json.h: no duplicate keys, limited depth and sizes), with each
// failure's row file from the set; anything amiss is an error naming the file.
bool ReadReport(const std::string& path, Report* out, std::string* error);

// Parses a shard "I/N" in canonical decimal (no sign, no leading zeros, no spaces),
// 0 <= I < N <= kMaxShards (six digits each).
inline constexpr int kMaxShards = 999999;
bool ParseShard(const std::string& text, int* index, int* count);

// Joins shard reports of one run into the report the unsharded run would have written: the
// union of results and of expectation differences. Refuses (with the reason) an incomplete
// shard, a filtered one (context "filters" not empty, or absent), shards of different profile,
// seed or plan_version, of samplers whose declarations differ in anything but the argument
// (file_sha256 included), of different N, a shard missing or given twice, a result that two
// shards carry, and shards that together hold no results.
bool Merge(const std::vector<Report>& shards, Report* out, std::string* error);

// FIX / REGRESSION / DIFFERENCE / NEW per (property, dtype) between two reports. A change into
// a non-conformant status, a new non-conformant test and a removed result (or row family) are
// REGRESSIONs. Reports of different context "plan_version" give one line "PLAN CHANGED ...".
// A KnownFailure counts as the status it had: an expectations file changes no behaviour.
std::vector<std::string> Diff(const Report& before, const Report& after);

// The speed section in one line of plain text (SPEC REPORT-3), "" when the report has none:
// "speed (informational, not part of the verdict): f32 V=32000: 1 row 41.2 us/row (24.3 k rows/s);
// 32 rows 30.1 us/row (33.2 k rows/s); on CPU (N cores)", or why it was not measured. Not yet
// escaped: the terminal and the HTML escape it their way.
std::string SpeedLine(const Report& report);

// The readable summary `sampcert run` prints: the property table, the new failures, the known
// ones grouped by property, the expectation differences, and the verdict's line (first too,
// for a run that is incomplete or partial), and the speed line before the verdict's.
std::string TextSummary(const Report& report, const std::string& path);

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_REPORT_H_

// Expectations files: the known failures of a sampler, each pinned by (property, dtype, family)
// with its status and a reason (SPEC section 11, "Expectations files"). `sampcert run --expect`
// marks the results they pin KnownFailure and reports every difference either way as FIX,
// REGRESSION or DIFFERENCE; `sampcert report expectations` writes one from a report.
#ifndef SAMPCERT_REPORTS_EXPECTATIONS_H_
#define SAMPCERT_REPORTS_EXPECTATIONS_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "results/test_result.h"

namespace sampcert::reports {

struct Report;

inline constexpr const char* kExpectationsFormat = "sampcert-expectations/2";

// (property, dtype, family): one result of a report.
using ResultKey = std::tuple<std::string, std::string, std::string>;
std::string KeyName(const ResultKey& key);  // "PROPERTY/DTYPE/FAMILY"

struct Expectation {
  results::Status status = results::Status::kFail;  // Fail, Inconclusive, Crash or Timeout
  std::string reason;                               // why it fails, in the sampler's terms
  // Optional pins. message_contains: text the failure's message (or the result's note) must
  // contain, the failure's class; minimal_input: the failure's shrunk input, exactly (the row).
  std::string message_contains;
  std::string minimal_input;
};

struct Expectations {
  std::string sampler, profile, note;
  std::optional<uint64_t> seed;
  std::map<ResultKey, Expectation> entries;
};

// Reads an expectations file. Every field is checked by name: an unknown key, a missing
// family, a conformant status or a key given twice is an error saying which entry. A file of
// the earlier format (entries by (property, dtype) only, no "format") is refused with how to
// convert it.
bool LoadExpectations(const std::string& path, Expectations* out, std::string* error);
bool ExpectationsFromJson(const nlohmann::json& j, const std::string& source, Expectations* out,
                          std::string* error);
nlohmann::json ExpectationsToJson(const Expectations& expectations);

// How a result differs from the expectations. FIX: a known failure now passes; REGRESSION: a
// failure no entry pins; DIFFERENCE: a pinned result with another status, another message or
// row than pinned, or (in a whole run) absent.
enum class DifferenceKind { kFix, kRegression, kDifference };
const char* DifferenceKindName(DifferenceKind kind);  // "FIX", "REGRESSION", "DIFFERENCE"
bool ParseDifferenceKind(const std::string& name, DifferenceKind* out);

struct ExpectationDifference {
  DifferenceKind kind = DifferenceKind::kDifference;
  ResultKey key;
  std::string text;  // the whole line: "FIX DIST-1/f32/flat_V64: expected Fail, now Pass ..."
  bool operator<(const ExpectationDifference& o) const {
    return std::tie(key, kind, text) < std::tie(o.key, o.kind, o.text);
  }
};

// Applies `expectations` to the report's results: each failure an entry pins exactly becomes
// KnownFailure (with the entry's status and reason), and every difference is recorded in
// report->expectation_differences. Entries whose result is absent are differences only when
// the report covers the whole plan (not a shard, not filtered: IsWholeRun). `strict` (the
// default of --expect) makes a FIX fail the expectation check; it is recorded in the context.
void ApplyExpectations(const Expectations& expectations, bool strict, Report* report);

// The reasons an earlier expectations file gives, of either format: by (property, dtype,
// family), and by (property, dtype) with the status they were given for. For
// `report expectations --reasons`, which keeps each reason while it still applies.
struct Reasons {
  std::map<ResultKey, std::pair<results::Status, std::string>> by_result;
  std::map<std::pair<std::string, std::string>, std::pair<results::Status, std::string>> by_cell;
  std::string note;
};
bool LoadReasons(const std::string& path, Reasons* out, std::string* error);

// An expectations file pinning every failure of a complete, whole-plan report (its known
// failures included, by the status they had): each keeps the reason `reasons` gives for its
// result, else for its (property, dtype) when given for the same status, else the failure's
// message (listed in *unreviewed, to be edited into why). Refuses an incomplete or partial
// report.
bool ExpectationsFromReport(const Report& report, const Reasons& reasons, Expectations* out,
                            std::vector<std::string>* unreviewed, std::string* error);

}  // namespace sampcert::reports

#endif  // SAMPCERT_REPORTS_EXPECTATIONS_H_

#include "reports/expectations.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "reports/report.h"
#include "reports/verdict.h"
#include "results/strict_json.h"

namespace sampcert::reports {

using nlohmann::json;
using results::Status;
using results::TestResult;

namespace {

constexpr const char* kConvert =
    "regenerate it from a report of the same run: `sampcert report expectations REPORT.json "
    "--reasons OLD_FILE -o NEW_FILE` keeps each reason";

// The statuses an entry may pin: the failing ones.
bool IsFailing(Status s) { return !results::IsConformant(s) && s != Status::kKnownFailure; }

ResultKey KeyOf(const TestResult& r) { return {r.property, r.dtype, r.family}; }

std::string MessageOf(const TestResult& r) {
  return r.failure && !r.failure->message.empty() ? r.failure->message : r.note;
}

// The string field `key` of `e`: absent is "", anything but a string an error.
bool StringField(const json& e, const char* key, std::string* out, std::string* error,
                 const std::string& where) {
  if (!e.contains(key)) return true;
  if (!e[key].is_string()) {
    *error = fmt::format("{}: \"{}\" must be a string, not {}", where, key, e[key].dump());
    return false;
  }
  *out = e[key].get<std::string>();
  return true;
}

bool EntryFromJson(const json& e, const std::string& where, ResultKey* key, Expectation* out,
                   std::string* error) {
  if (!e.is_object()) {
    *error = where + ": an entry must be an object";
    return false;
  }
  static const std::set<std::string> known = {
      "property", "dtype", "family", "status", "reason", "message_contains", "minimal_input"};
  for (const auto& [k, v] : e.items()) {
    if (!known.count(k)) {
      *error = fmt::format("{}: unknown key \"{}\"", where, k);
      return false;
    }
  }
  for (const char* required : {"property", "dtype", "family", "status", "reason"}) {
    if (!e.contains(required)) {
      *error = fmt::format("{}: \"{}\" is missing{}", where, required,
                           std::string(required) == "family"
                               ? " (entries pin (property, dtype, family) since format 2)"
                               : "");
      return false;
    }
  }
  std::string property, dtype, family, status;
  for (auto [name, field] : {std::pair{"property", &property},
                             {"dtype", &dtype},
                             {"family", &family},
                             {"status", &status},
                             {"reason", &out->reason},
                             {"message_contains", &out->message_contains},
                             {"minimal_input", &out->minimal_input}}) {
    if (!StringField(e, name, field, error, where)) return false;
  }
  if (property.empty() || dtype.empty() || family.empty()) {
    *error = where + ": property, dtype and family must not be empty";
    return false;
  }
  if (!results::ParseStatus(status, &out->status) || !IsFailing(out->status)) {
    *error = fmt::format(
        "{}: status \"{}\" is not one an entry pins (Fail, Inconclusive, Crash or Timeout)", where,
        status);
    return false;
  }
  if (out->reason.empty()) {
    *error = where + ": \"reason\" must say why the result fails";
    return false;
  }
  *key = {property, dtype, family};
  return true;
}

}  // namespace

std::string KeyName(const ResultKey& key) {
  return std::get<0>(key) + "/" + std::get<1>(key) + "/" + std::get<2>(key);
}

const char* DifferenceKindName(DifferenceKind kind) {
  switch (kind) {
    case DifferenceKind::kFix: return "FIX";
    case DifferenceKind::kRegression: return "REGRESSION";
    case DifferenceKind::kDifference: return "DIFFERENCE";
  }
  return "?";
}

bool ParseDifferenceKind(const std::string& name, DifferenceKind* out) {
  for (DifferenceKind k :
       {DifferenceKind::kFix, DifferenceKind::kRegression, DifferenceKind::kDifference}) {
    if (name == DifferenceKindName(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

bool ExpectationsFromJson(const json& j, const std::string& source, Expectations* out,
                          std::string* error) {
  *out = Expectations{};
  if (!j.is_object() || !j.contains("entries")) {
    *error = source + ": not an expectations file (no \"entries\")";
    return false;
  }
  if (!j.contains("format")) {
    *error = fmt::format(
        "{}: an expectations file of the earlier format (no \"format\": entries by (property, "
        "dtype) only, which waived a new failure in another row family). Format {} pins each "
        "known failure by (property, dtype, family): {}",
        source, kExpectationsFormat, kConvert);
    return false;
  }
  if (j["format"] != kExpectationsFormat) {
    *error =
        fmt::format("{}: format {} is not {}", source, j["format"].dump(), kExpectationsFormat);
    return false;
  }
  for (const auto& [k, v] : j.items()) {
    if (k != "format" && k != "sampler" && k != "profile" && k != "seed" && k != "note" &&
        k != "entries") {
      *error = fmt::format("{}: unknown key \"{}\"", source, k);
      return false;
    }
  }
  for (auto [name, field] :
       {std::pair{"sampler", &out->sampler}, {"profile", &out->profile}, {"note", &out->note}}) {
    if (!StringField(j, name, field, error, source)) return false;
  }
  if (j.contains("seed")) {
    if (!j["seed"].is_number_unsigned()) {
      *error = source + ": \"seed\" must be a whole number >= 0";
      return false;
    }
    out->seed = j["seed"].get<uint64_t>();
  }
  if (!j["entries"].is_array()) {
    *error = source + ": \"entries\" must be an array";
    return false;
  }
  std::size_t i = 0;
  for (const json& e : j["entries"]) {
    const std::string where = fmt::format("{}: entries[{}]", source, i++);
    ResultKey key;
    Expectation exp;
    if (!EntryFromJson(e, where, &key, &exp, error)) return false;
    if (!out->entries.emplace(key, exp).second) {
      *error = fmt::format("{}: {} is pinned twice", where, KeyName(key));
      return false;
    }
  }
  return true;
}

namespace {

// An expectations file through the strict reader (SPEC section 13): bounded, one document, no
// duplicate keys.
bool ReadExpectationsFile(const std::string& path, json* out, std::string* error) {
  std::string why;
  if (!results::ReadJsonFile(path, results::JsonKind::kExpectations, results::Symlinks::kFollow,
                             out, &why)) {
    *error = "cannot read expectations file: " + why;
    return false;
  }
  return true;
}

}  // namespace

bool LoadExpectations(const std::string& path, Expectations* out, std::string* error) {
  json j;
  if (!ReadExpectationsFile(path, &j, error)) return false;
  return ExpectationsFromJson(j, path, out, error);
}

json ExpectationsToJson(const Expectations& x) {
  json j = {{"format", kExpectationsFormat}};
  if (!x.sampler.empty()) j["sampler"] = x.sampler;
  if (!x.profile.empty()) j["profile"] = x.profile;
  if (x.seed) j["seed"] = *x.seed;
  if (!x.note.empty()) j["note"] = x.note;
  json entries = json::array();
  for (const auto& [key, e] : x.entries) {
    json entry = {{"property", std::get<0>(key)},
                  {"dtype", std::get<1>(key)},
                  {"family", std::get<2>(key)},
                  {"status", results::StatusName(e.status)},
                  {"reason", e.reason}};
    if (!e.message_contains.empty()) entry["message_contains"] = e.message_contains;
    if (!e.minimal_input.empty()) entry["minimal_input"] = e.minimal_input;
    entries.push_back(entry);
  }
  j["entries"] = entries;
  return j;
}

namespace {

// Why a result does not match its entry exactly (empty: it does).
std::string Mismatch(const TestResult& r, const Expectation& e) {
  if (r.status != e.status) {
    return fmt::format("expected {}, now {}", results::StatusName(e.status),
                       results::StatusName(r.status));
  }
  if (!e.message_contains.empty() && MessageOf(r).find(e.message_contains) == std::string::npos) {
    return fmt::format("expected a {} whose message contains \"{}\", now: {}",
                       results::StatusName(e.status), e.message_contains, MessageOf(r));
  }
  const std::string minimal = r.failure ? r.failure->minimal_input : "";
  if (!e.minimal_input.empty() && minimal != e.minimal_input) {
    return fmt::format("expected a {} on the pinned row {}, now on {}",
                       results::StatusName(e.status), e.minimal_input,
                       minimal.empty() ? "(none)" : minimal);
  }
  return {};
}

}  // namespace

void ApplyExpectations(const Expectations& expectations, bool strict, Report* report) {
  std::vector<ExpectationDifference>& diffs = report->expectation_differences;
  diffs.clear();
  std::set<ResultKey> seen;
  for (TestResult& r : report->results) {
    const ResultKey key = KeyOf(r);
    seen.insert(key);
    const auto it = expectations.entries.find(key);
    const std::string name = KeyName(key);
    if (it == expectations.entries.end()) {
      if (IsFailing(r.status)) {
        diffs.push_back({DifferenceKind::kRegression, key,
                         fmt::format("REGRESSION {}: {}, which no entry pins", name,
                                     results::StatusName(r.status))});
      }
      continue;
    }
    const Expectation& e = it->second;
    if (results::IsConformant(r.status)) {
      diffs.push_back({DifferenceKind::kFix, key,
                       fmt::format("FIX {}: expected {}, now {} (the entry can go)", name,
                                   results::StatusName(e.status), results::StatusName(r.status))});
      continue;
    }
    if (const std::string why = Mismatch(r, e); !why.empty()) {
      diffs.push_back({DifferenceKind::kDifference, key, "DIFFERENCE " + name + ": " + why});
      continue;
    }
    r.known_failure = results::KnownFailure{r.status, e.reason};
    r.status = Status::kKnownFailure;
  }
  // An entry with no result: in a whole run, the plan no longer has it (a renamed row family,
  // another profile); a shard or a filtered run simply did not run it.
  if (IsWholeRun(*report)) {
    for (const auto& [key, e] : expectations.entries) {
      if (seen.count(key)) continue;
      diffs.push_back({DifferenceKind::kDifference, key,
                       fmt::format("DIFFERENCE {}: expected {}, but the run has no such result",
                                   KeyName(key), results::StatusName(e.status))});
    }
  }
  std::sort(diffs.begin(), diffs.end());
  report->context["expectations_strict"] = strict;
}

bool LoadReasons(const std::string& path, Reasons* out, std::string* error) {
  json j;
  if (!ReadExpectationsFile(path, &j, error)) return false;
  try {
    out->note = j.value("note", "");
    for (const json& e : j.at("entries")) {
      Status s;
      const std::string status = e.at("status").get<std::string>();
      if (!results::ParseStatus(status, &s)) {
        *error = path + ": unknown status \"" + status + "\"";
        return false;
      }
      const std::pair<Status, std::string> reason{s, e.value("reason", "")};
      const std::string property = e.at("property"), dtype = e.at("dtype");
      if (e.contains("family")) {
        out->by_result[{property, dtype, e.at("family").get<std::string>()}] = reason;
      } else {
        out->by_cell[{property, dtype}] = reason;
      }
    }
  } catch (const std::exception& e) {
    *error = "malformed expectations file " + path + ": " + e.what();
    return false;
  }
  return true;
}

bool ExpectationsFromReport(const Report& report, const Reasons& reasons, Expectations* out,
                            std::vector<std::string>* unreviewed, std::string* error) {
  if (!report.complete) {
    *error = "the report is incomplete (" + report.incomplete_reason +
             "): expectations come from a complete run";
    return false;
  }
  if (const std::string scope = PartialScope(report); !scope.empty()) {
    *error = "the report is of a partial run (" + scope +
             "): expectations come from a run of the whole plan (or a merge of all its shards)";
    return false;
  }
  *out = Expectations{};
  out->sampler = report.sampler.value("name", "");
  out->profile = report.context.value("profile", "");
  if (report.context.contains("seed") && report.context["seed"].is_number_unsigned()) {
    out->seed = report.context["seed"].get<uint64_t>();
  }
  out->note = reasons.note;
  for (const TestResult& r : report.results) {
    const Status status = r.known_failure ? r.known_failure->status : r.status;
    if (!IsFailing(status)) continue;
    Expectation e;
    e.status = status;
    const ResultKey key = KeyOf(r);
    const auto exact = reasons.by_result.find(key);
    const auto cell = reasons.by_cell.find({r.property, r.dtype});
    if (exact != reasons.by_result.end() && exact->second.first == status) {
      e.reason = exact->second.second;
    } else if (r.known_failure && !r.known_failure->reason.empty()) {
      e.reason = r.known_failure->reason;
    } else if (cell != reasons.by_cell.end() && cell->second.first == status) {
      e.reason = cell->second.second;
    }
    if (e.reason.empty()) {
      // No reason on file for this status: the failure's own words, which are true, until a
      // person writes why.
      e.reason = MessageOf(r).empty() ? results::StatusName(status) : MessageOf(r);
      unreviewed->push_back(KeyName(key));
    }
    out->entries[key] = e;
  }
  return true;
}

}  // namespace sampcert::reports

#include "reports/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "reports/report_json.h"
#include "reports/report_schema.h"
#include "reports/report_set.h"
#include "reports/root_causes.h"
#include "results/strict_json.h"
#include "results/text.h"

namespace sampcert::reports {

using nlohmann::json;
using results::Status;
using results::TestResult;

int Severity(Status s) {
  switch (s) {
    case Status::kNotSupported: return 0;
    case Status::kPass: return 1;
    case Status::kWarning: return 2;
    case Status::kKnownFailure: return 3;
    case Status::kInconclusive: return 4;
    case Status::kFail: return 5;
    case Status::kTimeout: return 6;
    case Status::kCrash: return 7;
  }
  return 7;
}

std::map<Key, Status> Aggregate(const std::vector<TestResult>& results) {
  std::map<Key, Status> agg;
  for (const TestResult& r : results) {
    const Key key{r.property, r.dtype};
    auto it = agg.find(key);
    if (it == agg.end() || Severity(r.status) > Severity(it->second)) agg[key] = r.status;
  }
  return agg;
}

std::vector<CoverageCell> CoverageTable(const std::vector<TestResult>& results) {
  std::map<std::pair<std::string, std::string>, CoverageCell> cells;
  auto cell = [&](std::string_view axis_class) -> CoverageCell& {
    const std::size_t eq = axis_class.find('=');
    const std::string axis(axis_class.substr(0, eq));
    const std::string cls(eq == std::string_view::npos ? "" : axis_class.substr(eq + 1));
    CoverageCell& c = cells[{axis, cls}];
    c.axis = axis;
    c.cls = cls;
    return c;
  };
  for (const TestResult& r : results) {
    for (const auto& [tag, n] : r.coverage) {
      const std::string_view t = tag;
      if (t.starts_with(results::kCoverageClassTag)) {
        cell(t.substr(results::kCoverageClassTag.size())).rows_by_property[r.property] += n;
      } else if (t.starts_with(results::kCoverageExcludedTag)) {
        // "AXIS=CLASS (REASON)"
        const std::string_view rest = t.substr(results::kCoverageExcludedTag.size());
        const std::size_t open = rest.find(" (");
        if (open == std::string_view::npos || !rest.ends_with(")")) continue;
        cell(rest.substr(0, open)).excluded =
            std::string(rest.substr(open + 2, rest.size() - open - 3));
      }
    }
  }
  std::vector<CoverageCell> out;
  for (auto& [key, c] : cells) {
    if (!c.rows_by_property.empty()) c.excluded.clear();
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

// Context and sampler hold text from outside (a path, the CPU's name, a plug-in's name and
// version): every string, key or value, goes through the one sanitizer before it is JSON.
json Sanitized(const json& j) {
  if (j.is_string()) return results::SanitizeUtf8(j.get_ref<const std::string&>());
  if (j.is_array()) {
    json out = json::array();
    for (const json& x : j) out.push_back(Sanitized(x));
    return out;
  }
  if (j.is_object()) {
    json out = json::object();
    for (const auto& [k, v] : j.items()) out[results::SanitizeUtf8(k)] = Sanitized(v);
    return out;
  }
  return j;
}

}  // namespace

json ReportToJson(const Report& report) {
  json j;
  j["schema_version"] = kSchemaVersion;
  j["context"] = Sanitized(report.context);
  j["sampler"] = Sanitized(report.sampler);
  j["completeness"] = {{"complete", report.complete},
                       {"reason", results::SanitizeUtf8(report.incomplete_reason)}};
  if (report.signal > 0) j["completeness"]["signal"] = report.signal;
  // A screen (SPEC section 11) says so beside its status (schema 3.4), so that no reader of the
  // status alone takes it for a Pass of a distribution claim.
  const double target_tv = TargetTv(report);
  json rs = json::array();
  for (const TestResult& r : report.results) {
    rs.push_back(ToJson(r));
    if (IsScreen(r, target_tv)) rs.back()["screen"] = true;
  }
  j["results"] = rs;
  std::map<std::string, int> counts;
  for (const TestResult& r : report.results) ++counts[results::StatusName(r.status)];
  j["summary"] = counts;
  // The coverage table (schema 3.2), where the results carry design rows' tags.
  json coverage = json::array();
  for (const CoverageCell& c : CoverageTable(report.results)) {
    json cell = {{"axis", results::SanitizeUtf8(c.axis)}, {"class", results::SanitizeUtf8(c.cls)}};
    if (c.rows_by_property.empty()) {
      cell["excluded"] = results::SanitizeUtf8(c.excluded);
    } else {
      json by = json::object();
      for (const auto& [p, n] : c.rows_by_property) by[results::SanitizeUtf8(p)] = n;
      cell["properties"] = by;
    }
    coverage.push_back(std::move(cell));
  }
  if (!coverage.empty()) j["coverage"] = coverage;
  // The traceability table (schema 3.3): each clause, its evidence and what this run exercised.
  if (!report.clauses.empty()) {
    json clauses = json::array();
    for (const ClauseLine& c : report.clauses) {
      json line = {{"id", results::SanitizeUtf8(c.id)},
                   {"promise", results::SanitizeUtf8(c.promise)}};
      if (c.evidence.empty()) {
        line["not_exercised"] = results::SanitizeUtf8(c.not_exercised);
      } else {
        json words = json::array();
        for (const std::string& w : c.evidence) {
          words.push_back(
              {{"input", results::SanitizeUtf8(w)}, {"exercised", EvidenceExercised(report, w)}});
        }
        line["evidence"] = words;
      }
      clauses.push_back(std::move(line));
    }
    j["clauses"] = clauses;
  }
  // The sampler's speed (schema 3.5, SPEC REPORT-3): beside the verdict, never part of it.
  if (!report.speed.is_null()) {
    j["speed"] = Sanitized(report.speed);
    // Schema 3.6: the line the terminal, HTML and JUnit show, so that a reader (the Python
    // package) prints the tool's words instead of formatting the numbers again.
    j["speed"]["line"] = SpeedLine(report);
  }
  // Certified: the cells whose every result passed (or passed against a declared deviation);
  // a cell with a known failure is not certified, whatever its other families did, and an
  // incomplete or partial run certifies nothing (the rest of a cell may not have run).
  // A cell whose every result is a screen certifies no claim (SPEC section 11, "Screens are not
  // passes"): it is listed as screened instead.
  const Outcome outcome = Verdict(report);
  const bool whole = outcome.kind != OutcomeKind::kIncomplete && outcome.scope.empty();
  std::map<Key, bool> all_screens;
  for (const TestResult& r : report.results) {
    const Key key{r.property, r.dtype};
    const bool screen = IsScreen(r, target_tv);
    auto [it, fresh] = all_screens.try_emplace(key, screen);
    if (!fresh) it->second = it->second && screen;
  }
  json certified = json::array(), screened = json::array(), known = json::array(),
       not_conformant = json::array();
  for (const auto& [key, status] : Aggregate(report.results)) {
    const std::string name = results::SanitizeUtf8(key.first + "/" + key.second);
    if (whole && (status == Status::kPass || status == Status::kWarning)) {
      (all_screens[key] ? screened : certified).push_back(name);
    }
    if (status == Status::kKnownFailure) known.push_back(name);
    if (!results::IsConformant(status) && status != Status::kKnownFailure) {
      not_conformant.push_back(name);
    }
  }
  json differences = json::array();
  for (const ExpectationDifference& d : report.expectation_differences) {
    differences.push_back({{"kind", DifferenceKindName(d.kind)},
                           {"property", results::SanitizeUtf8(std::get<0>(d.key))},
                           {"dtype", results::SanitizeUtf8(std::get<1>(d.key))},
                           {"family", results::SanitizeUtf8(std::get<2>(d.key))},
                           {"text", results::SanitizeUtf8(d.text)}});
  }
  json causes = json::array();
  for (const RootCause& g : RootCauses(report.results)) {
    const TestResult& lead = report.results[g.lead];
    json dtypes = json::array(), families = json::array();
    for (const std::string& d : g.dtypes) dtypes.push_back(results::SanitizeUtf8(d));
    for (const std::string& f : g.families) families.push_back(results::SanitizeUtf8(f));
    causes.push_back({{"property", results::SanitizeUtf8(g.property)},
                      {"status", results::StatusName(g.status)},
                      {"message_class", results::SanitizeUtf8(g.message_class)},
                      {"count", g.results.size()},
                      {"dtypes", dtypes},
                      {"families", families},
                      {"lead",
                       {{"dtype", results::SanitizeUtf8(lead.dtype)},
                        {"family", results::SanitizeUtf8(lead.family)},
                        {"message", results::SanitizeUtf8(g.message)},
                        {"minimal_input", results::SanitizeUtf8(g.input)},
                        {"reproduction", results::SanitizeUtf8(g.reproduction)},
                        {"row_file", results::SanitizeUtf8(g.row_file)}}}});
  }
  j["verdict"] = {{"outcome", Info(outcome.kind).name},
                  {"root_causes", causes},
                  {"not_reached", NotReached(report.results)},
                  {"text", results::SanitizeUtf8(outcome.text)},
                  {"exit_code", outcome.exit_code},
                  {"conformant", outcome.kind == OutcomeKind::kConformant},
                  {"certified", certified},
                  {"screened", screened},
                  {"known_failures", known},
                  {"not_conformant", not_conformant},
                  {"expectation_differences", differences}};
  return j;
}

Report ReportFromJson(const json& j, std::string* error) {
  Report r;
  error->clear();
  try {
    // The MAJOR version is checked first, so an old report is refused by its version, not by
    // the first field the schema does not know.
    if (!j.is_object() || !j.contains("schema_version") || !j["schema_version"].is_string()) {
      *error = "/schema_version: missing or not a string (not a sampcert report?)";
      return r;
    }
    const std::string version = j.at("schema_version").get<std::string>();
    if (version.substr(0, version.find('.')) != std::string(kSchemaVersion).substr(0, 1)) {
      *error = "report schema version " + version + " is not " + kSchemaVersion +
               " (a report of another sampcert version: re-run it, or read it with that version)";
      return r;
    }
    // Then the whole document against the schema: a wrong type or an unknown status is an error
    // with its JSON path, never an exception and never a status read as another.
    if (std::string why = ValidateReport(j); !why.empty()) {
      *error = "does not match the report schema: " + why;
      return r;
    }
    r.context = j.at("context");
    r.complete = j.at("completeness").at("complete").get<bool>();
    r.incomplete_reason = j["completeness"].value("reason", "");
    r.signal = j["completeness"].value("signal", 0);
    r.sampler = j.at("sampler");
    r.speed = j.value("speed", json());
    if (r.speed.is_object()) r.speed.erase("line");  // derived: written again from the numbers
    // One result per (dtype, property, family): a repeated one would count twice, or hide the
    // other under the same name.
    std::set<std::tuple<std::string, std::string, std::string>> keys;
    for (const json& x : j.at("results")) {
      r.results.push_back(ResultFromJson(x));
      const TestResult& t = r.results.back();
      if (!keys.insert({t.dtype, t.property, t.family}).second) {
        *error = fmt::format("/results/{}: the result {}/{}/{} is given twice",
                             r.results.size() - 1, t.dtype, t.property, t.family);
        return r;
      }
    }
    for (const json& c : j.value("clauses", json::array())) {
      ClauseLine line{c.at("id"), c.at("promise"), {}, c.value("not_exercised", "")};
      for (const json& w : c.value("evidence", json::array()))
        line.evidence.push_back(w.at("input"));
      r.clauses.push_back(std::move(line));
    }
    for (const json& d : j.at("verdict").at("expectation_differences")) {
      ExpectationDifference diff;
      if (!ParseDifferenceKind(d.at("kind").get<std::string>(), &diff.kind)) {
        throw std::runtime_error("unknown expectation difference kind " + d.at("kind").dump());
      }
      diff.key = {d.at("property"), d.at("dtype"), d.at("family")};
      diff.text = d.at("text").get<std::string>();
      r.expectation_differences.push_back(std::move(diff));
    }
  } catch (const std::exception& e) {
    *error = std::string("malformed report: ") + e.what();
  }
  return r;
}

bool ReadReport(const std::string& path, Report* out, std::string* error) {
  // The whole set first (manifest, hashes, no symlinks), then report.json from the very bytes
  // that were hashed, parsed by the bounded reader.
  ReportSetFiles set;
  *error = ReadReportSet(path, &set);
  json j;
  if (error->empty() &&
      results::ParseJson(set.files.at(set.json_name), results::JsonKind::kReport, &j, error)) {
    *out = ReportFromJson(j, error);
  }
  // The failures' row files come from the verified set: a row file report.json names that the
  // manifest does not list is refused, never read from wherever it points.
  for (results::TestResult& r : out->results) {
    if (!error->empty()) break;
    if (!r.failure || r.failure->row_file.empty()) continue;
    auto it = set.files.find(r.failure->row_file);
    if (it == set.files.end()) {
      *error = fmt::format("{}/{}/{} names the row file {}, which {} does not list", r.dtype,
                           r.property, r.family, r.failure->row_file, kManifestName);
      break;
    }
    r.failure->row = it->second;
    while (!r.failure->row.empty() && r.failure->row.back() == '\n') r.failure->row.pop_back();
  }
  if (!error->empty()) *error = path + ": " + *error;
  return error->empty();
}

void SortResults(std::vector<TestResult>* results) {
  auto rank = [](const std::string& dtype) {
    return dtype == "f32" ? 0 : dtype == "f16" ? 1 : dtype == "bf16" ? 2 : 3;
  };
  std::stable_sort(results->begin(), results->end(), [&](const TestResult& a, const TestResult& b) {
    return std::make_tuple(rank(a.dtype), a.dtype, a.property, a.family) <
           std::make_tuple(rank(b.dtype), b.dtype, b.property, b.family);
  });
}

namespace {

// A canonical decimal: digits only, no leading zero (but "0"), at most 6 digits (kMaxShards).
bool ParseCanonical(std::string_view text, int* out) {
  if (text.empty() || text.size() > 6 || (text.size() > 1 && text[0] == '0')) return false;
  int v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

bool ParseShard(const std::string& text, int* index, int* count) {
  // Canonical decimal integers only: "01/2", "+1/2", "1/2x" and "1 /2" are refused, so one
  // shard has one name and `merge` can tell them apart. (No std::regex: GCC 12 warns inside it
  // under the sanitizers.)
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) return false;
  const std::string_view t(text);
  return ParseCanonical(t.substr(0, slash), index) && ParseCanonical(t.substr(slash + 1), count) &&
         *count >= 1 && *index < *count;
}

namespace {

// The sampler's whole declaration, less the argument it was opened by (the same plug-in may sit
// at another path on another machine; its file_sha256 says whether it is the same file).
json Declaration(const json& sampler) {
  json d = sampler;
  if (d.is_object()) d.erase("argument");
  return d;
}

std::string FirstDifference(const json& a, const json& b) {
  for (const auto& [k, v] : a.items()) {
    if (!b.contains(k)) return k + " (absent in one)";
    if (b[k] != v) return fmt::format("{} ({} vs {})", k, v.dump(), b[k].dump());
  }
  for (const auto& [k, v] : b.items()) {
    if (!a.contains(k)) return k + " (absent in one)";
  }
  return "?";
}

}  // namespace

double TargetTv(const Report& report) {
  return NumberFrom(report.context.value("required_tv", json(0.01)));
}

bool IsScreen(const TestResult& r, double target_tv) {
  return !std::isnan(r.power_tv) && r.power_tv > target_tv && results::IsConformant(r.status) &&
         r.status != Status::kNotSupported;
}

bool EvidenceExercised(const Report& report, const std::string& word) {
  const std::size_t colon = word.find(':');
  if (colon == std::string::npos) return false;
  const std::string kind = word.substr(0, colon), name = word.substr(colon + 1);
  if (kind == "design") {
    const std::size_t dot = name.find('.');
    for (const CoverageCell& c : CoverageTable(report.results)) {
      if (dot != std::string::npos && c.axis == name.substr(0, dot) &&
          c.cls == name.substr(dot + 1)) {
        return !c.rows_by_property.empty();
      }
    }
    return false;
  }
  for (const TestResult& r : report.results) {
    if (r.status == Status::kNotSupported) continue;
    if ((kind == "row" || kind == "chain") && r.family == name) return true;
    if (kind == "property" && r.property == name) return true;
  }
  return false;
}

bool Merge(const std::vector<Report>& shards, Report* out, std::string* error) {
  if (shards.empty()) {
    *error = "nothing to merge";
    return false;
  }
  const Report& first = shards.front();
  *out = first;
  out->results.clear();
  out->expectation_differences.clear();
  out->speed = nullptr;  // a shard measures none (REPORT-3); a merge has none to join
  std::set<int> indices;
  std::map<std::string, std::string> owner;  // result key -> the shard that carries it
  int count = -1;
  for (const Report& s : shards) {
    const std::string shard = s.context.value("shard", "");
    if (!s.complete) {
      *error = fmt::format("shard {} is incomplete ({}): rerun it", shard, s.incomplete_reason);
      return false;
    }
    // A filtered run (--dtype, --item, --case) is not a shard: its results are a subset chosen
    // by name, and merging it would certify what was never run.
    const json filters = s.context.value("filters", json());
    if (!filters.is_object()) {
      *error = fmt::format(
          "shard {} does not record its filters (a report from before schema "
          "2.1): rerun it",
          shard);
      return false;
    }
    if (!filters.empty()) {
      *error = fmt::format("shard {} was made with filters {}: only unfiltered runs merge", shard,
                           filters.dump());
      return false;
    }
    for (const char* field : {"profile", "seed", "plan_version", "expectations_strict"}) {
      if (s.context.value(field, json()) != first.context.value(field, json())) {
        *error = fmt::format("shards disagree on {}: {} vs {}", field,
                             s.context.value(field, json()).dump(),
                             first.context.value(field, json()).dump());
        return false;
      }
    }
    if (Declaration(s.sampler) != Declaration(first.sampler)) {
      *error = "shards are of different samplers: " +
               FirstDifference(Declaration(first.sampler), Declaration(s.sampler));
      return false;
    }
    int i = 0, n = 0;
    if (!ParseShard(shard, &i, &n)) {
      *error = fmt::format("'{}' is not a shard (I/N)", shard);
      return false;
    }
    if (count != -1 && n != count) {
      *error = fmt::format("shards of different splits: {} and {}", shard,
                           first.context.value("shard", ""));
      return false;
    }
    count = n;
    if (!indices.insert(i).second) {
      *error = "shard " + shard + " given twice";
      return false;
    }
    // A result belongs to one shard: one that two shards carry is refused, not counted twice.
    for (const TestResult& r : s.results) {
      const std::string key = r.dtype + "/" + r.property + "/" + r.family;
      auto [it, fresh] = owner.emplace(key, shard);
      if (!fresh) {
        *error =
            fmt::format("the result {} is given twice (shards {} and {})", key, it->second, shard);
        return false;
      }
    }
    out->results.insert(out->results.end(), s.results.begin(), s.results.end());
    out->expectation_differences.insert(out->expectation_differences.end(),
                                        s.expectation_differences.begin(),
                                        s.expectation_differences.end());
  }
  if (static_cast<int>(indices.size()) != count) {
    std::string missing;
    for (int i = 0; i < count && missing.size() < 200; ++i) {
      if (!indices.count(i))
        missing += fmt::format("{}{}/{}", missing.empty() ? "" : ", ", i, count);
    }
    *error = fmt::format("{} of {} shards given; missing {}", indices.size(), count, missing);
    return false;
  }
  // Shards without results certify nothing: "0 results: CONFORMANT" is not a verdict.
  if (out->results.empty()) {
    *error = fmt::format("the {} shards hold no results", shards.size());
    return false;
  }
  std::sort(out->expectation_differences.begin(), out->expectation_differences.end());
  SortResults(&out->results);
  double seconds = 0;
  for (const Report& s : shards) seconds += NumberFrom(s.context.value("seconds", json(0)));
  out->context["shard"] = fmt::format("merged from {} shards", shards.size());
  out->context["seconds"] = Number(seconds);
  return true;
}

namespace {

// The results as the sampler produced them: a known failure as the status it had.
std::vector<TestResult> AsRun(std::vector<TestResult> results) {
  for (TestResult& r : results) {
    if (r.known_failure) r.status = r.known_failure->status;
  }
  return results;
}

}  // namespace

std::vector<std::string> Diff(const Report& before, const Report& after) {
  // Reports of different plans tested different things: a status change between them is
  // neither a fix nor a regression.
  const json pa = before.context.value("plan_version", json()),
             pb = after.context.value("plan_version", json());
  if (pa != pb) {
    return {
        fmt::format("PLAN CHANGED {} -> {}: the reports test different plans; statuses are "
                    "not compared (make a new baseline)",
                    pa.is_null() ? "(none)" : pa.dump(), pb.is_null() ? "(none)" : pb.dump())};
  }
  std::vector<std::string> out;
  const auto a = Aggregate(AsRun(before.results));
  const auto b = Aggregate(AsRun(after.results));
  std::set<Key> keys;
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& [k, v] : b) keys.insert(k);
  for (const Key& k : keys) {
    const std::string name = k.first + "/" + k.second;
    auto ia = a.find(k);
    auto ib = b.find(k);
    if (ia == a.end()) {
      // A new test that does not pass is a regression like any other.
      out.push_back(fmt::format("{} {}: new, {}",
                                results::IsConformant(ib->second) ? "NEW" : "REGRESSION", name,
                                results::StatusName(ib->second)));
      continue;
    }
    if (ib == b.end()) {
      // A result that disappears is a test that no longer runs: never silently fine.
      out.push_back(
          fmt::format("REGRESSION {}: removed (was {})", name, results::StatusName(ia->second)));
      continue;
    }
    if (ia->second == ib->second) continue;
    const bool was = results::IsConformant(ia->second);
    const bool is = results::IsConformant(ib->second);
    // Any change into a non-conformant status is a regression (a new Crash after a Fail too);
    // out of one, a fix; between conformant statuses, a difference.
    const char* kind = !is ? "REGRESSION" : !was ? "FIX" : "DIFFERENCE";
    out.push_back(fmt::format("{} {}: {} -> {}", kind, name, results::StatusName(ia->second),
                              results::StatusName(ib->second)));
  }
  // Row families that went away inside a (property, dtype) that is still there.
  std::set<std::tuple<std::string, std::string, std::string>> now;
  for (const TestResult& r : after.results) now.insert({r.property, r.dtype, r.family});
  for (const TestResult& r : before.results) {
    if (b.count({r.property, r.dtype}) && !now.count({r.property, r.dtype, r.family})) {
      out.push_back(fmt::format("REGRESSION {}/{}/{}: removed (was {})", r.property, r.dtype,
                                r.family, results::StatusName(r.status)));
    }
  }
  return out;
}

namespace {

std::string S(std::string_view text) { return results::EscapeForTerminal(text); }

// The property x dtype table. A cell whose passes are screens (SPEC section 11) says so: "Pass
// (screen)" when every conformant result in it is one, "Pass (N screens)" when N of them are (N >
// 0).
std::string PropertyTable(const std::vector<TestResult>& results, double target_tv) {
  const auto agg = Aggregate(results);
  std::map<Key, std::pair<int, int>> screens;  // (screens, Pass or Warning results) per cell
  for (const TestResult& r : results) {
    auto& [n, of] = screens[{r.property, r.dtype}];
    n += IsScreen(r, target_tv);
    of += r.status == Status::kPass || r.status == Status::kWarning;
  }
  std::set<std::string> props, dtypes;
  std::map<Key, std::string> labels;
  std::size_t width = 13;
  for (const auto& [key, status] : agg) {
    props.insert(key.first);
    dtypes.insert(key.second);
    std::string label = results::StatusName(status);
    const auto [n, of] = screens[key];
    if (n > 0 && results::IsConformant(status)) {
      label += n == of ? " (screen)" : fmt::format(" ({} screen{})", n, n == 1 ? "" : "s");
    }
    width = std::max(width, label.size());
    labels[key] = std::move(label);
  }
  std::string out = fmt::format("{:<12}", "property");
  for (const std::string& d : dtypes) out += fmt::format(" {:<{}}", S(d), width);
  out += "\n";
  for (const std::string& p : props) {
    out += fmt::format("{:<12}", S(p));
    for (const std::string& d : dtypes) {
      auto it = labels.find({p, d});
      out += fmt::format(" {:<{}}", it == labels.end() ? "-" : it->second, width);
    }
    out += "\n";
  }
  return out;
}

// The screens (SPEC section 11), one line per property and dtype with their count and the range
// of the power they reached: diagnostics, never Passes of a distribution claim.
std::string Screens(const std::vector<TestResult>& results, double target_tv) {
  struct Group {
    int count = 0;
    double low = std::numeric_limits<double>::infinity(), high = 0;
  };
  std::map<Key, Group> groups;
  int total = 0;
  for (const TestResult& r : results) {
    if (!IsScreen(r, target_tv)) continue;
    ++total;
    Group& g = groups[{r.property, r.dtype}];
    ++g.count;
    g.low = std::min(g.low, r.power_tv);
    g.high = std::max(g.high, r.power_tv);
  }
  if (total == 0) return "";
  std::string out = fmt::format(
      "\nscreens ({}): passed with power short of the profile's target TV {:.3g}, diagnostics "
      "that certify no distribution claim (SPEC section 11):\n",
      total, target_tv);
  for (const auto& [key, g] : groups) {
    out += fmt::format("  {:<10} {:<5} {:>3} detect TV {:.2g}", S(key.first), S(key.second),
                       g.count, g.low);
    if (g.high > g.low) out += fmt::format(" to {:.2g}", g.high);
    out += "\n";
  }
  return out;
}

// A list of names as "a, b, c and 4 more".
std::string FewOf(const std::vector<std::string>& names, std::size_t shown) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) {
    out += (i == 0 ? "" : ", ") + S(names[i]);
  }
  if (names.size() > shown) out += fmt::format(" and {} more", names.size() - shown);
  return out;
}

// The root causes (root_causes.h), the first 20, each with its lead's input and reproduction:
// what to fix, before the list of every failure.
std::string RootCausesText(const std::vector<TestResult>& results) {
  constexpr std::size_t kShown = 20;
  const std::vector<RootCause> causes = RootCauses(results);
  const std::size_t not_reached = NotReached(results);
  if (causes.empty() && not_reached == 0) return "";
  std::size_t failing = not_reached;
  for (const RootCause& g : causes) failing += g.results.size();
  std::string out = fmt::format("\nroot causes: {} ({} failing results", causes.size(), failing);
  if (not_reached > 0) {
    out += fmt::format("; {} of them not reached because an earlier check failed", not_reached);
  }
  out += ")\n";
  for (std::size_t i = 0; i < causes.size() && i < kShown; ++i) {
    const RootCause& g = causes[i];
    out += fmt::format("  {}. {} {} x{} [{}] {}: {}\n", i + 1, S(g.property),
                       results::StatusName(g.status), g.results.size(), FewOf(g.dtypes, 3),
                       FewOf(g.families, 3), S(g.message_class));
    if (!g.input.empty()) out += fmt::format("     input: {}\n", S(g.input));
    if (!g.row_file.empty()) {
      out += fmt::format("     whole input: {} (beside report.json)\n", S(g.row_file));
    }
    if (!g.reproduction.empty()) out += fmt::format("     reproduce: {}\n", S(g.reproduction));
  }
  if (causes.size() > kShown) {
    out += fmt::format("  ({} more root causes in report.json)\n", causes.size() - kShown);
  }
  return out;
}

// The failures no expectation pins, each with its input and reproduction (the first 15), then
// the Inconclusive ones (the first 15).
std::string NewFailures(const std::vector<TestResult>& results) {
  constexpr int kShown = 15;
  std::string out;
  int shown = 0, more = 0;
  for (const TestResult& r : results) {
    if (results::IsConformant(r.status) || r.status == Status::kInconclusive ||
        r.status == Status::kKnownFailure) {
      continue;
    }
    if (++shown > kShown) {
      ++more;
      continue;
    }
    out += fmt::format("\n{} {} [{}] {}: {}\n", results::StatusName(r.status), S(r.property),
                       S(r.dtype), S(r.family), S(r.failure ? r.failure->message : r.note));
    if (r.failure) {
      out += fmt::format("  input:   {}\n", S(r.failure->input));
      if (!r.failure->minimal_input.empty() && r.failure->minimal_input != r.failure->input) {
        out += fmt::format("  minimal: {}\n", S(r.failure->minimal_input));
      }
      if (!r.failure->row_file.empty()) {  // the input above may be cut; this is all of it
        out += fmt::format("  whole input: {} (beside report.json)\n", S(r.failure->row_file));
      }
      if (!r.failure->reproduction.empty()) {
        out += fmt::format("  reproduce: {}\n", S(r.failure->reproduction));
      }
    }
  }
  if (more > 0) out += fmt::format("\n({} more failures in the report)\n", more);
  shown = more = 0;
  for (const TestResult& r : results) {
    if (r.status != Status::kInconclusive) continue;
    if (++shown > kShown) {
      ++more;
      continue;
    }
    out += fmt::format("\nInconclusive {} [{}] {}: {}\n", S(r.property), S(r.dtype), S(r.family),
                       S(r.note));
  }
  if (more > 0) out += fmt::format("\n({} more Inconclusive results in the report)\n", more);
  return out;
}

// The known failures, one line per (property, status, reason) with its count and dtypes: what
// the expectations file says the sampler gets wrong.
std::string KnownFailures(const std::vector<TestResult>& results) {
  struct Group {
    int count = 0;
    std::set<std::string> dtypes;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Group> groups;
  int total = 0;
  for (const TestResult& r : results) {
    if (!r.known_failure) continue;
    ++total;
    Group& g =
        groups[{r.property, results::StatusName(r.known_failure->status), r.known_failure->reason}];
    ++g.count;
    g.dtypes.insert(r.dtype);
  }
  if (total == 0) return "";
  std::string out = fmt::format("\nknown failures ({}, pinned by the expectations file):\n", total);
  for (const auto& [key, g] : groups) {
    const auto& [property, status, reason] = key;
    std::string dtypes;
    for (const std::string& d : g.dtypes) dtypes += (dtypes.empty() ? "" : " ") + d;
    // The whole reason: it is the expectations file's own words, and the terminal wraps it.
    out += fmt::format("  {:<10} {:<12} {:>3} ({}): {}\n", S(property), status, g.count, S(dtypes),
                       S(reason));
  }
  return out;
}

std::string Differences(const std::vector<ExpectationDifference>& diffs) {
  constexpr std::size_t kShown = 30;
  std::string out;
  for (std::size_t i = 0; i < diffs.size() && i < kShown; ++i) out += "\n" + S(diffs[i].text);
  if (diffs.size() > kShown) {
    out += fmt::format("\n({} more expectation differences in report.json)", diffs.size() - kShown);
  }
  return out;
}

}  // namespace

std::string SpeedLine(const Report& report) {
  const json& sp = report.speed;
  if (!sp.is_object()) return "";
  const auto time = [](double ns) {
    return ns < 1e3   ? fmt::format("{:.0f} ns", ns)
           : ns < 1e6 ? fmt::format("{:.1f} us", ns / 1e3)
                      : fmt::format("{:.2f} ms", ns / 1e6);
  };
  const auto rate = [](double per_s) {
    return per_s >= 1e6   ? fmt::format("{:.2f} M", per_s / 1e6)
           : per_s >= 1e3 ? fmt::format("{:.1f} k", per_s / 1e3)
                          : fmt::format("{:.1f}", per_s);
  };
  std::string out = "speed (informational, not part of the verdict): ";
  const std::string status = sp.value("status", "");
  if (status != "measured") {
    out += fmt::format("not measured, {} in the speed phase: {}", status, sp.value("message", ""));
  } else {
    out += fmt::format("{} V={}:", sp.value("dtype", "?"), sp.value("vocab", json(0)).dump());
    std::string shapes;
    for (const json& shape : sp.value("shapes", json::array())) {
      const uint64_t rows = shape.value("rows", uint64_t{0});
      shapes +=
          fmt::format("{} {} row{} {}/row ({} rows/s)", shapes.empty() ? "" : ";", rows,
                      rows == 1 ? "" : "s", time(NumberFrom(shape.value("ns_per_row", json()))),
                      rate(NumberFrom(shape.value("rows_per_s", json()))));
    }
    out += shapes;
  }
  const json machine = sp.value("machine", json::object());
  out += fmt::format("; on {} ({} cores)", machine.value("cpu", "?"),
                     machine.value("cores", json(0)).dump());
  return out;
}

std::string TextSummary(const Report& report, const std::string& path) {
  // Everything here may hold a sampler's bytes: escaped, so a name cannot move the cursor,
  // clear the screen or paint a verdict of its own.
  const json& c = report.context;
  const Outcome outcome = Verdict(report);
  std::string out =
      fmt::format("sampcert {} — sampler {} {} — profile {} seed {} shard {} — {:.1f} s\n",
                  S(c.value("tool_version", "?")), S(report.sampler.value("name", "?")),
                  S(report.sampler.value("version", "?")), S(c.value("profile", "?")),
                  c.value("seed", json(0)).dump(), S(c.value("shard", "0/1")),
                  NumberFrom(c.value("seconds", json(0))));
  // A run that is no verdict says so before anything that could read as one.
  if (outcome.kind == OutcomeKind::kIncomplete || outcome.kind == OutcomeKind::kPartial) {
    out += S(outcome.text) + "\n";
  }
  const double target_tv = TargetTv(report);
  out += PropertyTable(report.results, target_tv);
  out += Screens(report.results, target_tv);
  // The row files WriteReportSet writes beside report.json, named here too: a run's own
  // results carry each failure's row, not yet its file's name.
  std::vector<TestResult> named = report.results;
  for (TestResult& r : named) {
    if (r.failure && r.failure->row_file.empty() && !r.failure->row.empty()) {
      r.failure->row_file = RowFileName(r);
    }
  }
  out += RootCausesText(named);
  out += NewFailures(named);
  out += KnownFailures(report.results);
  out += Differences(report.expectation_differences);
  std::map<std::string, int> counts;
  for (const TestResult& r : report.results) ++counts[results::StatusName(r.status)];
  out += fmt::format("\n{} results:", report.results.size());
  for (const auto& [status, n] : counts) out += fmt::format(" {} {}", n, status);
  const auto screens = std::ranges::count_if(
      report.results, [&](const TestResult& r) { return IsScreen(r, target_tv); });
  if (screens > 0)
    out += fmt::format(", {} of them screens (not passes of a distribution claim)", screens);
  if (const std::string speed = SpeedLine(report); !speed.empty()) out += "\n" + S(speed);
  out += fmt::format("\nverdict: {} (report: {})\n", S(outcome.text), S(path));
  return out;
}

}  // namespace sampcert::reports

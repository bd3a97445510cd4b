#include "reports/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>
#include <tuple>

#include "reports/report_json.h"
#include "reports/report_schema.h"
#include "reports/report_set.h"
#include "results/strict_json.h"
#include "results/text.h"

namespace sampcert::reports {

using nlohmann::json;
using results::Status;
using results::TestResult;

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

std::map<Key, Status> Aggregate(const std::vector<TestResult>& results) {
  std::map<Key, Status> agg;
  for (const TestResult& r : results) {
    const Key key{r.property, r.dtype};
    auto it = agg.find(key);
    if (it == agg.end() || Severity(r.status) > Severity(it->second)) agg[key] = r.status;
  }
  return agg;
}

bool LoadExpectations(const std::string& path, Expectations* out, std::string* error) {
  json j;
  std::string why;
  if (!results::ReadJsonFile(path, results::JsonKind::kExpectations, results::Symlinks::kFollow, &j,
                             &why)) {
    *error = "cannot read expectations file: " + why;
    return false;
  }
  try {
    for (const json& e : j.at("entries")) {
      Status s;
      if (!results::ParseStatus(e.at("status").get<std::string>(), &s)) {
        *error = "unknown status in " + path + ": " + e.at("status").dump();
        return false;
      }
      const Key key{e.at("property").get<std::string>(), e.at("dtype").get<std::string>()};
      // One entry per (property, dtype): a second would silently replace the first.
      if (out->count(key)) {
        *error = "expectations file " + path + " gives " + key.first + "/" + key.second + " twice";
        return false;
      }
      (*out)[key] = Expectation{s, e.value("reason", "")};
    }
  } catch (const std::exception& e) {
    *error = "malformed expectations file " + path + ": " + e.what();
    return false;
  }
  return true;
}

std::vector<std::string> ApplyExpectations(const Expectations& expectations,
                                           std::vector<TestResult>* results) {
  std::vector<std::string> diffs;
  const auto agg = Aggregate(*results);
  for (const auto& [key, exp] : expectations) {
    auto it = agg.find(key);
    if (it == agg.end()) continue;
    const std::string name = key.first + "/" + key.second;
    if (results::IsConformant(it->second)) {
      diffs.push_back(fmt::format("FIX {}: expected {}, now {} (the waiver can go)", name,
                                  results::StatusName(exp.status),
                                  results::StatusName(it->second)));
    } else if (it->second != exp.status) {
      diffs.push_back(fmt::format("DIFFERENCE {}: expected {}, now {}", name,
                                  results::StatusName(exp.status),
                                  results::StatusName(it->second)));
    } else {
      // The key's worst status is the expected one: its other non-conformant results (less
      // severe, e.g. a property not reached on a family where an earlier check failed) are part
      // of the same expected failure.
      for (TestResult& r : *results) {
        if (r.property == key.first && r.dtype == key.second && !results::IsConformant(r.status)) {
          r.note = fmt::format("waived ({}{}): {}{}", results::StatusName(exp.status),
                               r.status == exp.status
                                   ? ""
                                   : std::string(", this family ") + results::StatusName(r.status),
                               exp.reason, r.note.empty() ? "" : "; " + r.note);
          r.status = Status::kWaived;
        }
      }
    }
  }
  for (const auto& [key, status] : Aggregate(*results)) {
    if (!results::IsConformant(status) && !expectations.count(key)) {
      diffs.push_back(fmt::format("REGRESSION {}/{}: expected a conformant status, now {}",
                                  key.first, key.second, results::StatusName(status)));
    }
  }
  return diffs;
}

bool Passed(const Report& report) {
  if (!report.expectation_differences.empty()) return false;
  for (const TestResult& r : report.results) {
    if (!results::IsConformant(r.status)) return false;
  }
  return true;
}

bool Partial(const Report& report, std::string* why) {
  const json& c = report.context;
  const std::string shard = c.is_object() ? c.value("shard", "0/1") : "0/1";
  int i = 0, n = 1;
  if (ParseShard(shard, &i, &n) && n > 1) {
    if (why) *why = fmt::format("shard {} of the plan (merge every shard for the verdict)", shard);
    return true;
  }
  if (c.is_object() && c.contains("filters") && c["filters"].is_object() && !c["filters"].empty()) {
    if (why) *why = fmt::format("a filtered run ({})", c["filters"].dump());
    return true;
  }
  return false;
}

bool Conformant(const Report& report) {
  // An interrupted, budget-stopped or partial run is not a verdict, whatever its items say.
  return report.complete && !Partial(report) && Passed(report);
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
  json rs = json::array();
  for (const TestResult& r : report.results) rs.push_back(ToJson(r));
  j["results"] = rs;
  std::map<std::string, int> counts;
  for (const TestResult& r : report.results) ++counts[results::StatusName(r.status)];
  j["summary"] = counts;
  json certified = json::array(), not_conformant = json::array();
  for (const auto& [key, status] : Aggregate(report.results)) {
    const std::string name = key.first + "/" + key.second;
    // An incomplete or partial run certifies nothing.
    if (report.complete && !Partial(report) &&
        (status == Status::kPass || status == Status::kWarning)) {
      certified.push_back(name);
    }
    if (!results::IsConformant(status)) not_conformant.push_back(results::SanitizeUtf8(name));
  }
  json differences = json::array();
  for (const std::string& d : report.expectation_differences) {
    differences.push_back(results::SanitizeUtf8(d));
  }
  j["verdict"] = {{"conformant", Conformant(report)},
                  {"certified", certified},
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
      *error = "report schema version " + version + " is not " + kSchemaVersion;
      return r;
    }
    // Then the whole document against the schema: a wrong type or an unknown status is an error
    // with its JSON path, never an exception and never a status read as another.
    if (std::string why = ValidateReport(j); !why.empty()) {
      *error = "does not match the report schema: " + why;
      return r;
    }
    r.context = j.at("context");
    if (j.contains("completeness")) {
      r.complete = j["completeness"].at("complete").get<bool>();
      r.incomplete_reason = j["completeness"].value("reason", "");
    }
    r.sampler = j.at("sampler");
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
    if (j.contains("verdict")) {
      r.expectation_differences =
          j["verdict"].value("expectation_differences", std::vector<std::string>{});
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

// A canonical decimal: digits only, no leading zero (but "0"), at most 6 digits.
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

bool Merge(const std::vector<Report>& shards, Report* out, std::string* error) {
  if (shards.empty()) {
    *error = "nothing to merge";
    return false;
  }
  const Report& first = shards.front();
  *out = first;
  out->results.clear();
  out->expectation_differences.clear();
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
    for (const char* field : {"profile", "seed", "plan_version"}) {
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
  const auto a = Aggregate(before.results);
  const auto b = Aggregate(after.results);
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

std::string TextSummary(const Report& report, const std::string& path) {
  // Everything here may hold a sampler's bytes: escaped, so a name cannot move the cursor,
  // clear the screen or paint a verdict of its own.
  const auto S = [](std::string_view text) { return results::EscapeForTerminal(text); };
  std::string out;
  const json& c = report.context;
  out += fmt::format("sampcert {} — sampler {} {} — profile {} seed {} shard {} — {:.1f} s\n",
                     S(c.value("tool_version", "?")), S(report.sampler.value("name", "?")),
                     S(report.sampler.value("version", "?")), S(c.value("profile", "?")),
                     c.value("seed", json(0)).dump(), S(c.value("shard", "0/1")),
                     NumberFrom(c.value("seconds", json(0))));
  const auto agg = Aggregate(report.results);
  std::set<std::string> props, dtypes;
  for (const auto& [key, status] : agg) {
    props.insert(key.first);
    dtypes.insert(key.second);
  }
  out += fmt::format("{:<12}", "property");
  for (const std::string& d : dtypes) out += fmt::format(" {:<13}", S(d));
  out += "\n";
  for (const std::string& p : props) {
    out += fmt::format("{:<12}", S(p));
    for (const std::string& d : dtypes) {
      auto it = agg.find({p, d});
      out += fmt::format(" {:<13}", it == agg.end() ? "-" : results::StatusName(it->second));
    }
    out += "\n";
  }
  int shown = 0;
  for (const TestResult& r : report.results) {
    if (results::IsConformant(r.status) || r.status == Status::kInconclusive) continue;
    if (++shown > 15) {
      out += "\n(more failures in the report)\n";
      break;
    }
    out += fmt::format("\n{} {} [{}] {}: {}\n", results::StatusName(r.status), S(r.property),
                       S(r.dtype), S(r.family), S(r.failure ? r.failure->message : r.note));
    if (r.failure) {
      out += fmt::format("  input:   {}\n", S(r.failure->input));
      if (!r.failure->minimal_input.empty() && r.failure->minimal_input != r.failure->input) {
        out += fmt::format("  minimal: {}\n", S(r.failure->minimal_input));
      }
      if (!r.failure->reproduction.empty()) {
        out += fmt::format("  reproduce: {}\n", S(r.failure->reproduction));
      }
    }
  }
  for (const TestResult& r : report.results) {
    if (r.status == Status::kInconclusive) {
      out += fmt::format("\nInconclusive {} [{}] {}: {}\n", S(r.property), S(r.dtype), S(r.family),
                         S(r.note));
    }
  }
  for (const std::string& d : report.expectation_differences) out += "\n" + S(d);
  std::map<std::string, int> counts;
  for (const TestResult& r : report.results) ++counts[results::StatusName(r.status)];
  out += fmt::format("\n{} results:", report.results.size());
  for (const auto& [status, n] : counts) out += fmt::format(" {} {}", n, status);
  if (!report.complete) {
    out += fmt::format("\nverdict: INCOMPLETE, no verdict: {} (report: {})\n",
                       S(report.incomplete_reason), S(path));
    return out;
  }
  if (std::string part; Partial(report, &part)) {
    out += fmt::format(
        "\nverdict: PARTIAL, no verdict for the sampler: {}; {} (report: {})\n", S(part),
        Passed(report) ? "no failure in this part" : "failures in this part", S(path));
    return out;
  }
  const bool ok = Conformant(report);
  const int waived = counts.count("Waived") ? counts.at("Waived") : 0;
  out += fmt::format(
      "\nverdict: {}{} (report: {})\n", ok ? "CONFORMANT" : "NOT CONFORMANT",
      ok && waived > 0 ? fmt::format(" with {} waived results (expected failures)", waived) : "",
      S(path));
  return out;
}

}  // namespace sampcert::reports

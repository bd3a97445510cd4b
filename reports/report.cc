#include "reports/report.h"

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <tuple>

#include "reports/report_json.h"

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
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read expectations file " + path;
    return false;
  }
  try {
    const json j = json::parse(in);
    for (const json& e : j.at("entries")) {
      Status s;
      if (!results::ParseStatus(e.at("status").get<std::string>(), &s)) {
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

bool Conformant(const Report& report) {
  if (!report.expectation_differences.empty()) return false;
  for (const TestResult& r : report.results) {
    if (!results::IsConformant(r.status)) return false;
  }
  return true;
}

json ReportToJson(const Report& report) {
  json j;
  j["schema_version"] = kSchemaVersion;
  j["context"] = report.context;
  j["sampler"] = report.sampler;
  j["completeness"] = {{"complete", report.complete}, {"reason", report.incomplete_reason}};
  json rs = json::array();
  for (const TestResult& r : report.results) rs.push_back(ToJson(r));
  j["results"] = rs;
  std::map<std::string, int> counts;
  for (const TestResult& r : report.results) ++counts[results::StatusName(r.status)];
  j["summary"] = counts;
  json certified = json::array(), not_conformant = json::array();
  for (const auto& [key, status] : Aggregate(report.results)) {
    const std::string name = key.first + "/" + key.second;
    if (status == Status::kPass || status == Status::kWarning) certified.push_back(name);
    if (!results::IsConformant(status)) not_conformant.push_back(name);
  }
  j["verdict"] = {{"conformant", Conformant(report)},
                  {"certified", certified},
                  {"not_conformant", not_conformant},
                  {"expectation_differences", report.expectation_differences}};
  return j;
}

Report ReportFromJson(const json& j, std::string* error) {
  Report r;
  error->clear();
  try {
    const std::string version = j.at("schema_version").get<std::string>();
    if (version.substr(0, version.find('.')) != std::string(kSchemaVersion).substr(0, 1)) {
      *error = "report schema version " + version + " is not " + kSchemaVersion;
      return r;
    }
    r.context = j.at("context");
    if (j.contains("completeness")) {
      r.complete = j["completeness"].at("complete").get<bool>();
      r.incomplete_reason = j["completeness"].value("reason", "");
    }
    r.sampler = j.at("sampler");
    for (const json& x : j.at("results")) r.results.push_back(ResultFromJson(x));
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
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path;
    return false;
  }
  try {
    *out = ReportFromJson(json::parse(in), error);
  } catch (const std::exception& e) {
    *error = path + ": " + e.what();
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

bool Merge(const std::vector<Report>& shards, Report* out, std::string* error) {
  if (shards.empty()) {
    *error = "nothing to merge";
    return false;
  }
  *out = shards.front();
  out->results.clear();
  out->expectation_differences.clear();
  std::set<std::string> shard_names;
  std::set<std::pair<std::string, std::string>> seen;  // (property/dtype/family)
  for (const Report& s : shards) {
    for (const char* field : {"profile", "seed"}) {
      if (s.context.value(field, json()) != shards.front().context.value(field, json())) {
        *error = fmt::format("shards disagree on {}: {} vs {}", field,
                             s.context.value(field, json()).dump(),
                             shards.front().context.value(field, json()).dump());
        return false;
      }
    }
    if (s.sampler.value("name", "") != shards.front().sampler.value("name", "")) {
      *error = "shards are of different samplers";
      return false;
    }
    const std::string shard = s.context.value("shard", "0/1");
    if (!shard_names.insert(shard).second) {
      *error = "shard " + shard + " given twice";
      return false;
    }
    for (const TestResult& r : s.results) {
      if (seen.insert({r.property + "/" + r.dtype + "/" + r.family, shard}).second) {
        out->results.push_back(r);
      }
    }
    out->expectation_differences.insert(out->expectation_differences.end(),
                                        s.expectation_differences.begin(),
                                        s.expectation_differences.end());
  }
  std::sort(out->expectation_differences.begin(), out->expectation_differences.end());
  SortResults(&out->results);
  const std::string first = shards.front().context.value("shard", "0/1");
  const auto slash = first.find('/');
  const std::size_t expected_shards =
      slash == std::string::npos ? 1 : std::stoul(first.substr(slash + 1));
  if (shard_names.size() != expected_shards) {
    *error = fmt::format("{} of {} shards given", shard_names.size(), expected_shards);
    return false;
  }
  double seconds = 0;
  for (const Report& s : shards) seconds += NumberFrom(s.context.value("seconds", json(0)));
  out->context["shard"] = fmt::format("merged from {} shards", shards.size());
  out->context["seconds"] = Number(seconds);
  return true;
}

std::vector<std::string> Diff(const Report& before, const Report& after) {
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
      out.push_back(fmt::format("NEW {}: {}", name, results::StatusName(ib->second)));
      continue;
    }
    if (ib == b.end()) {
      out.push_back(fmt::format("REMOVED {}: was {}", name, results::StatusName(ia->second)));
      continue;
    }
    if (ia->second == ib->second) continue;
    const bool was = results::IsConformant(ia->second);
    const bool is = results::IsConformant(ib->second);
    const char* kind = !was && is ? "FIX" : was && !is ? "REGRESSION" : "DIFFERENCE";
    out.push_back(fmt::format("{} {}: {} -> {}", kind, name, results::StatusName(ia->second),
                              results::StatusName(ib->second)));
  }
  return out;
}

std::string TextSummary(const Report& report, const std::string& path) {
  std::string out;
  const json& c = report.context;
  out += fmt::format("sampcert {} — sampler {} {} — profile {} seed {} shard {} — {:.1f} s\n",
                     c.value("tool_version", "?"), report.sampler.value("name", "?"),
                     report.sampler.value("version", "?"), c.value("profile", "?"),
                     c.value("seed", json(0)).dump(), c.value("shard", "0/1"),
                     NumberFrom(c.value("seconds", json(0))));
  const auto agg = Aggregate(report.results);
  std::set<std::string> props, dtypes;
  for (const auto& [key, status] : agg) {
    props.insert(key.first);
    dtypes.insert(key.second);
  }
  out += fmt::format("{:<12}", "property");
  for (const std::string& d : dtypes) out += fmt::format(" {:<13}", d);
  out += "\n";
  for (const std::string& p : props) {
    out += fmt::format("{:<12}", p);
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
    out += fmt::format("\n{} {} [{}] {}: {}\n", results::StatusName(r.status), r.property, r.dtype,
                       r.family, r.failure ? r.failure->message : r.note);
    if (r.failure) {
      out += fmt::format("  input:   {}\n", r.failure->input);
      if (!r.failure->minimal_input.empty() && r.failure->minimal_input != r.failure->input) {
        out += fmt::format("  minimal: {}\n", r.failure->minimal_input);
      }
      if (!r.failure->reproduction.empty()) {
        out += fmt::format("  reproduce: {}\n", r.failure->reproduction);
      }
    }
  }
  for (const TestResult& r : report.results) {
    if (r.status == Status::kInconclusive) {
      out += fmt::format("\nInconclusive {} [{}] {}: {}\n", r.property, r.dtype, r.family, r.note);
    }
  }
  for (const std::string& d : report.expectation_differences) out += "\n" + d;
  std::map<std::string, int> counts;
  for (const TestResult& r : report.results) ++counts[results::StatusName(r.status)];
  out += fmt::format("\n{} results:", report.results.size());
  for (const auto& [status, n] : counts) out += fmt::format(" {} {}", n, status);
  const bool ok = Conformant(report);
  const int waived = counts.count("Waived") ? counts.at("Waived") : 0;
  out += fmt::format(
      "\nverdict: {}{} (report: {})\n", ok ? "CONFORMANT" : "NOT CONFORMANT",
      ok && waived > 0 ? fmt::format(" with {} waived results (expected failures)", waived) : "",
      path);
  return out;
}

}  // namespace sampcert::reports

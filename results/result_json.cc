#include "results/result_json.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "results/text.h"

namespace sampcert::results {

using nlohmann::json;

json Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

double NumberFrom(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  return std::numeric_limits<double>::quiet_NaN();
}

json ToJson(const TestResult& r) {
  // Every string may hold a sampler's bytes (its messages, names it echoed): sanitized here, the
  // one place results become JSON, for the worker's pipe and the report alike.
  const auto T = [](const std::string& s) { return SanitizeUtf8(s); };
  json j = {{"property", T(r.property)},
            {"dtype", T(r.dtype)},
            {"family", T(r.family)},
            {"status", StatusName(r.status)},
            {"cases", r.cases},
            {"worst_error", Number(r.worst_error)},
            {"worst_input", T(r.worst_input)},
            {"worst_temperature", Number(r.worst_temperature)},
            {"seconds", Number(r.seconds)},
            {"coverage", json::object()}};
  for (const auto& [tag, n] : r.coverage) j["coverage"][T(tag)] = n;
  if (!std::isnan(r.level)) {
    j["statistics"] = {{"p_value", Number(r.p_value)},
                       {"level", Number(r.level)},
                       {"power_tv", Number(r.power_tv)},
                       {"draws", r.draws}};
    json obs = json::array(), exp = json::array();
    for (double o : r.observed) obs.push_back(Number(o));
    for (double e : r.expected) exp.push_back(Number(e));
    j["statistics"]["observed"] = obs;
    j["statistics"]["expected"] = exp;
    if (!r.cells.empty()) {
      json cells = json::array();
      for (const std::string& c : r.cells) cells.push_back(T(c));
      j["statistics"]["cells"] = cells;
    }
  }
  if (r.failure) {
    j["failure"] = {{"message", T(r.failure->message)},
                    {"input", T(r.failure->input)},
                    {"minimal_input", T(r.failure->minimal_input)},
                    {"reproduction", T(r.failure->reproduction)}};
    // The row travels inline only between a worker and the runner; a report names its file.
    if (!r.failure->row_file.empty()) {
      j["failure"]["row_file"] = T(r.failure->row_file);
    } else if (!r.failure->row.empty()) {
      j["failure"]["row"] = r.failure->row;
    }
  }
  if (!r.note.empty()) j["note"] = T(r.note);
  if (r.known_failure) {
    j["known_failure"] = {{"status", StatusName(r.known_failure->status)},
                          {"reason", T(r.known_failure->reason)}};
  }
  return j;
}

TestResult ResultFromJson(const json& j) {
  TestResult r;
  r.property = j.value("property", "");
  r.dtype = j.value("dtype", "");
  r.family = j.value("family", "");
  // A status outside the schema is an error, never read as Pass (the default).
  const std::string status = j.at("status").get<std::string>();
  if (!ParseStatus(status, &r.status)) throw std::runtime_error("unknown status '" + status + "'");
  r.cases = j.value("cases", uint64_t{0});
  r.worst_error = NumberFrom(j.value("worst_error", json("NaN")));
  r.worst_input = j.value("worst_input", "");
  r.worst_temperature = NumberFrom(j.value("worst_temperature", json("NaN")));
  r.seconds = NumberFrom(j.value("seconds", json(0)));
  if (j.contains("coverage")) r.coverage = j["coverage"].get<std::map<std::string, uint64_t>>();
  if (j.contains("statistics")) {
    const json& s = j["statistics"];
    r.p_value = NumberFrom(s.value("p_value", json("NaN")));
    r.level = NumberFrom(s.value("level", json("NaN")));
    r.power_tv = NumberFrom(s.value("power_tv", json("NaN")));
    r.draws = s.value("draws", uint64_t{0});
    for (const json& o : s.value("observed", json::array())) r.observed.push_back(NumberFrom(o));
    for (const json& e : s.value("expected", json::array())) r.expected.push_back(NumberFrom(e));
    for (const json& c : s.value("cells", json::array())) r.cells.push_back(c.get<std::string>());
  }
  if (j.contains("failure")) {
    const json& f = j["failure"];
    r.failure =
        Failure{f.value("message", ""),      f.value("input", ""), f.value("minimal_input", ""),
                f.value("reproduction", ""), f.value("row", ""),   f.value("row_file", "")};
  }
  r.note = j.value("note", "");
  if (j.contains("known_failure")) {
    const std::string was = j["known_failure"].at("status").get<std::string>();
    KnownFailure known;
    if (!ParseStatus(was, &known.status) || IsConformant(known.status) ||
        known.status == Status::kKnownFailure) {
      throw std::runtime_error("known_failure.status '" + was + "' is not a failing status");
    }
    known.reason = j["known_failure"].value("reason", "");
    r.known_failure = known;
  }
  // The two go together: a KnownFailure without its entry (or the reverse) is not a report
  // this tool writes.
  if ((r.status == Status::kKnownFailure) != r.known_failure.has_value()) {
    throw std::runtime_error("status KnownFailure and known_failure must come together");
  }
  return r;
}

}  // namespace sampcert::results

#include "reports/report_json.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "sampcert/sampler_abi.h"

namespace sampcert::reports {

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

json ToJson(const properties::TestResult& r) {
  json j = {{"property", r.property},
            {"dtype", r.dtype},
            {"family", r.family},
            {"status", properties::StatusName(r.status)},
            {"cases", r.cases},
            {"worst_error", Number(r.worst_error)},
            {"worst_input", r.worst_input},
            {"worst_temperature", Number(r.worst_temperature)},
            {"seconds", Number(r.seconds)},
            {"coverage", r.coverage}};
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
  }
  if (r.failure) {
    j["failure"] = {{"message", r.failure->message},
                    {"input", r.failure->input},
                    {"minimal_input", r.failure->minimal_input},
                    {"reproduction", r.failure->reproduction}};
  }
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

properties::TestResult ResultFromJson(const json& j) {
  properties::TestResult r;
  r.property = j.value("property", "");
  r.dtype = j.value("dtype", "");
  r.family = j.value("family", "");
  properties::ParseStatus(j.value("status", "Fail"), &r.status);
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
  }
  if (j.contains("failure")) {
    const json& f = j["failure"];
    r.failure = properties::Failure{f.value("message", ""), f.value("input", ""),
                                    f.value("minimal_input", ""), f.value("reproduction", "")};
  }
  r.note = j.value("note", "");
  return r;
}

json SamplerToJson(const adapters::SamplerInfo& info, const std::string& argument) {
  const json caps = adapters::CapabilityNames(info.capabilities);
  const Policies& p = info.policies;
  auto step = [](TruncationStep s) {
    return s == TruncationStep::kTopK ? "top-k" : s == TruncationStep::kTopP ? "top-p" : "min-p";
  };
  return {
      {"name", info.name},
      {"version", info.version},
      {"argument", argument},
      {"capabilities", caps},
      {"thread_safe", info.thread_safe},
      {"policies",
       {{"greedy_tie_break",
         p.greedy_tie_break == GreedyTieBreak::kUniform ? "uniform" : "lowest-index"},
        {"tie_rule", p.tie_rule == TieRule::kKeepAll            ? "keep-all"
                     : p.tie_rule == TieRule::kExactLowestIndex ? "exact-lowest-index"
                                                                : "exact-any"},
        {"pipeline_order",
         p.order == PipelineOrder::kTemperatureFirst ? "temperature-first" : "truncation-first"},
        {"truncation_order",
         {step(p.truncation_order[0]), step(p.truncation_order[1]), step(p.truncation_order[2])}},
        {"nan_policy", p.nan_policy == NanPolicy::kError ? "error" : "masked"},
        {"greedy_threshold", Number(p.greedy_threshold)},
        {"determinism", p.determinism == Determinism::kNone       ? "none"
                        : p.determinism == Determinism::kSameSeed ? "same-seed"
                                                                  : "cross-device"},
        {"accuracy", p.accuracy == AccuracyClass::kF32    ? "fp32"
                     : p.accuracy == AccuracyClass::kBF16 ? "bf16"
                                                          : "fp16"}}}};
}

std::string WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  const std::filesystem::path tmp =
      target.parent_path() / fmt::format(".{}.tmp.{}", target.filename().string(), getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno));
    out << text;
    out.flush();
    if (!out) return fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return fmt::format("cannot rename into {}: {}", path, ec.message());
  }
  return {};
}

}  // namespace sampcert::reports

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

#include "results/text.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::reports {

using nlohmann::json;

json SamplerToJson(const adapters::SamplerInfo& info, const std::string& argument,
                   const std::string& file_sha256, const std::optional<std::string>& config) {
  const json caps = adapters::CapabilityNames(info.capabilities);
  const Policies& p = info.policies;
  auto ties = [](TieRule r) {
    return r == TieRule::kKeepAll            ? "keep-all"
           : r == TieRule::kExactLowestIndex ? "exact-lowest-index"
                                             : "exact-any";
  };
  auto step = [](TruncationStep s) {
    return s == TruncationStep::kTopK ? "top-k" : s == TruncationStep::kTopP ? "top-p" : "min-p";
  };
  json j = {
      {"name", results::SanitizeUtf8(info.name)},
      {"version", results::SanitizeUtf8(info.version)},
      {"argument", results::SanitizeUtf8(argument)},
      {"capabilities", caps},
      {"thread_safe", info.thread_safe},
      {"policies",
       {{"greedy_tie_break", p.greedy_tie_break == GreedyTieBreak::kUniform       ? "uniform"
                             : p.greedy_tie_break == GreedyTieBreak::kLowestIndex ? "lowest-index"
                                                                                  : "any"},
        {"tie_rule", ties(p.tie_rule)},
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
  // ABI MINOR 1 declarations, written only where declared (schema 2.2).
  if (p.top_k_tie_rule) j["policies"]["top_k_tie_rule"] = ties(*p.top_k_tie_rule);
  if (p.top_p_tie_rule) j["policies"]["top_p_tie_rule"] = ties(*p.top_p_tie_rule);
  if (p.sequential_draws) j["policies"]["draws"] = "sequential";
  if (p.draw_cost_ns_per_token > 0) {
    j["policies"]["draw_cost_ns_per_token"] = Number(p.draw_cost_ns_per_token);
  }
  if (!file_sha256.empty()) j["file_sha256"] = file_sha256;
  if (config) j["config"] = results::SanitizeUtf8(*config);
  if (argument.starts_with("exec:")) j["exec"] = results::SanitizeUtf8(argument.substr(5));
  return j;
}

std::string WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  const std::filesystem::path tmp =
      target.parent_path() / fmt::format(".{}.tmp.{}", target.filename().string(), getpid());
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno));
    out << text;
    out.flush();
    if (!out) {
      const std::string why = std::strerror(errno);
      std::filesystem::remove(tmp, ec);  // no temporary left behind on any exit path
      return fmt::format("cannot write {}: {}", tmp.string(), why);
    }
  }
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return fmt::format("cannot rename into {}: {}", path, ec.message());
  }
  return {};
}

}  // namespace sampcert::reports

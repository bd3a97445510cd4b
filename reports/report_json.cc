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

json SamplerToJson(const adapters::SamplerInfo& info, const std::string& argument,
                   const std::optional<std::string>& config) {
  const json caps = adapters::CapabilityNames(info.capabilities);
  const Policies& p = info.policies;
  auto step = [](TruncationStep s) {
    return s == TruncationStep::kTopK ? "top-k" : s == TruncationStep::kTopP ? "top-p" : "min-p";
  };
  json out = {
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
  if (config) out["config"] = *config;
  if (argument.starts_with("exec:")) out["exec"] = argument.substr(5);
  return out;
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

#include "reports/report_json.h"

#include "reports/exclusive_file.h"
#include "results/text.h"

namespace sampcert::reports {

using nlohmann::json;

json SamplerToJson(const adapters::SamplerInfo& info, const std::string& argument,
                   const std::string& file_sha256, const std::optional<std::string>& config) {
  // capabilities, thread_safe and policies: the declaration tables' report names.
  json j = adapters::DeclarationToReport(info);
  j["name"] = results::SanitizeUtf8(info.name);
  j["version"] = results::SanitizeUtf8(info.version);
  j["argument"] = results::SanitizeUtf8(argument);
  if (!file_sha256.empty()) j["file_sha256"] = file_sha256;
  if (config) j["config"] = results::SanitizeUtf8(*config);
  if (argument.starts_with("exec:")) j["exec"] = results::SanitizeUtf8(argument.substr(5));
  return j;
}

std::string WriteFileAtomically(const std::string& path, const std::string& text) {
  return ReplaceAtomically(path, text);
}

}  // namespace sampcert::reports

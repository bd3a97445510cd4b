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

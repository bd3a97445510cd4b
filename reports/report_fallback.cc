#include "reports/report_fallback.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "reports/report_set.h"

namespace sampcert::reports {
namespace {

namespace fs = std::filesystem;

// Where a fallback folder may go, first choice first: beside --out, then the temporary folder.
std::vector<fs::path> FallbackParents(const std::string& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::path parent = fs::absolute(fs::path(dir), ec).parent_path();
  if (!ec && !parent.empty()) out.push_back(parent);
  const char* tmp = std::getenv("TMPDIR");
  out.emplace_back(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
  return out;
}

}  // namespace

std::string WriteReportSetOrFallback(const std::string& dir, const Report& report,
                                     std::string* json_path) {
  const std::string why = WriteReportSet(dir, report, json_path);
  if (why.empty()) return {};
  std::string tried;
  for (const fs::path& parent : FallbackParents(dir)) {
    std::string pattern = (parent / "sampcert-unpublished-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      tried += fmt::format("; mkdtemp in {}: {}", parent.string(), std::strerror(errno));
      continue;
    }
    std::string saved;
    if (std::string e = WriteReportSet(pattern, report, &saved); !e.empty()) {
      tried += "; " + e;
      std::error_code ignored;  // a full disk left an empty folder per try and run
      fs::remove_all(pattern, ignored);
      continue;
    }
    *json_path = saved;
    return fmt::format(
        "cannot publish the report set in {}: {} (was the folder changed during the run?); the "
        "results are saved in {}",
        dir, why, pattern);
  }
  return fmt::format("cannot publish the report set in {}: {}; nor save it elsewhere{}", dir, why,
                     tried);
}

}  // namespace sampcert::reports

#include "reports/report_set.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "reports/html.h"
#include "reports/junit.h"
#include "reports/report_json.h"
#include "reports/sha256.h"

namespace sampcert::reports {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kTempPrefix = ".sampcert-tmp.";

std::string Errno(const std::string& what) {
  return fmt::format("{}: {}", what, std::strerror(errno));
}

// Writes and fsyncs a whole file; the error names the call that failed and its errno.
std::string WriteWhole(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create " + path);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string e = Errno("cannot write " + path);
      ::close(fd);
      return e;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const std::string e = Errno("cannot sync " + path);
    ::close(fd);
    return e;
  }
  if (::close(fd) != 0) return Errno("cannot close " + path);
  return {};
}

// A temporary folder ".sampcert-tmp.PID.XXXXXX" is stale when its process is gone.
void RemoveStaleTemporaries(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kTempPrefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + std::strlen(kTempPrefix), nullptr, 10);
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      std::error_code ignored;
      fs::remove_all(e.path(), ignored);
    }
  }
}

// Removes the temporary folder on every way out of PublishFiles.
struct TempFolder {
  fs::path path;
  ~TempFolder() {
    if (path.empty()) return;
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

std::string CheckWritableFolder(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fmt::format("cannot create the report folder {}: {}", dir, ec.message());
  const std::string probe =
      (fs::path(dir) / fmt::format("{}probe.{}", kTempPrefix, getpid())).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("the report folder " + dir + " is not writable");
  ::close(fd);
  ::unlink(probe.c_str());
  return {};
}

std::string PublishFiles(const std::string& dir_name,
                         const std::vector<std::pair<std::string, std::string>>& files,
                         const std::function<void(const std::string&)>& after_publish) {
  const fs::path dir(dir_name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fmt::format("cannot create the report folder {}: {}", dir_name, ec.message());
  RemoveStaleTemporaries(dir);
  std::string pattern = (dir / fmt::format("{}{}.XXXXXX", kTempPrefix, getpid())).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Errno("cannot create a temporary folder in " + dir_name);
  }
  TempFolder tmp{pattern};
  json manifest = {{"files", json::array()}};
  for (const auto& [name, text] : files) {
    if (std::string e = WriteWhole((tmp.path / name).string(), text); !e.empty()) return e;
    manifest["files"].push_back({{"name", name}, {"sha256", Sha256Hex(text)}});
  }
  if (std::string e = WriteWhole((tmp.path / kManifestName).string(), manifest.dump(2) + "\n");
      !e.empty()) {
    return e;
  }
  // The old manifest goes first: from here until the new one is in place, the folder says that
  // its set is not known to be consistent.
  const std::string manifest_path = (dir / kManifestName).string();
  if (::unlink(manifest_path.c_str()) != 0 && errno != ENOENT) {
    return Errno("cannot remove the old " + manifest_path);
  }
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.first);
  names.push_back(kManifestName);
  for (const std::string& name : names) {
    const std::string from = (tmp.path / name).string(), to = (dir / name).string();
    if (::rename(from.c_str(), to.c_str()) != 0) {
      return Errno(fmt::format("cannot rename {} to {}", from, to));
    }
    if (after_publish) after_publish(name);
  }
  // The renames are durable once the folder itself is synced.
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

std::string RowFileName(const results::TestResult& r) {
  std::string name = "row." + r.dtype + "." + r.property + "." + r.family;
  for (char& c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '-';
    if (!plain) c = '_';
  }
  return name + ".json";
}

std::string WriteReportSet(const std::string& dir, const Report& report, std::string* json_path) {
  *json_path = (fs::path(dir) / "report.json").string();
  // Each failure's complete input goes into its own row file, published with the set; the
  // report names it. Result keys are unique, and so are the names (a collision after the
  // sanitizing would be a bug in the key, so it is checked).
  Report out = report;
  std::vector<std::pair<std::string, std::string>> files;
  std::set<std::string> names;
  for (results::TestResult& r : out.results) {
    if (!r.failure) continue;
    r.failure->row_file.clear();
    if (r.failure->row.empty()) continue;
    const std::string name = RowFileName(r);
    if (!names.insert(name).second) {
      return fmt::format("two results would share the row file {}", name);
    }
    files.emplace_back(name, r.failure->row + "\n");
    r.failure->row_file = name;
  }
  // report.json last of the three: a reader that only looks at it sees the new set only once the
  // others are in place too.
  files.emplace_back("report.html", RenderHtml(out));
  files.emplace_back("report.junit.xml", RenderJUnit(out));
  files.emplace_back("report.json", ReportToJson(out).dump(2) + "\n");
  return PublishFiles(dir, files);
}

std::string CheckManifest(const std::string& json_path) {
  const fs::path p(json_path);
  const fs::path manifest = p.parent_path() / kManifestName;
  std::error_code ec;
  if (!fs::exists(manifest, ec)) return {};
  try {
    std::ifstream in(manifest);
    const json m = json::parse(in);
    std::ifstream r(json_path, std::ios::binary);
    std::stringstream text;
    text << r.rdbuf();
    for (const json& f : m.at("files")) {
      if (f.at("name").get<std::string>() != p.filename().string()) continue;
      if (f.at("sha256").get<std::string>() == Sha256Hex(text.str())) return {};
      return fmt::format("{} does not match {} (an interrupted or mixed report set)", json_path,
                         manifest.string());
    }
  } catch (const std::exception& e) {
    return fmt::format("unreadable {}: {}", manifest.string(), e.what());
  }
  return {};  // a manifest that does not list this file says nothing about it
}

}  // namespace sampcert::reports

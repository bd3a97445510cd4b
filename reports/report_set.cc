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
#include <nlohmann/json.hpp>
#include <set>

#include "reports/exclusive_file.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/report_json.h"
#include "reports/sha256.h"
#include "results/strict_json.h"

namespace sampcert::reports {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kTempPrefix = ".sampcert-tmp.";

std::string Errno(const std::string& what) {
  return fmt::format("{}: {}", what, std::strerror(errno));
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

// A file name a set may hold: [A-Za-z0-9._-], not hidden (the temporaries are), no '/'.
bool PlainName(const std::string& name) {
  if (name.empty() || name.size() > 255 || name.front() == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool IsSha256Hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Each destination is absent, a file or a symlink (rename replaces either); anything else (a
// directory where report.junit.xml goes) would fail mid-publication, so it is found first.
std::string CheckDestinations(const fs::path& dir, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    struct stat st {};
    const std::string path = (dir / name).string();
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;
      return Errno("cannot inspect " + path);
    }
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
      return fmt::format(
          "cannot publish the report set: {} is {}, not a file (the set already in {} is left "
          "as it was)",
          path, S_ISDIR(st.st_mode) ? "a directory" : "something else", dir.string());
    }
  }
  return {};
}

// create_directories, with the cause named where its error would mislead: a dangling symlink
// at the folder's name gave "File exists".
std::string MakeFolder(const std::string& dir) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(dir, ec)) && !fs::exists(dir, ec)) {
    return fmt::format(
        "cannot create the report folder {}: it is a symbolic link to {}, which does not exist",
        dir, fs::read_symlink(dir, ec).string());
  }
  fs::create_directories(dir, ec);
  if (ec) return fmt::format("cannot create the report folder {}: {}", dir, ec.message());
  return {};
}

}  // namespace

std::string CheckWritableFolder(const std::string& dir) {
  if (std::string e = MakeFolder(dir); !e.empty()) return e;
  // The probe's name is unpredictable and it is created exclusively (SPEC FILE-1): a name fixed
  // by the pid let a symlink planted for each pid truncate its target.
  std::string probe;
  if (std::string e =
          CreateUniqueFile(dir, fmt::format("{}{}.probe.", kTempPrefix, getpid()), &probe);
      !e.empty()) {
    return fmt::format("the report folder {} is not writable: {}", dir, e);
  }
  ::unlink(probe.c_str());
  return {};
}

std::string PublishFiles(const std::string& dir_name,
                         const std::vector<std::pair<std::string, std::string>>& files,
                         const std::function<void(const std::string&)>& after_publish,
                         const std::vector<std::pair<std::string, std::string>>& kept) {
  const fs::path dir(dir_name);
  if (std::string e = MakeFolder(dir_name); !e.empty()) return e;
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.first);
  names.push_back(kManifestName);
  if (std::string e = CheckDestinations(dir, names); !e.empty()) return e;
  RemoveStaleTemporaries(dir);
  std::string pattern = (dir / fmt::format("{}{}.XXXXXX", kTempPrefix, getpid())).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Errno("cannot create a temporary folder in " + dir_name);
  }
  TempFolder tmp{pattern};
  json manifest = {{"files", json::array()}};
  for (const auto& [name, text] : files) {
    if (std::string e = CreateExclusive((tmp.path / name).string(), text); !e.empty()) return e;
    manifest["files"].push_back({{"name", name}, {"sha256", Sha256Hex(text)}});
  }
  for (const auto& [name, sha256] : kept) {
    manifest["files"].push_back({{"name", name}, {"sha256", sha256}});
  }
  if (std::string e = CreateExclusive((tmp.path / kManifestName).string(), manifest.dump(2) + "\n");
      !e.empty()) {
    return e;
  }
  // The old manifest goes first: from here until the new one is in place, the folder says that
  // its set is not known to be consistent.
  const std::string manifest_path = (dir / kManifestName).string();
  if (::unlink(manifest_path.c_str()) != 0 && errno != ENOENT) {
    return Errno("cannot remove the old " + manifest_path);
  }
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

namespace {

// The manifest's shape: {"files": [{"name": ..., "sha256": ...}, ...]}, names plain and unique,
// the set's three reports among them.
std::string ParseManifest(const json& m, const std::string& json_name,
                          std::vector<std::pair<std::string, std::string>>* entries) {
  if (!m.is_object() || m.size() != 1 || !m.contains("files") || !m["files"].is_array()) {
    return "it must be {\"files\": [{\"name\": ..., \"sha256\": ...}, ...]}";
  }
  std::set<std::string> seen;
  for (const json& e : m["files"]) {
    if (!e.is_object() || e.size() != 2 || !e.contains("name") || !e["name"].is_string() ||
        !e.contains("sha256") || !e["sha256"].is_string()) {
      return "each entry must be {\"name\": string, \"sha256\": string}";
    }
    const std::string name = e["name"].get<std::string>(), sha = e["sha256"].get<std::string>();
    if (!PlainName(name) || name == kManifestName) {
      return fmt::format("it lists '{}', which is not a plain file name of the set", name);
    }
    if (!IsSha256Hex(sha)) return fmt::format("the hash of {} is not 64 hex digits", name);
    if (!seen.insert(name).second) return fmt::format("it lists {} twice", name);
    entries->emplace_back(name, sha);
  }
  for (const std::string& required :
       {json_name, std::string("report.html"), std::string("report.junit.xml")}) {
    if (!seen.count(required)) {
      return fmt::format("it does not list {}: not the manifest of this report's set", required);
    }
  }
  return {};
}

}  // namespace

std::string ReadReportSet(const std::string& json_path, ReportSetFiles* out) {
  const fs::path p(json_path);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  const std::string manifest_path = (dir / kManifestName).string();
  out->json_name = p.filename().string();
  out->files.clear();
  struct stat st {};
  if (::lstat(manifest_path.c_str(), &st) != 0 && errno == ENOENT) {
    return fmt::format(
        "no {} beside it: the report set is not whole (its publication was interrupted, or "
        "report.json was copied without the rest of its folder); run it again",
        kManifestName);
  }
  json m;
  std::string why;
  if (!results::ReadJsonFile(manifest_path, results::JsonKind::kManifest,
                             results::Symlinks::kRefuse, &m, &why)) {
    return "unreadable manifest: " + why;
  }
  std::vector<std::pair<std::string, std::string>> entries;
  if (std::string e = ParseManifest(m, out->json_name, &entries); !e.empty()) {
    return fmt::format("{}: {}", manifest_path, e);
  }
  for (const auto& [name, sha256] : entries) {
    // Row files have their own limit; the reports the report's.
    const results::JsonKind kind =
        name.rfind("row.", 0) == 0 ? results::JsonKind::kRowFile : results::JsonKind::kReport;
    std::string text;
    if (!results::ReadRegularFile((dir / name).string(), results::LimitsOf(kind).max_bytes,
                                  results::Symlinks::kRefuse, &text, &why)) {
      return fmt::format("{} of the report set: {}", name, why);
    }
    if (Sha256Hex(text) != sha256) {
      return fmt::format(
          "{} does not match its hash in {} (a mixed or altered report set: files of two runs, "
          "or a file changed after publication)",
          (dir / name).string(), kManifestName);
    }
    out->files.emplace(name, std::move(text));
  }
  return {};
}

std::string ReplaceSetFile(const std::string& dir, const ReportSetFiles& set,
                           const std::string& name, const std::string& text) {
  if (!set.files.count(name)) return fmt::format("{} is not a file of the report set", name);
  std::vector<std::pair<std::string, std::string>> kept;
  for (const auto& [other, contents] : set.files) {
    if (other != name) kept.emplace_back(other, Sha256Hex(contents));
  }
  return PublishFiles(dir, {{name, text}}, {}, kept);
}

}  // namespace sampcert::reports

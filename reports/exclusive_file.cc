#include "reports/exclusive_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <utility>

#include "adapters/unique_fd.h"

namespace sampcert::reports {
namespace {

std::string Errno(const std::string& what) {
  return fmt::format("{}: {}", what, std::strerror(errno));
}

// Writes all of `text` to `fd`, fsyncs and closes it.
std::string WriteAndClose(UniqueFd fd, const std::string& path, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write " + path);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return Errno("cannot sync " + path);
  if (::close(fd.release()) != 0) return Errno("cannot close " + path);
  return {};
}

// A new file named prefix + 12 random hex digits, created as CreateExclusive creates one (mode
// 0644 under the umask, as every other file of the tool; mkstemp's 0600 would hide a report from
// the user's group), a fresh name tried on a collision.
std::pair<UniqueFd, std::string> OpenUnique(const std::string& dir, const std::string& prefix,
                                            std::string* path) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    uint64_t r = 0;
    if (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) {
      return {UniqueFd(), Errno("cannot draw a temporary name (getrandom)")};
    }
    const std::string name =
        (std::filesystem::path(dir) / fmt::format("{}{:012x}", prefix, r >> 16)).string();
    UniqueFd fd(::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (fd) {
      *path = name;
      return {std::move(fd), std::string()};
    }
    if (errno != EEXIST) return {UniqueFd(), Errno("cannot create " + name)};
  }
  return {UniqueFd(), fmt::format("cannot create {}* in {}: 100 names taken", prefix, dir)};
}

}  // namespace

std::string CreateExclusive(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) return Errno("cannot create " + path);
  return WriteAndClose(std::move(fd), path, text);
}

std::string CreateUniqueFile(const std::string& dir, const std::string& prefix, std::string* path) {
  return OpenUnique(dir, prefix, path).second;
}

std::string ReplaceAtomically(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  const std::filesystem::path parent =
      target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  std::string tmp;
  auto [fd, e] = OpenUnique(parent.string(), "." + target.filename().string() + ".tmp.", &tmp);
  if (!e.empty()) return e;
  e = WriteAndClose(std::move(fd), tmp, text);
  if (e.empty() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    e = Errno(fmt::format("cannot rename {} to {}", tmp, path));
  }
  if (!e.empty()) ::unlink(tmp.c_str());  // no temporary left behind on any exit path
  return e;
}

}  // namespace sampcert::reports

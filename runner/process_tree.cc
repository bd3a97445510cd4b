#include "runner/process_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "adapters/unique_fd.h"

namespace sampcert::runner {
namespace {

// The parent of `pid` from /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold spaces
// and parentheses, so the fields start after the last ')'); -1 if it is gone.
pid_t ParentOf(long pid) {
  char path[64];  // "/proc/" + at most 20 digits + "/stat"
  std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  const UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return -1;
  char buf[1024];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');
  if (close == nullptr || close[1] != ' ' || close[2] == '\0' || close[3] != ' ') return -1;
  return static_cast<pid_t>(std::strtol(close + 4, nullptr, 10));
}

// pid -> parent for every process now in /proc.
std::multimap<pid_t, pid_t> ChildrenByParent() {
  std::multimap<pid_t, pid_t> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 0) continue;
    const pid_t parent = ParentOf(pid);
    if (parent > 0) out.emplace(parent, static_cast<pid_t>(pid));
  }
  ::closedir(dir);
  return out;
}

}  // namespace

std::vector<pid_t> Descendants(pid_t root) {
  const std::multimap<pid_t, pid_t> children = ChildrenByParent();
  std::vector<pid_t> out;
  std::vector<pid_t> frontier{root};
  while (!frontier.empty()) {
    const pid_t p = frontier.back();
    frontier.pop_back();
    const auto [first, last] = children.equal_range(p);
    for (auto it = first; it != last; ++it) {
      if (it->second == root) continue;  // a pid reused while we read: no cycle
      out.push_back(it->second);
      frontier.push_back(it->second);
    }
    if (out.size() > (1u << 20)) break;  // bounded whatever /proc says
  }
  return out;
}

std::size_t KillDescendants(pid_t root) {
  const std::vector<pid_t> all = Descendants(root);
  for (pid_t p : all) ::kill(p, SIGKILL);
  return all.size();
}

bool EndAllDescendants(double max_seconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(max_seconds));
  const pid_t self = ::getpid();
  for (;;) {
    KillDescendants(self);
    // Killed descendants' children are reparented to us (the subreaper): reap what has ended.
    pid_t r;
    while ((r = ::waitpid(-1, nullptr, WNOHANG)) > 0) {
    }
    if (r < 0 && errno == ECHILD) return true;  // no child left, hence no descendant
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace sampcert::runner

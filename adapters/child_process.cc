#include "adapters/child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

namespace sampcert {
namespace {

using Clock = std::chrono::steady_clock;

// Everything the child needs, prepared before the fork: between fork and exec (or the
// function) the child makes only async-signal-safe calls, so it allocates nothing.
struct ChildPlan {
  ChildPlan(const ChildOptions& o, const FdPair& capture, int exec_error_fd) : options(o) {
    fds = o.fds;
    for (int fd : o.captured) fds.push_back({fd, capture[1].get()});
    // The exec-error pipe goes to any number that is not a target (child_fd -1).
    if (exec_error_fd >= 0) fds.push_back({-1, exec_error_fd});
    moved.assign(fds.size(), -1);
    keep.assign(fds.size() + 3, -1);
    open_max = std::min<long>(sysconf(_SC_OPEN_MAX), 65536);
  }
  bool IsTarget(int fd) const {
    return std::any_of(fds.begin(), fds.end(),
                       [fd](const FdMapping& m) { return m.child_fd == fd; });
  }

  const ChildOptions& options;
  std::vector<FdMapping> fds;
  std::vector<int> moved;  // scratch: each source's copy out of the targets' way
  std::vector<int> keep;   // scratch: the descriptors that stay open
  pid_t parent = getpid();
  long open_max = 0;
};

// Closes [first, last] (close_range, or one by one where the kernel lacks it).
void CloseRange(long first, long last, long open_max) {
  if (first > last) return;
  if (syscall(SYS_close_range, static_cast<unsigned>(first), static_cast<unsigned>(last), 0u) ==
      0) {
    return;
  }
  for (long fd = first; fd <= last && fd < open_max; ++fd) close(static_cast<int>(fd));
}

// In the child: every source is first copied to a number no target uses (so placing one
// target never overwrites a source still to be placed), then placed; the rest is closed.
ForkSetup MapDescriptors(ChildPlan& plan, bool cloexec) {
  ForkSetup setup;
  for (std::size_t i = 0; i < plan.fds.size(); ++i) {
    int fd = fcntl(plan.fds[i].parent_fd, F_DUPFD_CLOEXEC, 3);
    // A copy that landed on a target's number is left there: placing that target replaces it.
    while (fd >= 0 && plan.IsTarget(fd)) fd = fcntl(plan.fds[i].parent_fd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0 && setup.failed_step == nullptr) setup = {"dup", errno};
    plan.moved[i] = fd;
  }
  std::size_t kept = 0;
  for (int fd : {0, 1, 2}) plan.keep[kept++] = fd;
  for (std::size_t i = 0; i < plan.fds.size(); ++i) {
    const int target = plan.fds[i].child_fd;
    if (target < 0) {  // stays where it was moved
      plan.keep[kept++] = plan.moved[i];
      continue;
    }
    if (plan.moved[i] >= 0 && dup3(plan.moved[i], target, cloexec ? O_CLOEXEC : 0) < 0 &&
        setup.failed_step == nullptr) {
      setup = {"dup", errno};
    }
    if (target > 2) plan.keep[kept++] = target;
  }
  std::sort(plan.keep.begin(), plan.keep.begin() + static_cast<long>(kept));
  long next = 3;
  for (std::size_t i = 0; i < kept; ++i) {
    if (plan.keep[i] < next) continue;
    CloseRange(next, plan.keep[i] - 1, plan.open_max);
    next = plan.keep[i] + 1;
  }
  CloseRange(next, ~0u, plan.open_max);
  return setup;
}

// In the child, first of all: the process group, the death signal, the descriptors.
ForkSetup SetUpChild(ChildPlan& plan, bool fork_only) {
  const ChildOptions& o = plan.options;
  if (o.own_process_group) setpgid(0, 0);
  if (fork_only && o.death_handler != nullptr) {
    struct sigaction sa {};
    sa.sa_handler = o.death_handler;
    sigaction(o.death_signal, &sa, nullptr);
  }
  prctl(PR_SET_PDEATHSIG, o.death_signal);
  if (getppid() != plan.parent) _exit(127);  // the parent died before prctl: nobody waits
  return MapDescriptors(plan, /*cloexec=*/fork_only);
}

std::vector<char*> NullTerminated(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

ChildProcess::ChildProcess(pid_t pid, bool own_group, UniqueFd output, std::size_t kept)
    : pid_(pid), owner_(getpid()), own_group_(own_group), output_(std::move(output)), kept_(kept) {
  if (own_group_) setpgid(pid_, pid_);  // also here: no window in which a group kill misses it
  if (output_) fcntl(output_.get(), F_SETFL, O_NONBLOCK);
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)),
      owner_(o.owner_),
      own_group_(o.own_group_),
      output_(std::move(o.output_)),
      kept_(o.kept_),
      output_text_(std::move(o.output_text_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    if (running() && owned_here()) Terminate(std::chrono::milliseconds(0));
    pid_ = std::exchange(o.pid_, -1);
    owner_ = o.owner_;
    own_group_ = o.own_group_;
    output_ = std::move(o.output_);
    kept_ = o.kept_;
    output_text_ = std::move(o.output_text_);
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (running() && owned_here()) Terminate(std::chrono::milliseconds(0));
}

bool ChildProcess::owned_here() const { return owner_ == getpid(); }

Expected<ChildProcess> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                           const std::vector<std::string>& env,
                                           const ChildOptions& options) {
  if (argv.empty()) return Error{ErrorCode::kInvalidArgument, "cannot run an empty command"};
  FdPair capture, exec_error;
  if ((!options.captured.empty() && !MakePipe(&capture)) || !MakePipe(&exec_error)) {
    return Error{ErrorCode::kInternal,
                 fmt::format("cannot create pipes: {}", std::strerror(errno))};
  }
  std::vector<std::string> arg_strings = argv, env_strings = env;
  const std::vector<char*> args = NullTerminated(arg_strings), envp = NullTerminated(env_strings);
  ChildPlan plan(options, capture, exec_error[1].get());

  const pid_t pid = fork();
  if (pid == 0) {
    const ForkSetup setup = SetUpChild(plan, /*fork_only=*/false);
    int e = setup.error;
    if (setup.failed_step == nullptr) {
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      signal(SIGPIPE, SIG_DFL);
      execvpe(args[0], args.data(), envp.data());
      e = errno;
    }
    (void)!write(plan.moved.back(), &e, sizeof e);
    _exit(127);
  }
  const int fork_errno = errno;
  exec_error[1].reset();
  capture[1].reset();
  if (pid < 0) {
    return Error{ErrorCode::kInternal, fmt::format("fork: {}", std::strerror(fork_errno))};
  }
  ChildProcess child(pid, options.own_process_group, std::move(capture[0]), options.capture_kept);
  // The exec-error pipe is close-on-exec: EOF means the program runs, 4 bytes are exec's errno.
  int exec_errno = 0;
  ssize_t got;
  do {
    got = read(exec_error[0].get(), &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    child.Terminate(std::chrono::seconds(1));  // it is exiting with 127
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("cannot run '{}': {}", argv[0], std::strerror(exec_errno))};
  }
  return child;
}

Expected<ChildProcess> ChildProcess::Fork(const ChildOptions& options,
                                          const std::function<int(const ForkSetup&)>& body) {
  FdPair capture;
  if (!options.captured.empty() && !MakePipe(&capture)) {
    return Error{ErrorCode::kInternal,
                 fmt::format("cannot create pipes: {}", std::strerror(errno))};
  }
  ChildPlan plan(options, capture, -1);
  // Whatever the parent buffered would otherwise be written twice, once by each process.
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    const ForkSetup setup = SetUpChild(plan, /*fork_only=*/true);
    int code = 127;
    try {
      code = body(setup);
    } catch (...) {
    }
    _exit(code);
  }
  const int fork_errno = errno;
  capture[1].reset();
  if (pid < 0) {
    return Error{ErrorCode::kInternal, fmt::format("fork: {}", std::strerror(fork_errno))};
  }
  return ChildProcess(pid, options.own_process_group, std::move(capture[0]), options.capture_kept);
}

bool ChildProcess::Exited() const {
  if (!running()) return true;
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid_;
}

ExitStatus ChildProcess::Terminate(std::chrono::milliseconds grace) {
  ExitStatus e;
  if (!running()) return e;
  const auto until = Clock::now() + grace;
  bool exited = Exited();
  while (!exited && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    exited = Exited();
  }
  if (own_group_) {
    kill(-pid_, SIGKILL);  // the leader is not reaped yet, so its pid still names the group
  } else if (!exited) {
    kill(pid_, SIGKILL);
  }
  e.killed = !exited;
  rusage ru{};
  pid_t r;
  while ((r = wait4(pid_, &e.status, 0, &ru)) < 0 && errno == EINTR) {
  }
  e.reaped = r == pid_;
  e.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  pid_ = -1;
  DrainOutput();
  return e;
}

void ChildProcess::Abandon() {
  pid_ = -1;
  output_.reset();
}

void ChildProcess::DrainOutput() {
  if (!output_) return;
  char buf[8192];
  for (;;) {
    const ssize_t n = read(output_.get(), buf, sizeof buf);
    if (n > 0) {
      output_text_.append(buf, static_cast<std::size_t>(n));
      if (output_text_.size() > 2 * kept_) output_text_.erase(0, output_text_.size() - kept_);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) output_.reset();  // every writer closed it (the child exited): stop polling it
    return;
  }
}

std::string ChildProcess::OutputTail() const {
  return output_text_.size() > kept_ ? output_text_.substr(output_text_.size() - kept_)
                                     : output_text_;
}

}  // namespace sampcert

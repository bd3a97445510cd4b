#include "runner/worker.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <nlohmann/json.hpp>
#include <thread>

#include "runner/process_tree.h"
#include "runner/syscall_filter.h"

namespace sampcert::runner {

// Written by the body (trace, host error, filter) and the supervisor (the body's end); read by
// the tool once the supervisor has exited.
struct SharedPage {
  adapters::CallTrace trace;
  char host_error[256];
  char filter_problem[160];
  int body_status;
  int body_reported;  // 1 once the supervisor has recorded body_status and body_cpu_s
  double body_cpu_s;
};

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kOutputKept = 4096;  // of the body's stdout + stderr, the last bytes
constexpr std::size_t kOutputShown = 300;  // of those, what a Crash note quotes
constexpr std::size_t kMaxMessage = std::size_t{256} << 20;  // far above any item's results
constexpr double kGraceSeconds = 5;    // for a supervisor asked to end its body
constexpr double kCleanupSeconds = 4;  // for a supervisor killing what is left below it

// The tool is non-dumpable while it has workers: then neither ptrace nor /proc/TOOL/mem,
// /proc/TOOL/fd nor pidfd_getfd reach it from a process of the same user (nor from root's,
// whose CAP_SYS_PTRACE the body drops). Restored when the last worker is reaped.
int g_live_workers = 0;
int g_saved_dumpable = -1;
void HoldNonDumpable() {
  if (g_live_workers++ == 0) {
    g_saved_dumpable = prctl(PR_GET_DUMPABLE);
    prctl(PR_SET_DUMPABLE, 0);
  }
}
void ReleaseNonDumpable() {
  if (--g_live_workers == 0 && g_saved_dumpable > 0) prctl(PR_SET_DUMPABLE, g_saved_dumpable);
}

// The body's result channel lives at a high descriptor number a sampler does not hit by
// accident (it opens files at the lowest free number), close-on-exec.
int ChannelFd() {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  const rlim_t top = rl.rlim_cur == RLIM_INFINITY ? 1024 : std::min<rlim_t>(rl.rlim_cur, 1024);
  return static_cast<int>(top) - 1;
}

[[noreturn]] void HostFail(SharedPage* shared, const std::string& why) {
  std::snprintf(shared->host_error, sizeof shared->host_error, "%s", why.c_str());
  _exit(0);
}

void WriteAll(int fd, const std::string& s) {
  const char* p = s.data();
  std::size_t left = s.size();
  while (left > 0) {
    const ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(3);
    p += w;
    left -= static_cast<std::size_t>(w);
  }
}

std::string Crash(const std::string& why) {
  return nlohmann::json{{"crash", why}}.dump(-1, ' ', false,
                                             nlohmann::json::error_handler_t::replace);
}

void SetBodyLimits(const WorkerLimits& l, SharedPage* shared) {
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  // The options bound cpu_s (certify::kMaxSeconds); bounded here as well, because a double out
  // of rlim_t's range (1e20) converts to anything, 0 included: every item a Timeout at once.
  const double seconds = std::ceil(l.cpu_s);
  const auto cpu = static_cast<rlim_t>(seconds < 1 ? 1 : seconds < 1e15 ? seconds : 1e15);
  const rlimit cpu_limit{cpu, cpu + 1};
  if (setrlimit(RLIMIT_CPU, &cpu_limit) != 0) {
    HostFail(shared, fmt::format("worker: setrlimit(RLIMIT_CPU): {}", std::strerror(errno)));
  }
  if (l.memory_bytes > 0) {
    const rlimit as{l.memory_bytes, l.memory_bytes};
    setrlimit(RLIMIT_AS, &as);
  }
}

// The body: the only process that runs sampler code (and whatever that code starts).
[[noreturn]] void RunBody(pid_t tool, pid_t supervisor, const WorkerLimits& l,
                          const Worker::Body& body, SharedPage* shared, int channel) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGTERM, SIGINT, SIGPIPE, SIGCHLD}) signal(sig, SIG_DFL);
  setpgid(0, 0);  // its own group: kill(0, ...) from the sampler cannot reach the supervisor
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != supervisor) _exit(0);
  prctl(PR_SET_DUMPABLE, 1);  // as debuggable as the sampler's own process would be
  SetBodyLimits(l, shared);
  std::string off = DropPtraceCapability();
  if (std::string f = InstallSyscallFilter(tool, supervisor, getpid()); off.empty()) off = f;
  std::snprintf(shared->filter_problem, sizeof shared->filter_problem, "%s", off.c_str());
  adapters::SetCallTrace(&shared->trace);
  std::string message;
  try {
    message = body();
  } catch (const std::bad_alloc&) {
    message = Crash("out of memory (an allocation failed in the worker)");
  } catch (const std::exception& e) {
    message = Crash(std::string("exception: ") + e.what());
  }
  WriteAll(channel, message);
  _exit(0);  // no atexit handlers, no library destructors: they are the sampler's code
}

double CpuSeconds(const rusage& ru) {
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// Waits for the body, ending it on SIGTERM (from the tool, or the tool's death); records how
// it ended. `waited` holds SIGTERM and SIGCHLD, blocked, so that none is missed.
void WaitForBody(pid_t body, const sigset_t& waited, SharedPage* shared) {
  for (;;) {
    int status = 0;
    rusage ru{};
    const pid_t r = wait4(body, &status, WNOHANG, &ru);
    if (r == body) {
      shared->body_status = status;
      shared->body_cpu_s = CpuSeconds(ru);
      shared->body_reported = 1;
      return;
    }
    if (r < 0 && errno != EINTR) return;
    siginfo_t si{};
    if (sigwaitinfo(&waited, &si) == SIGTERM) kill(body, SIGKILL);
  }
}

// The supervisor: its own session (no controlling terminal: /dev/tty does not open), a child
// subreaper (every descendant of the body stays below it), the body's stdio and channel.
[[noreturn]] void Supervise(pid_t tool, const WorkerLimits& l, const Worker::Body& body,
                            SharedPage* shared, int channel_end, int output_end, int devnull) {
  setsid();
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != tool) _exit(0);  // the tool died before prctl: nobody reads us
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  signal(SIGCHLD, SIG_DFL);  // never SIG_IGN (a host's choice): the body must stay waitable
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGTERM);
  sigaddset(&waited, SIGCHLD);
  sigprocmask(SIG_BLOCK, &waited, nullptr);
  const int channel = fcntl(channel_end, F_DUPFD_CLOEXEC, ChannelFd());
  if (channel < 0) HostFail(shared, fmt::format("worker: dup: {}", std::strerror(errno)));
  if (dup2(devnull, 0) < 0 || dup2(output_end, 1) < 0 || dup2(output_end, 2) < 0) {
    HostFail(shared, fmt::format("worker: dup2: {}", std::strerror(errno)));
  }
  // Nothing else of the tool's stays open: other workers' pipes, the originals.
  syscall(SYS_close_range, 3u, static_cast<unsigned>(channel) - 1, 0u);
  syscall(SYS_close_range, static_cast<unsigned>(channel) + 1, ~0u, 0u);
  const pid_t self = getpid();
  const pid_t b = fork();
  if (b < 0) HostFail(shared, fmt::format("worker: fork: {}", std::strerror(errno)));
  if (b == 0) RunBody(tool, self, l, body, shared, channel);
  // The supervisor keeps none of the body's descriptors (stdin is /dev/null).
  close(channel);
  dup2(0, 1);
  dup2(0, 2);
  WaitForBody(b, waited, shared);
  EndAllDescendants(kCleanupSeconds);
  _exit(0);
}

std::string Printable(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return out;
}

}  // namespace

void Worker::Unmap::operator()(SharedPage* p) const { munmap(p, sizeof(SharedPage)); }

Expected<Worker> Worker::Spawn(const WorkerLimits& limits, const Body& body) {
  auto host = [](const char* what) {
    return Error{ErrorCode::kInternal,
                 fmt::format("host error: {}: {}", what, std::strerror(errno))};
  };
  void* page =
      mmap(nullptr, sizeof(SharedPage), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return host("mmap");
  Worker w;
  w.shared_.reset(new (page) SharedPage{});
  FdPair channel, output;
  if (!MakePipe(&channel) || !MakePipe(&output)) return host("pipe");
  const UniqueFd devnull(open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!devnull) return host("open /dev/null");
  const pid_t tool = getpid();
  std::fflush(stdout);
  std::fflush(stderr);
  HoldNonDumpable();
  const pid_t pid = fork();
  if (pid == 0) {
    Supervise(tool, limits, body, w.shared_.get(), channel[1].get(), output[1].get(),
              devnull.get());
  }
  if (pid < 0) {
    const Error e = host("fork");
    ReleaseNonDumpable();
    return e;
  }
  w.pid_ = pid;
  w.channel_ = std::move(channel[0]);
  w.output_ = std::move(output[0]);
  fcntl(w.channel_.get(), F_SETFL, O_NONBLOCK);
  fcntl(w.output_.get(), F_SETFL, O_NONBLOCK);
  w.started_ = Clock::now();
  return w;
}

Worker::Worker(Worker&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)),
      channel_(std::move(o.channel_)),
      output_(std::move(o.output_)),
      shared_(std::move(o.shared_)),
      message_(std::move(o.message_)),
      printed_(std::move(o.printed_)),
      started_(o.started_),
      terminated_(o.terminated_),
      reaped_(o.reaped_) {}

Worker& Worker::operator=(Worker&& o) noexcept {
  if (this != &o) {
    Finish();
    pid_ = std::exchange(o.pid_, -1);
    channel_ = std::move(o.channel_);
    output_ = std::move(o.output_);
    shared_ = std::move(o.shared_);
    message_ = std::move(o.message_);
    printed_ = std::move(o.printed_);
    started_ = o.started_;
    terminated_ = o.terminated_;
    reaped_ = o.reaped_;
  }
  return *this;
}

Worker::~Worker() { Finish(); }

void Worker::Finish() {
  if (pid_ <= 0 || reaped_) return;
  Terminate();
  Reap();
}

double Worker::Seconds() const {
  return std::chrono::duration<double>(Clock::now() - started_).count();
}

void Worker::Drain(std::size_t max_bytes) {
  char buf[65536];
  for (UniqueFd* fd : {&channel_, &output_}) {
    // Bounded per call: a body that writes without end must not keep the tool in here.
    for (std::size_t got = 0; fd->valid() && got < max_bytes;) {
      const ssize_t n = read(fd->get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // EOF, or nothing more now (EAGAIN)
      got += static_cast<std::size_t>(n);
      if (fd == &output_) {
        printed_.append(buf, static_cast<std::size_t>(n));
        if (printed_.size() > 2 * kOutputKept) printed_.erase(0, printed_.size() - kOutputKept);
      } else if (message_.size() < kMaxMessage) {  // past it the message is refused as garbage
        message_.append(buf, static_cast<std::size_t>(n));
      }
    }
  }
}

bool Worker::Exited() const {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid_;
}

void Worker::Terminate() {
  if (pid_ <= 0 || reaped_) return;
  terminated_ = true;
  kill(pid_, SIGTERM);
}

WorkerEnd Worker::Reap() {
  WorkerEnd e;
  if (pid_ <= 0 || reaped_) return e;
  if (terminated_) {
    const auto deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(kGraceSeconds * 1000));
    while (!Exited() && Clock::now() < deadline) {
      Drain();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!Exited()) {  // a supervisor that does not answer: end its tree from here
      KillDescendants(pid_);
      kill(pid_, SIGKILL);
    }
  }
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  Drain(kMaxMessage);  // the writers are gone: to the end of both pipes
  e.status = shared_->body_reported != 0 ? shared_->body_status : status;
  e.cpu_s = shared_->body_cpu_s;
  e.killed_by_us = terminated_;
  reaped_ = true;
  channel_.reset();
  output_.reset();
  ReleaseNonDumpable();
  return e;
}

WorkerEnd Worker::RunToEnd(double backstop_s) {
  while (!Exited()) {
    pollfd p[2] = {{channel_.get(), POLLIN, 0}, {output_.get(), POLLIN, 0}};
    poll(p, 2, 50);
    Drain();
    if (Seconds() > backstop_s) {
      Terminate();
      break;
    }
  }
  return Reap();
}

std::string Worker::HostError() const {
  return std::string(shared_->host_error, strnlen(shared_->host_error, sizeof shared_->host_error));
}

std::string Worker::FilterProblem() const {
  return std::string(shared_->filter_problem,
                     strnlen(shared_->filter_problem, sizeof shared_->filter_problem));
}

std::string Worker::Call() const {
  const adapters::CallTrace& t = shared_->trace;
  const std::string call(t.call, strnlen(t.call, sizeof t.call));
  return call.empty() ? "" : " during " + call;
}

uint64_t Worker::Draws() const { return shared_->trace.draws; }

std::string Worker::DrawsText() const {
  return fmt::format("after {} draws in {} sampler calls", shared_->trace.draws,
                     shared_->trace.calls);
}

std::string Worker::OutputEnding() const {
  std::string s =
      printed_.size() > kOutputShown ? printed_.substr(printed_.size() - kOutputShown) : printed_;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  if (s.empty()) return "";
  return "'" + std::string(printed_.size() > kOutputShown ? "..." : "") + Printable(s) + "'";
}

std::string Worker::Death(const WorkerEnd& e, uint64_t memory_limit) const {
  const std::string call = Call();
  std::string why;
  if (WIFSIGNALED(e.status)) {
    const int sig = WTERMSIG(e.status);
    why = fmt::format("the sampler's worker died of signal {} ({}){}", sig, strsignal(sig), call);
    if (sig == SIGKILL && !e.killed_by_us) {
      // Not the tool's: the sampler's own (a kill of its process group is allowed), the
      // kernel's out-of-memory killer, or another process; the wait status cannot tell which.
      why +=
          "; a SIGKILL the tool did not send: from the sampler itself (its own process group, "
          "say), the kernel's out-of-memory killer, or another process";
    }
    // Allocation-heavy calls only: a segfault while loading is no out-of-memory suspect.
    if ((sig == SIGSEGV || sig == SIGBUS) && memory_limit > 0 &&
        (call == " during sample()" || call == " during probabilities()")) {
      why += fmt::format(
          " (if it ran out of memory: the worker's address space is limited to "
          "{} MiB, and an unchecked failed malloc ends like this)",
          memory_limit >> 20);
    }
  } else if (!WIFEXITED(e.status)) {
    // Neither an exit nor a signal: a stop (the body made itself traced, PTRACE_TRACEME, and
    // stopped at a signal) or no status recorded; "exited with status -1" named neither.
    why = WIFSTOPPED(e.status)
              ? fmt::format(
                    "the sampler's worker stopped at signal {} ({}){} and never ended (it made "
                    "itself a traced process, PTRACE_TRACEME, or was stopped)",
                    WSTOPSIG(e.status), strsignal(WSTOPSIG(e.status)), call)
              : fmt::format(
                    "the sampler's worker ended with no exit status or signal (wait "
                    "status {:#x}){}",
                    static_cast<unsigned>(e.status), call);
  } else {
    const int code = WEXITSTATUS(e.status);
    if (code == 0 && call.empty()) return "";
    why = fmt::format("the sampler's worker exited with status {}{}", code,
                      call.empty() ? " (outside any sampler call)" : call);
  }
  if (const std::string out = OutputEnding(); !out.empty()) why += "; its output ends: " + out;
  return why;
}

}  // namespace sampcert::runner

#include "adapters/exec_sampler.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include "adapters/declarations.h"

extern char** environ;

namespace sampcert::adapters {
namespace {

// ---- Framing (PROTOCOL.md, "Messages"): magic, kind, payload length, payload. ----
constexpr uint32_t kMagic = 0x31504353u;  // the bytes 'S' 'C' 'P' '1'
constexpr uint32_t kInfo = 1, kCreate = 2, kSample = 3, kProbabilities = 4, kDestroy = 5;
constexpr uint32_t kReplyOk = 0, kReplyError = 1;
constexpr std::size_t kHeaderBytes = 16;
constexpr std::size_t kRowHeaderBytes = 32;
constexpr uint32_t kRowHasLogits = 1u, kRowHasMask = 2u;
// Bounded so that a garbage length cannot make the host allocate gigabytes.
constexpr uint64_t kMaxInfoReply = 1u << 20;
constexpr uint64_t kMaxErrorReply = 1u << 16;
constexpr std::size_t kStderrKept = 64 * 1024;  // the child's stderr tail kept for failures
constexpr std::size_t kStderrShown = 480;       // of it, what fits in an ABI error message

using Clock = std::chrono::steady_clock;

// Seconds a call may wait for the child; SAMPCERT_EXEC_TIMEOUT overrides (PROTOCOL.md). In a
// run the runner's --item-timeout kills the worker earlier; this bounds info, sample and
// --no-isolation runs.
double CallTimeoutSeconds() {
  if (const char* s = std::getenv("SAMPCERT_EXEC_TIMEOUT")) {
    char* end = nullptr;
    const double v = std::strtod(s, &end);
    if (end != s && *end == '\0' && v > 0) return v;
  }
  return 300;
}

void SetError(sampcert_error* e, int32_t code, int64_t row, const std::string& msg) {
  if (e == nullptr) return;
  e->code = code;
  e->row = row;
  const std::size_t n = std::min(msg.size(), sizeof e->message - 1);
  std::memcpy(e->message, msg.data(), n);
  e->message[n] = '\0';
}

class Writer {
 public:
  template <typename T>
  void Put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));  // little-endian hosts only (x86-64, aarch64 Linux)
    out.append(b, sizeof(T));
  }
  void Str(const std::string& s) {
    Put<uint32_t>(static_cast<uint32_t>(s.size()));
    out += s;
  }
  std::string out;
};

class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  template <typename T>
  bool Get(T* v) {
    if (s_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(v, s_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool Str(std::string* v) {
    uint32_t n = 0;
    if (!Get(&n) || s_.size() - pos_ < n) return false;
    v->assign(s_, pos_, n);
    pos_ += n;
    return true;
  }
  bool AtEnd() const { return pos_ == s_.size(); }

 private:
  const std::string& s_;
  std::size_t pos_ = 0;
};

std::string Printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
      out += static_cast<char>(c);
    } else {
      out += '?';
    }
  }
  return out;
}

// One child process and its three pipes: requests (its fd 3), replies (its fd 4), and its
// stdout + stderr together (kept, last 64 KiB).
class Child {
 public:
  static Expected<std::unique_ptr<Child>> Start(const std::vector<std::string>& argv,
                                                const std::string& command);
  ~Child() { Close(); }

  // Sends one request and reads its reply. OK: *reply holds the payload, which must be exactly
  // `exact_ok` bytes when set, else at most max_ok. An error reply becomes its status. Anything
  // else (death, garbage, a stall past the timeout) kills the child and returns INTERNAL.
  int32_t Call(uint32_t kind, const char* call_name, const std::string& payload,
               std::optional<uint64_t> exact_ok, uint64_t max_ok, std::string* reply,
               sampcert_error* err);
  // DESTROY, then the end: SIGKILL if it lingers, always reaped.
  void Close();
  // In a forked process: forget the parent's child without touching it (closing our copies of
  // the descriptors does not affect the parent's).
  void Abandon();
  pid_t owner() const { return owner_; }

 private:
  Child() = default;
  int32_t Fail(const std::string& what, const char* call_name, sampcert_error* err);
  bool Send(const std::string& data, Clock::time_point deadline, std::string* why);
  bool Recv(char* p, std::size_t n, Clock::time_point deadline, std::string* why);
  bool WaitIo(int fd, short events, Clock::time_point deadline, std::string* why);
  void DrainStderr();
  std::string KillAndDescribe();
  std::string StderrTail() const;

  std::string command_;
  pid_t pid_ = -1;
  pid_t owner_ = -1;
  int to_fd_ = -1, from_fd_ = -1, err_fd_ = -1;
  std::string stderr_;
  bool dead_ = false;
  std::string dead_reason_;
};

Expected<std::unique_ptr<Child>> Child::Start(const std::vector<std::string>& argv,
                                              const std::string& command) {
  std::unique_ptr<Child> c(new Child());
  c->command_ = command;
  int req[2], resp[2], err[2], exe[2];
  // Sockets, not pipes, for the protocol: send(MSG_NOSIGNAL) turns a dead child into EPIPE
  // instead of a SIGPIPE that would kill the host.
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, req) != 0 ||
      socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, resp) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
      pipe2(exe, O_CLOEXEC) != 0) {
    return Error{ErrorCode::kInternal, fmt::format("exec sampler '{}': cannot create pipes: {}",
                                                   command, std::strerror(errno))};
  }
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "SAMPCERT_PROTOCOL", 17) != 0) env_strings.emplace_back(*e);
  }
  env_strings.push_back(fmt::format("SAMPCERT_PROTOCOL={}", kExecProtocolMajor));
  env_strings.emplace_back("SAMPCERT_PROTOCOL_FDS=3,4");
  std::vector<char*> envp, args;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);
  const long open_max = std::min<long>(sysconf(_SC_OPEN_MAX), 65536);
  const pid_t parent = getpid();

  const pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // the sampler dies with its host (a killed worker)
    if (getppid() != parent) _exit(127);
    const int a = fcntl(req[1], F_DUPFD, 10), b = fcntl(resp[1], F_DUPFD, 10),
              o = fcntl(err[1], F_DUPFD, 10), n = fcntl(devnull, F_DUPFD, 10);
    dup2(n, 0);
    dup2(o, 1);  // stdout joins stderr: a stray print() can never reach the protocol
    dup2(o, 2);
    dup2(a, 3);
    dup2(b, 4);
    for (long fd = 5; fd < open_max; ++fd) {
      if (fd != exe[1]) close(static_cast<int>(fd));
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    execvpe(args[0], args.data(), envp.data());
    const int e = errno;
    (void)!write(exe[1], &e, sizeof e);
    _exit(127);
  }
  const int fork_errno = errno;
  close(req[1]);
  close(resp[1]);
  close(err[1]);
  close(exe[1]);
  if (devnull >= 0) close(devnull);
  if (pid < 0) {
    close(req[0]);
    close(resp[0]);
    close(err[0]);
    close(exe[0]);
    return Error{ErrorCode::kInternal,
                 fmt::format("exec sampler '{}': fork: {}", command, std::strerror(fork_errno))};
  }
  c->pid_ = pid;
  c->owner_ = parent;
  c->to_fd_ = req[0];
  c->from_fd_ = resp[0];
  c->err_fd_ = err[0];
  fcntl(c->err_fd_, F_SETFL, O_NONBLOCK);
  int exec_errno = 0;
  ssize_t got;
  do {
    got = read(exe[0], &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  close(exe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    waitpid(pid, nullptr, 0);
    c->pid_ = -1;
    c->dead_ = true;
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("exec sampler '{}': cannot run '{}': {}", command, argv[0],
                             std::strerror(exec_errno))};
  }
  return c;
}

void Child::DrainStderr() {
  if (err_fd_ < 0) return;
  char buf[8192];
  for (;;) {
    const ssize_t n = read(err_fd_, buf, sizeof buf);
    if (n > 0) {
      stderr_.append(buf, static_cast<std::size_t>(n));
      if (stderr_.size() > 2 * kStderrKept) stderr_.erase(0, stderr_.size() - kStderrKept);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {  // the child closed it (exited): stop polling it
      close(err_fd_);
      err_fd_ = -1;
    }
    return;
  }
}

std::string Child::StderrTail() const {
  std::string s =
      stderr_.size() > kStderrKept ? stderr_.substr(stderr_.size() - kStderrKept) : stderr_;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.empty()) return "; its stderr is empty";
  if (s.size() > kStderrShown) s = "..." + s.substr(s.size() - kStderrShown);
  return "; its stderr ends: " + Printable(s);
}

bool Child::WaitIo(int fd, short events, Clock::time_point deadline, std::string* why) {
  for (;;) {
    pollfd p[2] = {{fd, events, 0}, {err_fd_, POLLIN, 0}};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      *why = "timeout";
      return false;
    }
    const int r =
        poll(p, err_fd_ >= 0 ? 2 : 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) {
      *why = std::string("poll: ") + std::strerror(errno);
      return false;
    }
    if (err_fd_ >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) DrainStderr();
    if (p[0].revents != 0) return true;
  }
}

bool Child::Send(const std::string& data, Clock::time_point deadline, std::string* why) {
  std::size_t off = 0;
  while (off < data.size()) {
    if (!WaitIo(to_fd_, POLLOUT, deadline, why)) return false;
    const ssize_t n =
        send(to_fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
    } else if (n < 0 && errno != EINTR && errno != EAGAIN) {
      *why = "the process stopped reading its requests (" + std::string(std::strerror(errno)) + ")";
      return false;
    }
  }
  return true;
}

bool Child::Recv(char* p, std::size_t n, Clock::time_point deadline, std::string* why) {
  std::size_t off = 0;
  while (off < n) {
    if (!WaitIo(from_fd_, POLLIN, deadline, why)) return false;
    const ssize_t r = recv(from_fd_, p + off, n - off, MSG_DONTWAIT);
    if (r > 0) {
      off += static_cast<std::size_t>(r);
    } else if (r == 0) {
      *why = off == 0 ? "eof" : "the process closed its reply pipe in the middle of a reply";
      return false;
    } else if (errno != EINTR && errno != EAGAIN) {
      *why = std::string("recv: ") + std::strerror(errno);
      return false;
    }
  }
  return true;
}

// Kills (if still running) and reaps the child; says how it ended.
std::string Child::KillAndDescribe() {
  if (pid_ <= 0) return "";
  int status = 0;
  pid_t r = 0;
  // A child that closed its pipes is usually exiting: give it a moment to report its status.
  for (int i = 0; i < 20 && (r = waitpid(pid_, &status, WNOHANG)) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string how;
  if (r == 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    how = "; the process was killed";
  } else if (r == pid_ && WIFEXITED(status)) {
    how = fmt::format("; the process exited with status {}", WEXITSTATUS(status));
  } else if (r == pid_ && WIFSIGNALED(status)) {
    how = fmt::format("; the process was killed by signal {} ({})", WTERMSIG(status),
                      strsignal(WTERMSIG(status)));
  }
  pid_ = -1;
  if (err_fd_ >= 0) DrainStderr();
  return how;
}

int32_t Child::Fail(const std::string& what, const char* call_name, sampcert_error* err) {
  const std::string how = KillAndDescribe();
  dead_ = true;
  dead_reason_ = fmt::format("exec sampler '{}': {} (in {}){}{}", command_, what, call_name, how,
                             StderrTail());
  SetError(err, SAMPCERT_STATUS_INTERNAL, -1, dead_reason_);
  return SAMPCERT_STATUS_INTERNAL;
}

int32_t Child::Call(uint32_t kind, const char* call_name, const std::string& payload,
                    std::optional<uint64_t> exact_ok, uint64_t max_ok, std::string* reply,
                    sampcert_error* err) {
  if (dead_) {
    SetError(err, SAMPCERT_STATUS_INTERNAL, -1, "no longer running: " + dead_reason_);
    return SAMPCERT_STATUS_INTERNAL;
  }
  const double timeout_s = CallTimeoutSeconds();
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  Writer w;
  w.Put<uint32_t>(kMagic);
  w.Put<uint32_t>(kind);
  w.Put<uint64_t>(payload.size());
  std::string why;
  auto failed = [&](const std::string& while_doing) {
    if (why == "timeout") {
      return Fail(fmt::format("no reply within {} s (SAMPCERT_EXEC_TIMEOUT) while {}", timeout_s,
                              while_doing),
                  call_name, err);
    }
    if (why == "eof") return Fail("the process closed its reply pipe (it exited?)", call_name, err);
    return Fail(why + " while " + while_doing, call_name, err);
  };
  if (!Send(w.out, deadline, &why) || !Send(payload, deadline, &why)) {
    return failed("sending the request");
  }
  char header[kHeaderBytes];
  if (!Recv(header, sizeof header, deadline, &why)) return failed("waiting for the reply");
  uint32_t magic, reply_kind;
  uint64_t len;
  std::memcpy(&magic, header, 4);
  std::memcpy(&reply_kind, header + 4, 4);
  std::memcpy(&len, header + 8, 8);
  if (magic != kMagic) {
    return Fail(fmt::format("protocol error: a reply must start with 'SCP1', got '{}' (did "
                            "something write to fd 4?)",
                            Printable(std::string(header, sizeof header))),
                call_name, err);
  }
  if (reply_kind == kReplyOk) {
    if ((exact_ok && len != *exact_ok) || (!exact_ok && len > max_ok)) {
      return Fail(
          fmt::format("protocol error: the reply is {} bytes, expected {}", len,
                      exact_ok ? fmt::format("{}", *exact_ok) : fmt::format("at most {}", max_ok)),
          call_name, err);
    }
    reply->resize(len);
    if (!Recv(reply->data(), len, deadline, &why)) return failed("reading the reply");
    return SAMPCERT_STATUS_OK;
  }
  if (reply_kind != kReplyError || len > kMaxErrorReply) {
    return Fail(fmt::format("protocol error: reply kind {} of {} bytes (0 = ok, 1 = error)",
                            reply_kind, len),
                call_name, err);
  }
  std::string body(len, '\0');
  if (!Recv(body.data(), len, deadline, &why)) return failed("reading the error reply");
  Reader r(body);
  int32_t code = 0, reserved = 0;
  int64_t row = -1;
  std::string message;
  if (!r.Get(&code) || !r.Get(&reserved) || !r.Get(&row) || !r.Str(&message) || !r.AtEnd() ||
      code <= SAMPCERT_STATUS_OK || code > SAMPCERT_STATUS_OUT_OF_MEMORY) {
    return Fail(fmt::format("protocol error: a malformed error reply (code {})", code), call_name,
                err);
  }
  SetError(err, code, row, message);
  return code;
}

void Child::Close() {
  if (pid_ > 0 && owner_ == getpid() && !dead_) {
    // A polite end first, bounded: the sampler may flush or free a device.
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    Writer w;
    w.Put<uint32_t>(kMagic);
    w.Put<uint32_t>(kDestroy);
    w.Put<uint64_t>(0);
    std::string why;
    char header[kHeaderBytes];
    if (Send(w.out, deadline, &why)) (void)Recv(header, sizeof header, deadline, &why);
  }
  if (to_fd_ >= 0) close(to_fd_);
  if (from_fd_ >= 0) close(from_fd_);
  to_fd_ = from_fd_ = -1;
  if (pid_ > 0 && owner_ == getpid()) KillAndDescribe();
  if (err_fd_ >= 0) close(err_fd_);
  err_fd_ = -1;
  pid_ = -1;
}

void Child::Abandon() {
  for (int* fd : {&to_fd_, &from_fd_, &err_fd_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  pid_ = -1;
  dead_ = true;
  dead_reason_ = "abandoned after fork";
}

// ---- One open exec: program (a slot) and its instances. ----
struct Program {
  std::string command;
  std::vector<std::string> argv;
  std::mutex mu;
  bool have_info = false;
  std::string name, version;
  sampcert_sampler_info info{};
  std::unique_ptr<Child> spare;  // the child that answered info, kept for the first create
};

struct Instance {
  Program* program;
  std::unique_ptr<Child> child;
  std::optional<std::string> config;
};

std::string InfoPayload() {
  Writer w;
  w.Put<uint32_t>(kExecProtocolMajor);
  w.Put<uint32_t>(kExecProtocolMinor);
  return w.out;
}

// Starts a child and does the INFO handshake; fills the program's info on the first success.
int32_t StartChild(Program& p, std::unique_ptr<Child>* out, sampcert_error* err) {
  auto child = Child::Start(p.argv, p.command);
  if (!child.ok()) {
    SetError(err, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, child.error().message);
    return SAMPCERT_STATUS_INVALID_ARGUMENT;
  }
  std::string reply;
  if (int32_t st =
          (*child)->Call(kInfo, "info", InfoPayload(), std::nullopt, kMaxInfoReply, &reply, err);
      st != SAMPCERT_STATUS_OK) {
    return st;
  }
  Reader r(reply);
  uint32_t major = 0, minor = 0;
  std::string name, version;
  sampcert_sampler_info i{};
  i.struct_size = SAMPCERT_SAMPLER_INFO_STRUCT_SIZE;
  bool ok = r.Get(&major) && r.Get(&minor) && r.Str(&name) && r.Str(&version);
  // Then every declared field in the ABI struct's order, 4 bytes an element. Protocol MINOR n
  // appends ABI MINOR n's fields: a MINOR 0 reply ends before them and they stay 0 (as
  // declared, random access, no declared cost). The values are checked by Sampler::Open.
  for (const DeclaredField* f : FieldsInAbiOrder()) {
    if (f->minor > minor) continue;
    for (uint32_t k = 0; ok && k < f->count; ++k) {
      uint32_t element = 0;
      ok = r.Get(&element);
      std::memcpy(reinterpret_cast<char*>(&i) + f->abi_offset + 4 * k, &element, 4);
    }
  }
  if (ok && major != kExecProtocolMajor) {
    SetError(err, SAMPCERT_STATUS_VERSION_MISMATCH, -1,
             fmt::format("exec sampler '{}' speaks protocol {}.{}; this host speaks {}.{}",
                         p.command, major, minor, kExecProtocolMajor, kExecProtocolMinor));
    return SAMPCERT_STATUS_VERSION_MISMATCH;
  }
  // A newer MINOR may append fields: what follows is ignored (r.AtEnd() is not required).
  if (!ok) {
    SetError(err, SAMPCERT_STATUS_INTERNAL, -1,
             fmt::format("exec sampler '{}': protocol error: the info reply is malformed ({} "
                         "bytes)",
                         p.command, reply.size()));
    return SAMPCERT_STATUS_INTERNAL;
  }
  if (!p.have_info) {
    p.name = std::move(name);
    p.version = std::move(version);
    p.info = i;
    p.have_info = true;
  }
  *out = std::move(child).value();
  return SAMPCERT_STATUS_OK;
}

constexpr int kSlots = 16;
std::mutex g_slots_mu;
std::array<Program*, kSlots> g_slots{};

template <typename F>
int32_t Guard(sampcert_error* err, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    SetError(err, SAMPCERT_STATUS_OUT_OF_MEMORY, -1, "exec sampler: out of memory");
    return SAMPCERT_STATUS_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    SetError(err, SAMPCERT_STATUS_INTERNAL, -1, std::string("exec sampler: ") + e.what());
    return SAMPCERT_STATUS_INTERNAL;
  }
}

int32_t ProgramGetInfo(int slot, sampcert_sampler_info* info, sampcert_error* err) {
  return Guard(err, [&]() -> int32_t {
    Program& p = *g_slots[slot];
    std::lock_guard lock(p.mu);
    if (!p.have_info) {
      std::unique_ptr<Child> child;
      if (int32_t st = StartChild(p, &child, err); st != SAMPCERT_STATUS_OK) return st;
      p.spare = std::move(child);
    }
    const std::size_t size = info->struct_size;
    std::memcpy(info, &p.info, std::min(size, sizeof p.info));
    info->struct_size = size;
    info->name = p.name.c_str();
    info->version = p.version.c_str();
    return SAMPCERT_STATUS_OK;
  });
}

int32_t SendCreate(Instance& inst, sampcert_error* err) {
  Writer w;
  w.Put<uint32_t>(inst.config ? 1u : 0u);
  w.Str(inst.config.value_or(""));
  std::string reply;
  return inst.child->Call(kCreate, "create", w.out, 0, 0, &reply, err);
}

int32_t ProgramCreate(int slot, const char* config, sampcert_sampler** out, sampcert_error* err) {
  return Guard(err, [&]() -> int32_t {
    Program& p = *g_slots[slot];
    std::lock_guard lock(p.mu);
    auto inst = std::make_unique<Instance>();
    inst->program = &p;
    if (config != nullptr) inst->config = config;
    if (p.spare && p.spare->owner() == getpid()) {
      inst->child = std::move(p.spare);
    } else if (int32_t st = StartChild(p, &inst->child, err); st != SAMPCERT_STATUS_OK) {
      return st;
    }
    if (int32_t st = SendCreate(*inst, err); st != SAMPCERT_STATUS_OK) return st;
    *out = reinterpret_cast<sampcert_sampler*>(inst.release());
    return SAMPCERT_STATUS_OK;
  });
}

// A handle used in a forked process (the runner's worker) gets its own child there: the
// parent's child belongs to the parent, and a worker killed mid-call must not leave it
// half-way through a reply. The worker's child dies with it (PR_SET_PDEATHSIG).
int32_t EnsureOwnChild(Instance& inst, sampcert_error* err) {
  if (inst.child && inst.child->owner() == getpid()) return SAMPCERT_STATUS_OK;
  if (inst.child) inst.child->Abandon();
  Program& p = *inst.program;
  std::lock_guard lock(p.mu);
  if (int32_t st = StartChild(p, &inst.child, err); st != SAMPCERT_STATUS_OK) return st;
  return SendCreate(inst, err);
}

void Destroy(sampcert_sampler* s) {
  delete reinterpret_cast<Instance*>(s);  // ~Child: DESTROY, then kill and reap
}

std::size_t ElementBytes(int32_t dtype) { return dtype == SAMPCERT_DTYPE_F32 ? 4 : 2; }

// The batch's encoding (PROTOCOL.md, "Batch"); false for an unknown dtype.
bool EncodeBatch(const sampcert_batch& b, Writer* w, sampcert_error* err) {
  if (b.dtype != SAMPCERT_DTYPE_F32 && b.dtype != SAMPCERT_DTYPE_F16 &&
      b.dtype != SAMPCERT_DTYPE_BF16) {
    SetError(err, SAMPCERT_STATUS_INVALID_ARGUMENT, -1,
             fmt::format("unknown dtype {} (0 = f32, 1 = f16, 2 = bf16)", b.dtype));
    return false;
  }
  if (b.num_rows > 0 && b.rows == nullptr) {
    SetError(err, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "the batch has rows but no row array");
    return false;
  }
  w->Put<int32_t>(b.dtype);
  w->Put<uint32_t>(0);
  w->Put<uint64_t>(b.vocab);
  w->Put<uint64_t>(b.num_rows);
  const std::size_t logit_bytes = b.vocab * ElementBytes(b.dtype);
  std::size_t total = 32 + b.num_rows * kRowHeaderBytes;
  for (uint64_t r = 0; r < b.num_rows; ++r) {
    total += (b.rows[r].logits ? logit_bytes : 0) + (b.rows[r].mask ? b.vocab : 0);
  }
  w->out.reserve(w->out.size() + total);
  for (uint64_t r = 0; r < b.num_rows; ++r) {
    const sampcert_row& row = b.rows[r];
    w->Put<float>(row.temperature);
    w->Put<float>(row.top_p);
    w->Put<float>(row.min_p);
    w->Put<uint32_t>((row.logits ? kRowHasLogits : 0u) | (row.mask ? kRowHasMask : 0u));
    w->Put<int64_t>(row.top_k);
    w->Put<uint64_t>(row.row_id);
  }
  for (uint64_t r = 0; r < b.num_rows; ++r) {
    if (b.rows[r].logits) w->out.append(static_cast<const char*>(b.rows[r].logits), logit_bytes);
  }
  for (uint64_t r = 0; r < b.num_rows; ++r) {
    if (b.rows[r].mask) w->out.append(reinterpret_cast<const char*>(b.rows[r].mask), b.vocab);
  }
  return true;
}

int32_t Probabilities(sampcert_sampler* s, const sampcert_batch* batch, double* out,
                      sampcert_error* err) {
  return Guard(err, [&]() -> int32_t {
    Instance& inst = *reinterpret_cast<Instance*>(s);
    if (int32_t st = EnsureOwnChild(inst, err); st != SAMPCERT_STATUS_OK) return st;
    Writer w;
    if (!EncodeBatch(*batch, &w, err)) return SAMPCERT_STATUS_INVALID_ARGUMENT;
    std::string reply;
    const uint64_t bytes = batch->num_rows * batch->vocab * sizeof(double);
    if (int32_t st =
            inst.child->Call(kProbabilities, "probabilities", w.out, bytes, 0, &reply, err);
        st != SAMPCERT_STATUS_OK) {
      return st;
    }
    if (bytes > 0) std::memcpy(out, reply.data(), bytes);
    return SAMPCERT_STATUS_OK;
  });
}

int32_t Sample(sampcert_sampler* s, const sampcert_batch* batch, uint64_t seed, uint64_t first_draw,
               uint64_t draws_per_row, int64_t* out, sampcert_error* err) {
  return Guard(err, [&]() -> int32_t {
    Instance& inst = *reinterpret_cast<Instance*>(s);
    if (int32_t st = EnsureOwnChild(inst, err); st != SAMPCERT_STATUS_OK) return st;
    Writer w;
    w.Put<uint64_t>(seed);
    w.Put<uint64_t>(first_draw);
    w.Put<uint64_t>(draws_per_row);
    if (!EncodeBatch(*batch, &w, err)) return SAMPCERT_STATUS_INVALID_ARGUMENT;
    std::string reply;
    const uint64_t bytes = batch->num_rows * draws_per_row * sizeof(int64_t);
    if (int32_t st = inst.child->Call(kSample, "sample", w.out, bytes, 0, &reply, err);
        st != SAMPCERT_STATUS_OK) {
      return st;
    }
    if (bytes > 0) std::memcpy(out, reply.data(), bytes);
    return SAMPCERT_STATUS_OK;
  });
}

template <int Slot>
struct SlotTable {
  static int32_t GetInfo(sampcert_sampler_info* i, sampcert_error* e) {
    return ProgramGetInfo(Slot, i, e);
  }
  static int32_t Create(const char* c, sampcert_sampler** o, sampcert_error* e) {
    return ProgramCreate(Slot, c, o, e);
  }
  static constexpr sampcert_sampler_api kApi = {SAMPCERT_SAMPLER_API_STRUCT_SIZE,
                                                SAMPCERT_ABI_VERSION_MAJOR,
                                                SAMPCERT_ABI_VERSION_MINOR,
                                                &GetInfo,
                                                &Create,
                                                &Destroy,
                                                &Probabilities,
                                                &Sample};
};

template <int... I>
constexpr std::array<const sampcert_sampler_api*, sizeof...(I)> MakeTables(
    std::integer_sequence<int, I...>) {
  return {&SlotTable<I>::kApi...};
}
constexpr auto kTables = MakeTables(std::make_integer_sequence<int, kSlots>());

bool IsShellSyntax(char c) { return std::strchr("|&;<>()$`*?[]~{}#", c) != nullptr; }

}  // namespace

Expected<std::vector<std::string>> SplitCommandLine(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      const std::size_t end = command.find('\'', i + 1);
      if (end == std::string::npos) {
        return Error{ErrorCode::kInvalidArgument,
                     fmt::format("exec: command '{}': unterminated ' quote", command)};
      }
      word.append(command, i + 1, end - i - 1);
      in_word = true;
      i = end;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < command.size() && command[j] != '"'; ++j) {
        if (command[j] == '\\' && j + 1 < command.size() &&
            std::strchr("\"\\$`", command[j + 1]) != nullptr) {
          ++j;
        }
        word += command[j];
      }
      if (j >= command.size()) {
        return Error{ErrorCode::kInvalidArgument,
                     fmt::format("exec: command '{}': unterminated \" quote", command)};
      }
      in_word = true;
      i = j;
    } else if (c == '\\') {
      if (i + 1 >= command.size()) {
        return Error{ErrorCode::kInvalidArgument,
                     fmt::format("exec: command '{}' ends with a backslash", command)};
      }
      word += command[++i];
      in_word = true;
    } else if (IsShellSyntax(c) && !(c == '#' && in_word) && !(c == '~' && in_word)) {
      return Error{ErrorCode::kInvalidArgument,
                   fmt::format("exec: command '{}': '{}' is shell syntax; the command is split "
                               "into words without a shell (quote it, or run a shell yourself: "
                               "exec:sh -c '...')",
                               command, c)};
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) {
    return Error{ErrorCode::kInvalidArgument,
                 "exec: the command is empty (e.g. exec:'python3 my_sampler.py')"};
  }
  return words;
}

Expected<LoadedPlugin> OpenExecSampler(const std::string& command) {
  auto argv = SplitCommandLine(command);
  if (!argv.ok()) return argv.error();
  auto program = std::make_unique<Program>();
  program->command = command;
  program->argv = std::move(*argv);
  std::lock_guard lock(g_slots_mu);
  for (int s = 0; s < kSlots; ++s) {
    if (g_slots[s] != nullptr) continue;
    g_slots[s] = program.release();
    LoadedPlugin out;
    out.api = kTables[s];
    // Released after the last handle's destroy: ends the spare child and frees the slot.
    out.library = std::shared_ptr<void>(g_slots[s], [s](void*) {
      std::lock_guard l(g_slots_mu);
      delete g_slots[s];
      g_slots[s] = nullptr;
    });
    return out;
  }
  return Error{ErrorCode::kInvalidArgument,
               fmt::format("exec: more than {} exec samplers open at once", kSlots)};
}

}  // namespace sampcert::adapters

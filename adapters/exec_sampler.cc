#include "adapters/exec_sampler.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>

#include "adapters/abi_conversions.h"
#include "adapters/child_process.h"
#include "adapters/declarations.h"
#include "adapters/exec_protocol.h"
#include "adapters/unique_fd.h"

extern char** environ;

namespace sampcert::adapters {
namespace {

constexpr std::size_t kStderrKept = 65536;  // the child's stderr tail (64 KiB) kept for failures
constexpr std::size_t kStderrShown = 480;   // of it, what fits in an ABI error message

using Clock = std::chrono::steady_clock;
using exec_protocol::OkLength;
using exec_protocol::Printable;
using exec_protocol::Reader;
using exec_protocol::ReplyParser;

// Seconds a call may wait for the child; SAMPCERT_EXEC_TIMEOUT overrides (PROTOCOL.md). In a
// run the runner's --item-timeout kills the worker earlier; this bounds info, sample and
// --no-isolation runs. A sample call waits this plus kDeclaredCostMargin times the CPU time
// the sampler declares its draws cost (draw_cost_ns_per_token x vocabulary x draws): a large
// request of a slow sampler is work, not a stall, and a loaded machine must not turn it into
// a failure (REPRO-1). A child that computes forever is stopped by the item's CPU time. The
// extension is at most kMaxDeclaredExtension: the declaration is the untrusted sampler's own,
// and no declaration may make a stalled child wait forever.
constexpr double kDeclaredCostMargin = 4;
constexpr double kMaxDeclaredExtension = 3600;

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

// The child's environment: the host's, with the protocol's two variables set.
std::vector<std::string> ProtocolEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "SAMPCERT_PROTOCOL", 17) != 0) env.emplace_back(*e);
  }
  env.push_back(fmt::format("SAMPCERT_PROTOCOL={}", kExecProtocolMajor));
  env.emplace_back("SAMPCERT_PROTOCOL_FDS=3,4");
  return env;
}

// One sampler process and its protocol sockets: requests (its fd 3), replies (its fd 4); its
// stdout + stderr together are captured (the last 64 KiB).
class ExecChild {
 public:
  static Expected<std::unique_ptr<ExecChild>> Start(const std::vector<std::string>& argv,
                                                    const std::string& command);
  ~ExecChild() { Close(); }

  // Sends one request and reads its reply. OK: *reply holds the payload, of the length `ok`
  // allows. An error reply becomes its status. Anything else (death, garbage, a stall past the
  // timeout) kills the child and returns INTERNAL.
  // declared_s: the CPU seconds the sampler declares the request costs (0: none declared),
  // which extends the wait (CallTimeoutSeconds).
  int32_t Call(const std::string& request, const char* call_name, OkLength ok, std::string* reply,
               sampcert_error* err, double declared_s = 0);
  // DESTROY, then the end: SIGKILL if it lingers, always reaped.
  void Close();
  // In a forked process: forget the parent's child without touching it (closing our copies of
  // the descriptors does not affect the parent's).
  void Abandon();
  bool owned_here() const { return process_.owned_here(); }

 private:
  ExecChild() = default;
  int32_t Fail(const std::string& what, const char* call_name, sampcert_error* err);
  bool Send(const std::string& data, Clock::time_point deadline, std::string* why);
  bool Receive(ReplyParser* reply, Clock::time_point deadline, std::string* why);
  bool WaitIo(int fd, short events, Clock::time_point deadline, std::string* why);
  std::string KillAndDescribe(ExitStatus* end = nullptr);
  std::string StderrTail() const;

  std::string command_;
  ChildProcess process_;
  UniqueFd to_, from_;
  bool dead_ = false;
  std::string dead_reason_;
};

Expected<std::unique_ptr<ExecChild>> ExecChild::Start(const std::vector<std::string>& argv,
                                                      const std::string& command) {
  // Sockets, not pipes, for the protocol: send(MSG_NOSIGNAL) turns a dead child into EPIPE
  // instead of a SIGPIPE that would kill the host.
  FdPair req, resp;
  if (!MakeSocketPair(&req) || !MakeSocketPair(&resp)) {
    return Error{ErrorCode::kInternal, fmt::format("exec sampler '{}': cannot create pipes: {}",
                                                   command, std::strerror(errno))};
  }
  const UniqueFd devnull(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!devnull) {
    return Error{ErrorCode::kInternal, fmt::format("exec sampler '{}': cannot open /dev/null: {}",
                                                   command, std::strerror(errno))};
  }
  ChildOptions o;
  o.fds = {{0, devnull.get()}, {3, req[1].get()}, {4, resp[1].get()}};
  o.captured = {1, 2};  // stdout joins stderr: a stray print() can never reach the protocol
  o.capture_kept = kStderrKept;
  o.death_signal = SIGKILL;  // the sampler dies with its host (a killed worker)
  auto process = ChildProcess::Spawn(argv, ProtocolEnvironment(), o);
  if (!process.ok()) {
    return Error{process.error().code,
                 fmt::format("exec sampler '{}': {}", command, process.error().message)};
  }
  std::unique_ptr<ExecChild> c(new ExecChild());
  c->command_ = command;
  c->process_ = std::move(process).value();
  c->to_ = std::move(req[0]);
  c->from_ = std::move(resp[0]);
  return c;
}

std::string ExecChild::StderrTail() const {
  std::string s = process_.OutputTail();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.empty()) return "; its stderr is empty";
  if (s.size() > kStderrShown) s = "..." + s.substr(s.size() - kStderrShown);
  return "; its stderr ends: " + Printable(s);
}

bool ExecChild::WaitIo(int fd, short events, Clock::time_point deadline, std::string* why) {
  for (;;) {
    const int out_fd = process_.output_fd();
    pollfd p[2] = {{fd, events, 0}, {out_fd, POLLIN, 0}};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      *why = "timeout";
      return false;
    }
    const int r =
        poll(p, out_fd >= 0 ? 2 : 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) {
      *why = std::string("poll: ") + std::strerror(errno);
      return false;
    }
    if (out_fd >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) process_.DrainOutput();
    if (p[0].revents != 0) return true;
  }
}

bool ExecChild::Send(const std::string& data, Clock::time_point deadline, std::string* why) {
  std::size_t off = 0;
  while (off < data.size()) {
    if (!WaitIo(to_.get(), POLLOUT, deadline, why)) return false;
    const ssize_t n =
        send(to_.get(), data.data() + off, data.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
    } else if (n < 0 && errno != EINTR && errno != EAGAIN) {
      *why = "the process stopped reading its requests (" + std::string(std::strerror(errno)) + ")";
      return false;
    }
  }
  return true;
}

// Reads until the reply is complete or the parser refuses it (true), or the socket fails
// (false, *why: "timeout", "eof" before any byte of the header or payload, or the cause).
bool ExecChild::Receive(ReplyParser* reply, Clock::time_point deadline, std::string* why) {
  for (std::span<char> space = reply->Space(); !space.empty(); space = reply->Space()) {
    if (!WaitIo(from_.get(), POLLIN, deadline, why)) return false;
    const ssize_t r = recv(from_.get(), space.data(), space.size(), MSG_DONTWAIT);
    if (r > 0) {
      reply->Advance(static_cast<std::size_t>(r));
    } else if (r == 0) {
      *why = reply->stage_bytes() == 0 ? "eof"
                                       : "the process closed its reply pipe in the middle of a "
                                         "reply";
      return false;
    } else if (errno != EINTR && errno != EAGAIN) {
      *why = std::string("recv: ") + std::strerror(errno);
      return false;
    }
  }
  return true;
}

// Kills (if still running) and reaps the child; says how it ended (and gives its status to *end).
std::string ExecChild::KillAndDescribe(ExitStatus* end) {
  if (!process_.running()) return "";
  // A child that closed its pipes is usually exiting: give it a moment to report its status.
  const ExitStatus e = process_.Terminate(std::chrono::milliseconds(200));
  if (end != nullptr) *end = e;
  if (e.killed) return "; the process was killed";
  if (e.reaped && WIFEXITED(e.status)) {
    return fmt::format("; the process exited with status {}", WEXITSTATUS(e.status));
  }
  if (e.reaped && WIFSIGNALED(e.status)) {
    return fmt::format("; the process was killed by signal {} ({})", WTERMSIG(e.status),
                       strsignal(WTERMSIG(e.status)));
  }
  return "";
}

// A host with a finite CPU limit (RLIMIT_CPU) is a runner's worker, and the limit is its plan
// item's CPU time (--item-timeout). The sampler's process inherits it: when that process dies of
// SIGXCPU (or of SIGKILL at the hard limit), the item's CPU time is used up, and the host ends
// the same way, so that the runner records a Timeout (the item did not finish), never a failure
// of the sampler's later calls.
void EndHostWhenItsCpuTimeIsUsedUp(const ExitStatus& child) {
  rlimit cpu{};
  if (!child.reaped || child.killed || !WIFSIGNALED(child.status) ||
      getrlimit(RLIMIT_CPU, &cpu) != 0 || cpu.rlim_cur == RLIM_INFINITY) {
    return;
  }
  const int sig = WTERMSIG(child.status);
  if (sig != SIGXCPU && !(sig == SIGKILL && child.cpu_s >= static_cast<double>(cpu.rlim_cur))) {
    return;
  }
  ::signal(SIGXCPU, SIG_DFL);
  raise(SIGXCPU);
}

int32_t ExecChild::Fail(const std::string& what, const char* call_name, sampcert_error* err) {
  ExitStatus end;
  const std::string how = KillAndDescribe(&end);
  EndHostWhenItsCpuTimeIsUsedUp(end);
  dead_ = true;
  dead_reason_ = fmt::format("exec sampler '{}': {} (in {}){}{}", command_, what, call_name, how,
                             StderrTail());
  SetError(err, SAMPCERT_STATUS_INTERNAL, -1, dead_reason_);
  return SAMPCERT_STATUS_INTERNAL;
}

int32_t ExecChild::Call(const std::string& request, const char* call_name, OkLength ok,
                        std::string* reply, sampcert_error* err, double declared_s) {
  if (dead_) {
    SetError(err, SAMPCERT_STATUS_INTERNAL, -1, "no longer running: " + dead_reason_);
    return SAMPCERT_STATUS_INTERNAL;
  }
  const double timeout_s =
      CallTimeoutSeconds() + std::min(kDeclaredCostMargin * declared_s, kMaxDeclaredExtension);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  std::string why;
  auto failed = [&](const std::string& while_doing) {
    if (why == "timeout") {
      return Fail(
          fmt::format("no reply within {} s (SAMPCERT_EXEC_TIMEOUT{}) while {}", timeout_s,
                      declared_s > 0
                          ? fmt::format(" + {} x the declared draw cost, {} s, at most "
                                        "{} s",
                                        kDeclaredCostMargin, declared_s, kMaxDeclaredExtension)
                          : std::string(),
                      while_doing),
          call_name, err);
    }
    if (why == "eof") return Fail("the process closed its reply pipe (it exited?)", call_name, err);
    return Fail(why + " while " + while_doing, call_name, err);
  };
  if (!Send(request, deadline, &why)) return failed("sending the request");
  ReplyParser parser(ok);
  if (!Receive(&parser, deadline, &why)) {
    return failed(parser.stage() == ReplyParser::Stage::kHeader    ? "waiting for the reply"
                  : parser.kind() == exec_protocol::ReplyKind::kOk ? "reading the reply"
                                                                   : "reading the error reply");
  }
  if (parser.stage() == ReplyParser::Stage::kFailed) return Fail(parser.error(), call_name, err);
  if (parser.kind() == exec_protocol::ReplyKind::kOk) {
    *reply = parser.TakePayload();
    return SAMPCERT_STATUS_OK;
  }
  const exec_protocol::ErrorReply& e = parser.error_reply();
  SetError(err, e.code, e.row, e.message);
  return e.code;
}

void ExecChild::Close() {
  if (process_.running() && process_.owned_here() && !dead_) {
    // A polite end first, bounded: the sampler may flush or free a device.
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    std::string why;
    ReplyParser ignored(OkLength::Exactly(0));
    if (Send(exec_protocol::EncodeDestroyRequest(), deadline, &why)) {
      (void)Receive(&ignored, deadline, &why);
    }
  }
  to_.reset();
  from_.reset();
  if (process_.owned_here()) {
    KillAndDescribe();
  } else {
    process_.Abandon();
  }
}

void ExecChild::Abandon() {
  to_.reset();
  from_.reset();
  process_.Abandon();
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
  uint32_t minor = 0;  // the protocol MINOR the child speaks: the row header it reads
  sampcert_sampler_info info{};
  std::unique_ptr<ExecChild> spare;  // the child that answered info, kept for the first create
};

struct Instance {
  Program* program;
  std::unique_ptr<ExecChild> child;
  std::optional<std::string> config;
};

// Decodes INFO's OK payload (PROTOCOL.md, "INFO") into the program's declaration, on its first
// success; a reply from another major is VERSION_MISMATCH, a malformed one INTERNAL.
int32_t DecodeInfoReply(Program& p, const std::string& reply, sampcert_error* err) {
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
  // VERIFY is protocol MINOR 2: a child of an older MINOR cannot serve the capability.
  if (ok && minor < 2 && (i.capabilities & SAMPCERT_CAP_VERIFY) != 0) {
    SetError(err, SAMPCERT_STATUS_INVALID_ARGUMENT, -1,
             fmt::format("exec sampler '{}' declares verify but speaks protocol {}.{}: the "
                         "VERIFY request is protocol 1.2",
                         p.command, major, minor));
    return SAMPCERT_STATUS_INVALID_ARGUMENT;
  }
  // VERIFY_DRAFT_LOGITS and the acceptance reply are protocol MINOR 3.
  if (ok && minor < 3 &&
      (i.capabilities & (SAMPCERT_CAP_VERIFY_DRAFT_LOGITS | SAMPCERT_CAP_VERIFY_ACCEPTANCE)) != 0) {
    SetError(err, SAMPCERT_STATUS_INVALID_ARGUMENT, -1,
             fmt::format("exec sampler '{}' declares verify-draft-logits or verify-acceptance but "
                         "speaks protocol {}.{}: they are protocol 1.3",
                         p.command, major, minor));
    return SAMPCERT_STATUS_INVALID_ARGUMENT;
  }
  // A row's penalties, token history and seed are protocol MINOR 5 (PROTOCOL.md, "Versions":
  // 1.4 has only the history policies in INFO, and its 32-byte row header carries none of
  // them); its logit bias and minimum length are MINOR 6, log-probabilities 7, packed masks 8
  // (a row flag and the words in place of the bytes). A child of an older MINOR declaring
  // them would be sent rows it cannot read, so it is refused rather than certified on rows it
  // ignores.
  struct NeedsMinor {
    uint32_t capability;
    uint32_t minor;
    const char* name;
    const char* what;
  };
  static constexpr NeedsMinor kNeedsMinor[] = {
      {SAMPCERT_CAP_PENALTIES, 5, "penalties", "a row's penalties and token history are"},
      {SAMPCERT_CAP_SEEDS, 5, "seeds", "a row's seed is"},
      {SAMPCERT_CAP_LOGIT_BIAS, 6, "logit-bias", "a row's logit bias is"},
      {SAMPCERT_CAP_MIN_TOKENS, 6, "min-tokens", "a row's minimum length is"},
      {SAMPCERT_CAP_LOGPROBS_RAW, 7, "logprobs-raw", "log-probabilities are"},
      {SAMPCERT_CAP_LOGPROBS_SCALED, 7, "logprobs-scaled", "log-probabilities are"},
      {SAMPCERT_CAP_LOGPROBS_PROCESSED, 7, "logprobs-processed", "log-probabilities are"},
      {SAMPCERT_CAP_PACKED_MASK, 8, "packed-mask", "packed masks are"},
  };
  for (const NeedsMinor& n : kNeedsMinor) {
    if (ok && minor < n.minor && (i.capabilities & n.capability) != 0) {
      SetError(err, SAMPCERT_STATUS_INVALID_ARGUMENT, -1,
               fmt::format("exec sampler '{}' declares {} but speaks protocol {}.{}: {} "
                           "protocol 1.{}",
                           p.command, n.name, major, minor, n.what, n.minor));
      return SAMPCERT_STATUS_INVALID_ARGUMENT;
    }
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
    p.minor = minor;
    p.have_info = true;
  }
  return SAMPCERT_STATUS_OK;
}

// Starts a child and does the INFO handshake; fills the program's info on the first success.
int32_t StartChild(Program& p, std::unique_ptr<ExecChild>* out, sampcert_error* err) {
  auto child = ExecChild::Start(p.argv, p.command);
  if (!child.ok()) {
    SetError(err, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, child.error().message);
    return SAMPCERT_STATUS_INVALID_ARGUMENT;
  }
  std::string reply;
  if (int32_t st = (*child)->Call(exec_protocol::EncodeInfoRequest(), "info",
                                  OkLength::AtMost(exec_protocol::kMaxInfoReply), &reply, err);
      st != SAMPCERT_STATUS_OK) {
    return st;
  }
  if (int32_t st = DecodeInfoReply(p, reply, err); st != SAMPCERT_STATUS_OK) return st;
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
      std::unique_ptr<ExecChild> child;
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
  std::string reply;
  return inst.child->Call(exec_protocol::EncodeCreateRequest(inst.config), "create",
                          OkLength::Exactly(0), &reply, err);
}

int32_t ProgramCreate(int slot, const char* config, sampcert_sampler** out, sampcert_error* err) {
  return Guard(err, [&]() -> int32_t {
    Program& p = *g_slots[slot];
    std::lock_guard lock(p.mu);
    auto inst = std::make_unique<Instance>();
    inst->program = &p;
    if (config != nullptr) inst->config = config;
    if (p.spare && p.spare->owned_here()) {
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
  if (inst.child && inst.child->owned_here()) return SAMPCERT_STATUS_OK;
  if (inst.child) inst.child->Abandon();
  Program& p = *inst.program;
  std::lock_guard lock(p.mu);
  if (int32_t st = StartChild(p, &inst.child, err); st != SAMPCERT_STATUS_OK) return st;
  return SendCreate(inst, err);
}

void Destroy(sampcert_sampler* s) {
  delete reinterpret_cast<Instance*>(s);  // ~ExecChild: DESTROY, then kill and reap
}

// A request the batch encoder refused: an unknown dtype, rows without a row array, a history
// count without its list (INVALID_ARGUMENT); a row the child's protocol cannot carry
// (UNSUPPORTED).
int32_t Refused(const Error& e, sampcert_error* err) {
  const int32_t st = e.code == ErrorCode::kUnsupported ? SAMPCERT_STATUS_UNSUPPORTED
                                                       : SAMPCERT_STATUS_INVALID_ARGUMENT;
  SetError(err, st, e.row, e.message);
  return st;
}

int32_t Probabilities(sampcert_sampler* s, const sampcert_batch* batch, double* out,
                      sampcert_error* err) {
  return Guard(err, [&]() -> int32_t {
    Instance& inst = *reinterpret_cast<Instance*>(s);
    if (int32_t st = EnsureOwnChild(inst, err); st != SAMPCERT_STATUS_OK) return st;
    auto request = exec_protocol::EncodeProbabilitiesRequest(*batch, inst.program->minor);
    if (!request.ok()) return Refused(request.error(), err);
    std::string reply;
    const uint64_t bytes = batch->num_rows * batch->vocab * sizeof(double);
    if (int32_t st =
            inst.child->Call(*request, "probabilities", OkLength::Exactly(bytes), &reply, err);
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
    // SAMPLE_LOGPROBS (1.7) when the batch asks for log-probabilities (ABI MINOR 8): the reply
    // is the tokens, their log-probabilities, then the top tokens and theirs.
    const bool logprobs = BatchLogprobMode(*batch) != SAMPCERT_LOGPROBS_NONE;
    auto request = logprobs ? exec_protocol::EncodeSampleLogprobsRequest(
                                  *batch, seed, first_draw, draws_per_row, inst.program->minor)
                            : exec_protocol::EncodeSampleRequest(
                                  *batch, seed, first_draw, draws_per_row, inst.program->minor);
    if (!request.ok()) return Refused(request.error(), err);
    std::string reply;
    const uint64_t draws = batch->num_rows * draws_per_row;
    const uint64_t top = logprobs ? batch->num_rows * batch->top_logprobs : 0;
    const uint64_t bytes = draws * sizeof(int64_t);
    const uint64_t extra = logprobs ? draws * sizeof(double) + top * 16 : 0;
    const double declared_s = static_cast<double>(inst.program->info.draw_cost_ns_per_token) *
                              1e-9 * static_cast<double>(batch->vocab) * static_cast<double>(draws);
    if (int32_t st = inst.child->Call(*request, logprobs ? "sample_logprobs" : "sample",
                                      OkLength::Exactly(bytes + extra), &reply, err,
                                      std::isfinite(declared_s) && declared_s > 0 ? declared_s : 0);
        st != SAMPCERT_STATUS_OK) {
      return st;
    }
    if (bytes > 0) std::memcpy(out, reply.data(), bytes);
    if (logprobs) {
      const char* at = reply.data() + bytes;
      if (draws > 0) std::memcpy(batch->out_logprobs, at, draws * sizeof(double));
      at += draws * sizeof(double);
      if (top > 0) {
        std::memcpy(batch->out_top_tokens, at, top * sizeof(int64_t));
        std::memcpy(batch->out_top_logprobs, at + top * sizeof(int64_t), top * sizeof(double));
      }
    }
    return SAMPCERT_STATUS_OK;
  });
}

// VERIFY (protocol MINOR 2; VERIFY_DRAFT_LOGITS, MINOR 3): the reply is the accepted counts,
// then the tokens, then (a child declaring verify-acceptance, MINOR 3) the acceptance
// probabilities, num_chains x max_drafts doubles.
int32_t Verify(sampcert_sampler* s, const sampcert_chain_batch* batch, uint64_t seed,
               int64_t* accepted, int64_t* tokens, sampcert_error* err) {
  return Guard(err, [&]() -> int32_t {
    Instance& inst = *reinterpret_cast<Instance*>(s);
    if (int32_t st = EnsureOwnChild(inst, err); st != SAMPCERT_STATUS_OK) return st;
    auto request = exec_protocol::EncodeVerifyRequest(*batch, seed, inst.program->minor);
    if (!request.ok()) return Refused(request.error(), err);
    std::string reply;
    const uint64_t counts = batch->num_chains * sizeof(int64_t);
    const uint64_t bytes = counts * (batch->max_drafts + 2);
    const bool acceptance = (inst.program->info.capabilities & SAMPCERT_CAP_VERIFY_ACCEPTANCE) != 0;
    const uint64_t acceptance_bytes =
        acceptance ? batch->num_chains * batch->max_drafts * sizeof(double) : 0;
    if (int32_t st = inst.child->Call(*request, "verify",
                                      OkLength::Exactly(bytes + acceptance_bytes), &reply, err);
        st != SAMPCERT_STATUS_OK) {
      return st;
    }
    std::memcpy(accepted, reply.data(), counts);
    std::memcpy(tokens, reply.data() + counts, bytes - counts);
    if (double* out = ChainAcceptanceOut(*batch); out != nullptr && acceptance_bytes > 0) {
      std::memcpy(out, reply.data() + bytes, acceptance_bytes);
    }
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
                                                &Sample,
                                                &Verify};
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
  program->argv = std::move(argv).value();
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

#include "runner/runner.h"

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
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "properties/reproduction.h"
#include "results/result_json.h"
#include "results/strict_json.h"

namespace sampcert::runner {

using results::Failure;
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// The result family of an item: its planned row's name, else its kind's name.
std::string Family(const PlanItem& item) {
  return item.name.empty() ? std::string(properties::FamilyOf(item.kind).name) : item.name;
}

// "distribution f32 llm_like_V1000": an item as a failure's input.
std::string ItemInput(const PlanItem& item) {
  return fmt::format("{} {} {}", properties::FamilyOf(item.kind).name, item.dtype, item.name);
}

TestResult Broken(const PlanItem& item, Status status, const std::string& why,
                  const std::string& reproduction) {
  TestResult r;
  r.property = properties::FamilyOf(item.kind).crash_property;
  r.dtype = item.dtype;
  r.family = Family(item);
  r.status = status;
  r.note = why;
  r.failure = Failure{why, ItemInput(item), "", reproduction, "", ""};
  return r;
}

// Plug-ins may hand us any bytes as names and messages: replace invalid UTF-8 instead of
// throwing (nlohmann's type_error 316) when the worker serializes.
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// What the parent and one worker share (an anonymous MAP_SHARED page made before the fork): the
// worker's call trace, for the post-mortem of a worker that died, and a host failure the worker
// met before any sampler code ran.
struct Shared {
  adapters::CallTrace trace;
  char host_error[256];
};

// The signal that interrupts the run (SIGINT / SIGTERM in the parent), 0 while none did.
volatile sig_atomic_t g_interrupt = 0;
void OnInterrupt(int sig) { g_interrupt = sig; }

// In a worker: SIGTERM (also its parent-death signal) takes its whole process group down with
// it, so a child the sampler forked does not outlive a killed run.
void KillOwnGroup(int) {
  kill(0, SIGKILL);
  _exit(128 + SIGTERM);
}

// The worker's result channel lives at a high descriptor number a sampler does not hit by
// accident (it opens files at the lowest free number), close-on-exec.
int ChannelFd() {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  const rlim_t top = rl.rlim_cur == RLIM_INFINITY ? 1024 : std::min<rlim_t>(rl.rlim_cur, 1024);
  return static_cast<int>(top) - 1;
}

// The fewest descriptors a run needs: stdio, a channel per job, the loader's, the reports'.
constexpr rlim_t kMinFiles = 64;

std::string Nonce() {
  static std::mt19937_64 gen{std::random_device{}()};
  return fmt::format("{:016x}", gen());
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  Shared* shared = nullptr;
  PlanItem item;
  std::size_t index = 0;  // in the shard's items
  std::string nonce;
  std::string output;
  Clock::time_point started;
  bool killed_by_us = false;
  std::string kill_reason;  // "backstop", "budget", "interrupt"
};

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

// Starts a worker that runs `body` (which returns the message to send) under the limits.
// Returns an error for host failures only.
Expected<Worker> Spawn(const RunOptions& o, const std::function<std::string()>& body) {
  void* page =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    return Error{ErrorCode::kInternal, fmt::format("host error: mmap: {}", std::strerror(errno))};
  }
  auto* shared = new (page) Shared{};
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    munmap(page, sizeof(Shared));
    return Error{ErrorCode::kInternal, fmt::format("host error: pipe: {}", std::strerror(errno))};
  }
  const pid_t parent = getpid();
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    struct sigaction sa {};
    sa.sa_handler = KillOwnGroup;
    sigaction(SIGTERM, &sa, nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(0);  // the parent died before prctl: nobody reads us
    auto host_fail = [&](const std::string& why) {
      std::snprintf(shared->host_error, sizeof shared->host_error, "%s", why.c_str());
      _exit(0);
    };
    const int channel = fcntl(fds[1], F_DUPFD_CLOEXEC, ChannelFd());
    if (channel < 0) host_fail(fmt::format("worker: dup: {}", std::strerror(errno)));
    // Nothing else of the parent's stays open: other workers' pipes, the original fd.
    syscall(SYS_close_range, 3u, static_cast<unsigned>(channel) - 1, 0u);
    syscall(SYS_close_range, static_cast<unsigned>(channel) + 1, ~0u, 0u);
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    const auto cpu = static_cast<rlim_t>(std::ceil(o.item_timeout_s));
    const rlimit cpu_limit{cpu, cpu + 1};
    if (setrlimit(RLIMIT_CPU, &cpu_limit) != 0) {
      host_fail(fmt::format("worker: setrlimit(RLIMIT_CPU): {}", std::strerror(errno)));
    }
    if (o.memory_limit_bytes > 0) {
      const rlimit as{o.memory_limit_bytes, o.memory_limit_bytes};
      setrlimit(RLIMIT_AS, &as);
    }
    adapters::SetCallTrace(&shared->trace);
    std::string message;
    try {
      message = body();
    } catch (const std::bad_alloc&) {
      message = Dump({{"crash", "out of memory (an allocation failed in the worker)"}});
    } catch (const std::exception& e) {
      message = Dump({{"crash", std::string("exception: ") + e.what()}});
    }
    WriteAll(channel, message);
    _exit(0);  // no atexit handlers, no library destructors: they are the sampler's code
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    munmap(page, sizeof(Shared));
    return Error{ErrorCode::kInternal, fmt::format("host error: fork: {}", std::strerror(errno))};
  }
  setpgid(pid, pid);  // also here: no window in which a kill of the group misses it
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  Worker w;
  w.pid = pid;
  w.fd = fds[0];
  w.shared = shared;
  w.started = Clock::now();
  return w;
}

void Drain(Worker& w) {
  char buf[65536];
  for (;;) {
    const ssize_t n = read(w.fd, buf, sizeof buf);
    if (n > 0) {
      w.output.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return;  // EOF, or nothing more now (EAGAIN)
  }
}

// Has the worker exited? (Not reaped: its pid keeps naming its process group until we kill it.)
bool Exited(const Worker& w) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(w.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == w.pid;
}

struct Ended {
  int status = 0;
  double cpu_s = 0;
};

// Kills what is left of the worker's process group (a child the sampler forked), reaps the
// worker, reads what it sent.
Ended Reap(Worker& w) {
  kill(-w.pid, SIGKILL);
  Ended e;
  rusage ru{};
  while (wait4(w.pid, &e.status, 0, &ru) < 0 && errno == EINTR) {
  }
  e.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  Drain(w);
  close(w.fd);
  return e;
}

std::string CallOf(const Shared* s) {
  const std::string call(s->trace.call, strnlen(s->trace.call, sizeof s->trace.call));
  return call.empty() ? "" : " during " + call;
}

std::string DrawsOf(const Shared* s) {
  return fmt::format("after {} draws in {} sampler calls", s->trace.draws, s->trace.calls);
}

// Why a worker that did not send a valid message died, in words, or "" if it exited 0.
std::string DeathOf(const Worker& w, const Ended& e, uint64_t memory_limit) {
  if (WIFSIGNALED(e.status)) {
    const int sig = WTERMSIG(e.status);
    std::string why = fmt::format("the sampler's worker died of signal {} ({}){}", sig,
                                  strsignal(sig), CallOf(w.shared));
    if (sig == SIGKILL && !w.killed_by_us) {
      why +=
          "; a SIGKILL from outside the run: the kernel's out-of-memory killer, or another "
          "process";
    }
    const std::string call = CallOf(w.shared);
    // Allocation-heavy calls only: a segfault while loading is no out-of-memory suspect.
    if ((sig == SIGSEGV || sig == SIGBUS) && memory_limit > 0 &&
        (call == " during sample()" || call == " during probabilities()")) {
      why += fmt::format(
          " (if it ran out of memory: the worker's address space is limited to "
          "{} MiB, and an unchecked failed malloc ends like this)",
          memory_limit >> 20);
    }
    return why;
  }
  const int code = WIFEXITED(e.status) ? WEXITSTATUS(e.status) : -1;
  const std::string call = CallOf(w.shared);
  if (code != 0 || !call.empty()) {
    return fmt::format("the sampler's worker exited with status {}{}", code,
                       call.empty() ? " (outside any sampler call)" : call);
  }
  return "";
}

std::string Snippet(const std::string& s) {
  std::string out = s.substr(0, 200);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return "'" + out + (s.size() > 200 ? "...'" : "'") + fmt::format(" ({} bytes)", s.size());
}

// The fields of two declarations that differ, "version: '1.0' (describe) vs '2.0' (here)".
std::string InfoDifference(const json& a, const json& b) {
  std::string out;
  for (const auto& [k, v] : a.items()) {
    if (!b.contains(k) || b[k] != v) {
      out += fmt::format("{}{}: {} (describe step) vs {} (this worker)", out.empty() ? "" : "; ", k,
                         Dump(v), b.contains(k) ? Dump(b[k]) : "missing");
    }
  }
  return out.empty() ? "the declarations differ" : out;
}

TestResult Timeout(const Worker& w, const std::string& why, uint64_t draws,
                   const std::string& reproduction) {
  TestResult r = Broken(w.item, Status::kTimeout, why, reproduction);
  r.draws = draws;
  return r;
}

std::string HowToComplete(const PlanItem& item, const RunOptions& o) {
  return fmt::format(
      "; for a complete run raise --item-timeout (now {} CPU seconds per item), or run this "
      "item alone with --item {}/{} --item-timeout N",
      o.item_timeout_s, item.dtype, item.name.empty() ? "<name>" : item.name);
}

}  // namespace

TestResult AbiResult(const adapters::Sampler& sampler, const std::string& sampler_arg,
                     const Plan& plan, const PlanItem& item) {
  TestResult r;
  r.property = "ABI-1";
  r.dtype = item.dtype;
  r.family = Family(item);
  r.cases = sampler.abi_checked_calls();
  const auto& v = sampler.abi_violations();
  if (!v.empty()) {
    r.status = Status::kFail;
    const std::string input = ItemInput(item);
    r.failure = Failure{sampler.abi_violation_count() > 1
                            ? fmt::format("{} (and {} more violations in this item)", v.front(),
                                          sampler.abi_violation_count() - 1)
                            : v.front(),
                        input,
                        input,
                        properties::ReproductionCommand(sampler_arg, plan, item),
                        "",
                        ""};
    r.note = r.failure->message;
  }
  return r;
}

Expected<std::vector<TestResult>> CheckWorkerMessage(const std::string& message,
                                                     const std::string& nonce,
                                                     const json& declared_info,
                                                     const PlanItem& item,
                                                     const ResultKeys* expected) {
  auto bad = [&](const std::string& why) {
    return Error{ErrorCode::kInternal, fmt::format("{}; received {}", why, Snippet(message))};
  };
  json j;
  std::string why;
  if (!results::ParseJson(message, results::JsonKind::kWorkerMessage, &j, &why)) {
    return bad("the worker's result is not JSON within the reader's limits (" + why + ")");
  }
  if (!j.is_object() || !j.contains("nonce") || j["nonce"] != nonce) {
    return bad("the worker's result does not carry this item's nonce (not the runner's message)");
  }
  if (j.contains("crash") && j["crash"].is_string()) {
    return Error{ErrorCode::kInternal, j["crash"].get<std::string>()};
  }
  if (!j.contains("info") || j["info"] != declared_info) {
    return Error{ErrorCode::kInternal,
                 "get_info in this item's worker differs from what the describe step saw: " +
                     InfoDifference(declared_info, j.value("info", json::object()))};
  }
  if (!j.contains("results") || !j["results"].is_array()) return bad("the result has no results");
  std::vector<TestResult> out;
  try {
    for (const json& r : j["results"]) {
      // ResultFromJson reads leniently (a missing status is a default); the channel is strict.
      Status status;
      if (!r.is_object() || !r.contains("status") || !r["status"].is_string() ||
          !results::ParseStatus(r["status"].get<std::string>(), &status) ||
          !r.contains("property") || !r["property"].is_string() || !r.contains("family") ||
          !r["family"].is_string() || !r.contains("dtype") || !r["dtype"].is_string()) {
        return bad("a malformed result (status, property, dtype and family are required)");
      }
      out.push_back(results::ResultFromJson(r));
    }
  } catch (const std::exception& e) {
    return bad(std::string("a malformed result (") + e.what() + ")");
  }
  ResultKeys got;
  for (const TestResult& r : out) {
    if (r.dtype != item.dtype) {
      return bad(fmt::format("a result of dtype {} from an item of dtype {}", r.dtype, item.dtype));
    }
    got.emplace_back(r.property, r.family);
  }
  std::sort(got.begin(), got.end());
  ResultKeys want;
  if (expected != nullptr) {
    want = *expected;
  } else {
    want = {{"ABI-1", Family(item)}};  // without the plan's keys: at least the runner's own
    for (const auto& k : got) {
      if (k.first != "ABI-1") want.push_back(k);
    }
  }
  std::sort(want.begin(), want.end());
  if (got != want) {
    std::vector<std::string> missing, extra;
    ResultKeys tmp;
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(tmp));
    for (const auto& k : tmp) missing.push_back(k.first + "/" + k.second);
    tmp.clear();
    std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(tmp));
    for (const auto& k : tmp) extra.push_back(k.first + "/" + k.second);
    return bad(
        fmt::format("the item returned {} results, not the {} the plan requires (missing: "
                    "{}; unexpected: {})",
                    got.size(), want.size(), fmt::join(missing, ", "), fmt::join(extra, ", ")));
  }
  return out;
}

std::vector<PlanItem> ShardItems(const Plan& plan, const RunOptions& o) {
  std::vector<PlanItem> out;
  for (std::size_t i = 0; i < plan.items.size(); ++i) {
    const PlanItem& it = plan.items[i];
    if (static_cast<int>(i % static_cast<std::size_t>(o.shard_count)) != o.shard_index) continue;
    if (!o.only_dtype.empty() && it.dtype != o.only_dtype) continue;
    if (!o.only_item.empty() && o.only_item != it.dtype + "/" + it.name) continue;
    // --case selects a generated case: only the per-dtype (generated-rows) items have them.
    if (o.only_case >= 0 &&
        properties::FamilyOf(it.kind).placement != properties::Placement::kPerDtype) {
      continue;
    }
    out.push_back(it);
  }
  return out;
}

Expected<adapters::SamplerInfo> Describe(const SamplerOpener& open, const RunOptions& o) {
  if (!o.isolate) {
    auto s = open();
    if (!s.ok()) return s.error();
    return (*s)->info();
  }
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < kMinFiles) {
    return Error{ErrorCode::kInternal,
                 fmt::format("host error: the open-file limit is {} (ulimit -n); sampcert needs "
                             "at least {}",
                             files.rlim_cur, kMinFiles)};
  }
  const std::string nonce = Nonce();
  auto spawned = Spawn(o, [&] {
    auto s = open();
    if (!s.ok()) return Dump({{"nonce", nonce}, {"error", s.error().message}});
    json info = InfoToJson((*s)->info());
    s.value().reset();  // destroy, still inside the trace
    return Dump({{"nonce", nonce}, {"info", info}});
  });
  if (!spawned.ok()) return spawned.error();
  Worker w = std::move(spawned).value();
  const double backstop = o.wall_backstop_s > 0 ? o.wall_backstop_s : 4 * o.item_timeout_s + 30;
  while (!Exited(w)) {
    pollfd p{w.fd, POLLIN, 0};
    poll(&p, 1, 50);
    Drain(w);
    if (Seconds(w.started) > backstop) {
      w.killed_by_us = true;
      break;
    }
  }
  const Ended e = Reap(w);
  const std::string host(w.shared->host_error, strnlen(w.shared->host_error, 256));
  const std::string call = CallOf(w.shared);
  const std::string death = DeathOf(w, e, o.memory_limit_bytes);
  munmap(w.shared, sizeof(Shared));
  w.shared = nullptr;
  auto fail = [](const std::string& why) {
    return Error{ErrorCode::kInvalidArgument, "cannot load the sampler: " + why};
  };
  if (!host.empty()) return Error{ErrorCode::kInternal, "host error: " + host};
  if (w.killed_by_us) {
    return fail(fmt::format("loading it did not finish within {} s{}", backstop, call));
  }
  if (WIFSIGNALED(e.status) && WTERMSIG(e.status) == SIGXCPU) {
    return fail(fmt::format("loading it used more than {} s of CPU{}", o.item_timeout_s, call));
  }
  json j;
  std::string why;
  if (!results::ParseJson(w.output, results::JsonKind::kWorkerMessage, &j, &why)) j = nullptr;
  if (!j.is_object() || j.value("nonce", "") != nonce) {
    return fail(death.empty() ? "the describe worker exited with status 0 without a declaration"
                              : death);
  }
  if (j.contains("error")) return fail(j["error"].get<std::string>());
  if (j.contains("crash")) return fail(j["crash"].get<std::string>());
  try {
    return InfoFromJson(j.at("info"));
  } catch (const std::exception& ex) {
    return fail(std::string("malformed declaration: ") + ex.what());
  }
}

Expected<RunOutcome> RunPlan(const SamplerOpener& open, const std::string& sampler_arg,
                             const Plan& plan, const adapters::SamplerInfo& declared,
                             const RunOptions& o) {
  const std::vector<PlanItem> items = ShardItems(plan, o);
  RunOutcome outcome;
  const auto run_started = Clock::now();
  std::size_t done = 0;
  auto finish = [&](const PlanItem& item, std::vector<TestResult> r) {
    outcome.results.insert(outcome.results.end(), std::make_move_iterator(r.begin()),
                           std::make_move_iterator(r.end()));
    ++done;
    if (o.progress) {
      Progress p;
      p.done = done;
      p.total = items.size();
      p.item = &item;
      p.elapsed_s = Seconds(run_started);
      p.estimated_total_s =
          p.elapsed_s / static_cast<double>(done) * static_cast<double>(items.size());
      o.progress(p);
    }
  };
  if (!o.isolate) {  // --no-isolation: the sampler runs here, with none of the protections
    auto s = open();
    if (!s.ok()) return s.error();
    for (const PlanItem& item : items) {
      std::vector<TestResult> r = properties::RunItem(**s, sampler_arg, plan, item, o.only_case);
      r.push_back(AbiResult(**s, sampler_arg, plan, item));
      finish(item, std::move(r));
    }
    return outcome;
  }

  const json declared_json = InfoToJson(declared);
  const double backstop = o.wall_backstop_s > 0 ? o.wall_backstop_s : 4 * o.item_timeout_s + 30;
  g_interrupt = 0;
  struct sigaction sa {
  }, old_int{}, old_term{};
  sa.sa_handler = OnInterrupt;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  std::vector<Worker> running;
  std::size_t next = 0;
  std::string stop_reason;
  std::optional<Error> host_error;
  // Results come back in completion order; the plan index orders them (REPRO-1).
  std::vector<std::vector<TestResult>> by_index(items.size());
  std::vector<bool> finished(items.size(), false);
  while ((next < items.size() || !running.empty()) && stop_reason.empty() && !host_error) {
    while (next < items.size() && static_cast<int>(running.size()) < std::max(1, o.jobs) &&
           stop_reason.empty()) {
      const PlanItem& item = items[next];
      const std::string nonce = Nonce();
      auto spawned = Spawn(o, [&]() -> std::string {
        auto s = open();
        if (!s.ok()) {
          return Dump({{"nonce", nonce},
                       {"crash", "the sampler could not be opened in this item's worker: " +
                                     s.error().message}});
        }
        // Round-tripped as the parent received the describe step's (invalid UTF-8 replaced).
        const json info = json::parse(Dump(InfoToJson((*s)->info())));
        json results = json::array();
        if (info == declared_json) {
          std::vector<TestResult> r =
              properties::RunItem(**s, sampler_arg, plan, item, o.only_case);
          r.push_back(AbiResult(**s, sampler_arg, plan, item));
          for (const TestResult& t : r) results.push_back(results::ToJson(t));
        }
        return Dump({{"nonce", nonce}, {"info", info}, {"results", results}});
      });
      if (!spawned.ok()) {
        host_error = spawned.error();
        break;
      }
      Worker w = std::move(spawned).value();
      w.item = item;
      w.index = next;
      w.nonce = nonce;
      running.push_back(std::move(w));
      ++next;
    }
    std::vector<pollfd> pfds;
    for (const Worker& w : running) pfds.push_back({w.fd, POLLIN, 0});
    poll(pfds.data(), pfds.size(), 50);
    if (g_interrupt != 0) {
      outcome.signal = g_interrupt;
      stop_reason = fmt::format("interrupted by {} after {} of {} items",
                                g_interrupt == SIGINT ? "SIGINT" : "SIGTERM", done, items.size());
      break;
    }
    if (o.time_budget_s > 0 && Seconds(run_started) > o.time_budget_s) {
      const double estimate = done > 0 ? Seconds(run_started) / static_cast<double>(done) *
                                             static_cast<double>(items.size())
                                       : 0;
      stop_reason = fmt::format(
          "stopped by --time-budget {} s after {} of {} items; for a complete run give no "
          "--time-budget{}",
          o.time_budget_s, done, items.size(),
          estimate > 0 ? fmt::format(" (estimated {:.0f} s in all)", estimate) : "");
      break;
    }
    for (std::size_t k = running.size(); k-- > 0;) {
      Worker& w = running[k];
      Drain(w);
      const bool exited = Exited(w);
      if (!exited && Seconds(w.started) <= backstop) continue;
      if (!exited) w.killed_by_us = true;
      const Ended e = Reap(w);
      std::vector<TestResult> r;
      const std::string host(w.shared->host_error, strnlen(w.shared->host_error, 256));
      const uint64_t draws = w.shared->trace.draws;
      const std::string repro =
          properties::ReproductionCommand(sampler_arg, plan, w.item, o.only_case);
      const bool cpu_exhausted =
          WIFSIGNALED(e.status) &&
          (WTERMSIG(e.status) == SIGXCPU ||
           (WTERMSIG(e.status) == SIGKILL && e.cpu_s >= std::ceil(o.item_timeout_s)));
      if (!host.empty()) {
        host_error = Error{ErrorCode::kInternal, "host error: " + host};
      } else if (w.killed_by_us) {
        r.push_back(Timeout(w,
                            fmt::format("the worker did not finish within the wall-clock "
                                        "backstop of {} s (it used {:.1f} s of CPU: blocked or "
                                        "sleeping{}), {}; the worker was killed",
                                        backstop, e.cpu_s, CallOf(w.shared), DrawsOf(w.shared)) +
                                HowToComplete(w.item, o),
                            draws, repro));
      } else if (cpu_exhausted) {
        r.push_back(Timeout(w,
                            fmt::format("the sampler used its {} s of CPU time for this item "
                                        "(--item-timeout){}, {}",
                                        o.item_timeout_s, CallOf(w.shared), DrawsOf(w.shared)) +
                                HowToComplete(w.item, o),
                            draws, repro));
      } else {
        // Always exactly the keys the plan requires, and the runner's ABI-1.
        ResultKeys want = properties::ExpectedResultKeys(plan, w.item, declared, o.only_case);
        want.emplace_back("ABI-1", Family(w.item));
        auto checked = CheckWorkerMessage(w.output, w.nonce, declared_json, w.item, &want);
        const std::string death = DeathOf(w, e, o.memory_limit_bytes);
        if (!death.empty()) {
          // A signal or exit() while the sampler ran: whatever was sent is not trusted.
          r.push_back(Broken(w.item, Status::kCrash, death, repro));
        } else if (!checked.ok()) {
          r.push_back(Broken(w.item, Status::kCrash, checked.error().message, repro));
        } else {
          r = std::move(*checked);
        }
      }
      munmap(w.shared, sizeof(Shared));
      const std::size_t idx = w.index;
      by_index[idx] = r;
      finished[idx] = true;
      const PlanItem item = w.item;
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      finish(item, std::move(r));
    }
  }
  // Stopped early (a signal, the time budget, a host error): nothing may outlive the run.
  for (Worker& w : running) {
    w.killed_by_us = true;
    Reap(w);
    munmap(w.shared, sizeof(Shared));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (host_error) return *host_error;
  outcome.results.clear();
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (finished[i]) {
      outcome.results.insert(outcome.results.end(), by_index[i].begin(), by_index[i].end());
    }
  }
  if (!stop_reason.empty()) {
    outcome.complete = false;
    outcome.incomplete_reason = stop_reason;
  }
  return outcome;
}

}  // namespace sampcert::runner

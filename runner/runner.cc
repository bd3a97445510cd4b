#include "runner/runner.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <random>

#include "properties/reproduction.h"
#include "results/result_json.h"
#include "results/strict_json.h"
#include "runner/interrupt_scope.h"
#include "runner/seconds.h"
#include "runner/worker.h"

namespace sampcert::runner {

using results::Failure;
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::string Family(const PlanItem& item) { return ItemFamily(item); }
std::string Dump(const json& j) { return DumpMessage(j); }

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

// The signal that interrupts the run (SIGINT / SIGTERM in the parent), 0 while none did.
volatile sig_atomic_t g_interrupt = 0;
void OnInterrupt(int sig) { g_interrupt = sig; }

// The fewest descriptors a run needs: stdio, two pipes per job, the loader's, the reports'.
constexpr rlim_t kMinFiles = 64;

std::string Nonce() {
  static std::mt19937_64 gen{std::random_device{}()};
  return fmt::format("{:016x}", gen());
}

WorkerLimits Limits(const RunOptions& o) {
  WorkerLimits l;
  l.cpu_s = o.item_timeout_s;
  l.wall_backstop_s = o.wall_backstop_s;
  l.memory_bytes = o.memory_limit_bytes;
  return l;
}

// Says once per process why workers run without their system-call filter.
void WarnOnce(const RunOptions& o, const Worker& w) {
  static bool warned = false;
  const std::string why = w.FilterProblem();
  if (warned || why.empty() || !o.warn) return;
  warned = true;
  o.warn("the workers' system-call filter is off (" + why +
         "): a sampler can signal or trace the tool (SPEC.md section 13)");
}

Error HostFileLimit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < kMinFiles) {
    return Error{ErrorCode::kInternal,
                 fmt::format("host error: the open-file limit is {} (ulimit -n); sampcert needs "
                             "at least {}",
                             files.rlim_cur, kMinFiles)};
  }
  return Error{};
}

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

TestResult Timeout(const PlanItem& item, const std::string& why, uint64_t draws,
                   const std::string& reproduction) {
  TestResult r = Broken(item, Status::kTimeout, why, reproduction);
  r.draws = draws;
  return r;
}

std::string HowToComplete(const PlanItem& item, const RunOptions& o) {
  return fmt::format(
      "; for a complete run raise --item-timeout (now {} CPU seconds per item), or run this "
      "item alone with --item {}/{} --item-timeout N",
      o.item_timeout_s, item.dtype, item.name.empty() ? "<name>" : item.name);
}

// Did the body use up its CPU time? (SIGXCPU at the soft limit; SIGKILL at the hard one.)
bool CpuExhausted(const WorkerEnd& e, const RunOptions& o) {
  return WIFSIGNALED(e.status) &&
         (WTERMSIG(e.status) == SIGXCPU ||
          (WTERMSIG(e.status) == SIGKILL && e.cpu_s >= std::ceil(o.item_timeout_s)));
}

// The describe worker's declaration, or why the sampler cannot be loaded.
Expected<adapters::SamplerInfo> DeclarationOf(const Worker& w, const WorkerEnd& e,
                                              const std::string& nonce, const RunOptions& o) {
  auto fail = [](const std::string& why) {
    return Error{ErrorCode::kInvalidArgument, "cannot load the sampler: " + why};
  };
  if (const std::string host = w.HostError(); !host.empty()) {
    return Error{ErrorCode::kInternal, "host error: " + host};
  }
  if (e.killed_by_us) {
    return fail(
        fmt::format("loading it did not finish within {} s{}", Limits(o).Backstop(), w.Call()));
  }
  if (WIFSIGNALED(e.status) && WTERMSIG(e.status) == SIGXCPU) {
    return fail(fmt::format("loading it used more than {} s of CPU{}", o.item_timeout_s, w.Call()));
  }
  json j;
  std::string why;
  if (!results::ParseJson(w.message(), results::JsonKind::kWorkerMessage, &j, &why)) j = nullptr;
  const std::string death = w.Death(e, o.memory_limit_bytes);
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

// A plan item's worker and what the scheduler knows of it.
struct Job {
  Worker worker;
  PlanItem item;
  std::size_t index = 0;  // in the shard's items
  std::string nonce;
};

// The body of an item's worker: opens the sampler, checks its declaration, runs the item.
Worker::Body ItemBody(const SamplerOpener& open, const std::string& sampler_arg, const Plan& plan,
                      const PlanItem& item, const json& declared_json, const std::string& nonce,
                      int64_t only_case) {
  return [&open, &sampler_arg, &plan, &item, &declared_json, nonce, only_case]() -> std::string {
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
      std::vector<TestResult> r = properties::RunItem(**s, sampler_arg, plan, item, only_case);
      r.push_back(AbiResult(**s, sampler_arg, plan, item));
      for (const TestResult& t : r) results.push_back(results::ToJson(t));
    }
    return Dump({{"nonce", nonce}, {"info", info}, {"results", results}});
  };
}

// The results of an ended item's worker: its own, or one Crash / Timeout saying what happened.
// Sets *host_error for a host failure instead.
std::vector<TestResult> ItemResults(const Job& job, const WorkerEnd& e, const Plan& plan,
                                    const std::string& sampler_arg,
                                    const adapters::SamplerInfo& declared,
                                    const json& declared_json, const RunOptions& o,
                                    std::optional<Error>* host_error) {
  const Worker& w = job.worker;
  const std::string repro =
      properties::ReproductionCommand(sampler_arg, plan, job.item, o.only_case);
  if (const std::string host = w.HostError(); !host.empty()) {
    *host_error = Error{ErrorCode::kInternal, "host error: " + host};
    return {};
  }
  if (e.killed_by_us) {
    return {Timeout(
        job.item,
        fmt::format("the worker did not finish within the wall-clock backstop of {} s "
                    "(it used only {:.1f} s of CPU: it was waiting the rest of the time, blocked, "
                    "sleeping or writing output faster than it is read{}), {}; the worker "
                    "was killed",
                    Limits(o).Backstop(), e.cpu_s, w.Call(), w.DrawsText()) +
            HowToComplete(job.item, o),
        w.Draws(), repro)};
  }
  if (CpuExhausted(e, o)) {
    return {Timeout(job.item,
                    fmt::format("the sampler used its {} s of CPU time for this item "
                                "(--item-timeout){}, {}",
                                o.item_timeout_s, w.Call(), w.DrawsText()) +
                        HowToComplete(job.item, o),
                    w.Draws(), repro)};
  }
  // Always exactly the keys the plan requires, and the runner's ABI-1.
  ResultKeys want = properties::ExpectedResultKeys(plan, job.item, declared, o.only_case);
  want.emplace_back("ABI-1", Family(job.item));
  auto checked = CheckWorkerMessage(w.message(), job.nonce, declared_json, job.item, &want);
  // A signal or exit() while the sampler ran: whatever was sent is not trusted.
  if (const std::string death = w.Death(e, o.memory_limit_bytes); !death.empty()) {
    return {Broken(job.item, Status::kCrash, death, repro)};
  }
  if (!checked.ok()) return {Broken(job.item, Status::kCrash, checked.error().message, repro)};
  return std::move(checked).value();
}

// Why the run must stop now ("" to go on): an interrupt, or the time budget.
std::string StopReason(const RunOptions& o, Clock::time_point run_started, std::size_t done,
                       std::size_t total, RunOutcome* outcome) {
  if (g_interrupt != 0) {
    outcome->signal = g_interrupt;
    return fmt::format("interrupted by {} after {} of {} items",
                       g_interrupt == SIGINT ? "SIGINT" : "SIGTERM", done, total);
  }
  if (o.time_budget_s > 0 && Seconds(run_started) > o.time_budget_s) {
    const double estimate =
        done > 0 ? Seconds(run_started) / static_cast<double>(done) * static_cast<double>(total)
                 : 0;
    return fmt::format(
        "stopped by --time-budget {} s after {} of {} items; for a complete run give no "
        "--time-budget{}",
        o.time_budget_s, done, total,
        estimate > 0 ? fmt::format(" (estimated {:.0f} s in all)", estimate) : "");
  }
  return {};
}

}  // namespace

std::vector<PlanItem> ShardItems(const Plan& plan, const RunOptions& o) {
  std::vector<PlanItem> out;
  for (std::size_t i = 0; i < plan.items.size(); ++i) {
    const PlanItem& it = plan.items[i];
    if (static_cast<int>(i % static_cast<std::size_t>(o.shard_count)) != o.shard_index) continue;
    if (!o.only_dtype.empty() && it.dtype != o.only_dtype) continue;
    if (!o.only_item.empty() && o.only_item != it.dtype + "/" + it.name) continue;
    // --case selects a generated case: only the per-dtype (generated-rows) items have them.
    if (o.only_case >= 0 &&
        (properties::FamilyOf(it.kind).placement != properties::Placement::kPerDtype ||
         !it.name.empty())) {
      continue;
    }
    out.push_back(it);
  }
  return out;
}

Expected<adapters::SamplerInfo> Describe(const SamplerOpener& open, const RunOptions& o) {
  if (!o.isolate) {
    auto s = open();
    // Whatever code the sampler gave, it is the sampler's failure, not the host's (kInternal).
    if (!s.ok()) return Error{ErrorCode::kInvalidArgument, s.error().message};
    return (*s)->info();
  }
  if (Error e = HostFileLimit(); e.code != ErrorCode::kOk) return e;
  const std::string nonce = Nonce();
  auto spawned = Worker::Spawn(Limits(o), [&] {
    auto s = open();
    if (!s.ok()) return Dump({{"nonce", nonce}, {"error", s.error().message}});
    json info = InfoToJson((*s)->info());
    s.value().reset();  // destroy, still inside the trace
    return Dump({{"nonce", nonce}, {"info", info}});
  });
  if (!spawned.ok()) return spawned.error();
  Worker w = std::move(spawned).value();
  const WorkerEnd e = w.RunToEnd(Limits(o).Backstop());
  WarnOnce(o, w);
  return DeclarationOf(w, e, nonce, o);
}

namespace {

// --no-isolation: the sampler runs here, with none of the protections.
Expected<RunOutcome> RunInProcess(const SamplerOpener& open, const std::string& sampler_arg,
                                  const Plan& plan, const std::vector<PlanItem>& items,
                                  const RunOptions& o,
                                  const std::function<void(const PlanItem&)>& finished) {
  auto s = open();
  if (!s.ok()) return s.error();
  RunOutcome outcome;
  for (const PlanItem& item : items) {
    std::vector<TestResult> r = properties::RunItem(**s, sampler_arg, plan, item, o.only_case);
    r.push_back(AbiResult(**s, sampler_arg, plan, item));
    outcome.results.insert(outcome.results.end(), r.begin(), r.end());
    finished(item);
  }
  return outcome;
}

}  // namespace

Expected<RunOutcome> RunPlan(const SamplerOpener& open, const std::string& sampler_arg,
                             const Plan& plan, const adapters::SamplerInfo& declared,
                             const RunOptions& o) {
  const std::vector<PlanItem> items = ShardItems(plan, o);
  const auto run_started = Clock::now();
  std::size_t done = 0;
  auto finished = [&](const PlanItem& item) {
    ++done;
    if (!o.progress) return;
    Progress p;
    p.done = done;
    p.total = items.size();
    p.item = &item;
    p.elapsed_s = Seconds(run_started);
    p.estimated_total_s =
        p.elapsed_s / static_cast<double>(done) * static_cast<double>(items.size());
    o.progress(p);
  };
  if (!o.isolate) return RunInProcess(open, sampler_arg, plan, items, o, finished);

  RunOutcome outcome;
  const json declared_json = InfoToJson(declared);
  const double backstop = Limits(o).Backstop();
  g_interrupt = 0;
  const InterruptScope interrupts(OnInterrupt);  // SIGINT / SIGTERM set g_interrupt
  std::vector<Job> running;  // destroyed on every way out: a Worker ends and reaps its tree
  std::size_t next = 0;
  std::string stop_reason;
  std::optional<Error> host_error;
  // Results come back in completion order; the plan index orders them (REPRO-1).
  std::vector<std::optional<std::vector<TestResult>>> by_index(items.size());
  while ((next < items.size() || !running.empty()) && stop_reason.empty() && !host_error) {
    while (next < items.size() && static_cast<int>(running.size()) < std::max(1, o.jobs)) {
      const std::string nonce = Nonce();
      auto spawned = Worker::Spawn(Limits(o), ItemBody(open, sampler_arg, plan, items[next],
                                                       declared_json, nonce, o.only_case));
      if (!spawned.ok()) {
        host_error = spawned.error();
        break;
      }
      running.push_back(Job{std::move(spawned).value(), items[next], next, nonce});
      ++next;
    }
    std::vector<pollfd> pfds;
    for (const Job& j : running) {
      pfds.push_back({j.worker.channel_fd(), POLLIN, 0});
      pfds.push_back({j.worker.output_fd(), POLLIN, 0});
    }
    poll(pfds.data(), pfds.size(), 50);
    stop_reason = StopReason(o, run_started, done, items.size(), &outcome);
    if (!stop_reason.empty()) break;
    for (std::size_t k = running.size(); k-- > 0;) {
      Job& job = running[k];
      job.worker.Drain();
      const bool exited = job.worker.Exited();
      if (!exited && job.worker.Seconds() <= backstop) continue;
      if (!exited) job.worker.Terminate();
      const WorkerEnd e = job.worker.Reap();
      WarnOnce(o, job.worker);
      by_index[job.index] =
          ItemResults(job, e, plan, sampler_arg, declared, declared_json, o, &host_error);
      const PlanItem item = job.item;
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      finished(item);
    }
  }
  // Stopped early (a signal, the time budget, a host error): nothing may outlive the run.
  for (Job& j : running) j.worker.Terminate();
  running.clear();
  if (host_error) return *host_error;
  for (const auto& r : by_index) {
    if (r) outcome.results.insert(outcome.results.end(), r->begin(), r->end());
  }
  if (!stop_reason.empty()) {
    outcome.complete = false;
    outcome.incomplete_reason = stop_reason;
  }
  return outcome;
}

namespace {

// The sample worker's message: its tokens or the sampler's error, as data.
Worker::Body SampleBody(const SamplerOpener& open, const json& declared_json,
                        const adapters::Batch& batch, uint64_t seed, uint64_t draws,
                        const std::string& nonce) {
  return [&open, &declared_json, &batch, seed, draws, nonce]() -> std::string {
    auto s = open();
    if (!s.ok()) {
      return Dump({{"nonce", nonce},
                   {"crash",
                    "the sampler could not be opened in the sample worker: " + s.error().message}});
    }
    const json info = json::parse(Dump(InfoToJson((*s)->info())));
    if (info != declared_json) {
      return Dump({{"nonce", nonce},
                   {"crash",
                    "get_info in the sample worker differs from what the describe step "
                    "saw"}});
    }
    auto tokens = (*s)->Sample(batch, seed, 0, draws);
    if (!tokens.ok()) {
      return Dump({{"nonce", nonce},
                   {"error",
                    {{"code", static_cast<int>(tokens.error().code)},
                     {"message", tokens.error().message}}}});
    }
    return Dump({{"nonce", nonce}, {"tokens", *tokens}});
  };
}

// The sample worker's outcome from how it ended and what it sent.
SampleOutcome SampleOutcomeOf(const Worker& w, const WorkerEnd& e, const std::string& nonce,
                              std::size_t want_tokens, const RunOptions& o) {
  SampleOutcome out;
  auto broken = [&](Status status, const std::string& why) {
    out.status = status;
    out.message = why;
    return out;
  };
  if (e.killed_by_us) {
    return broken(Status::kTimeout,
                  fmt::format("the worker did not finish within the wall-clock backstop of {} s{}",
                              Limits(o).Backstop(), w.Call()));
  }
  if (CpuExhausted(e, o)) {
    return broken(Status::kTimeout, fmt::format("the sampler used its {} s of CPU time{} "
                                                "(--item-timeout)",
                                                o.item_timeout_s, w.Call()));
  }
  if (const std::string death = w.Death(e, o.memory_limit_bytes); !death.empty()) {
    return broken(Status::kCrash, death);
  }
  try {
    const json j = json::parse(w.message());
    if (!j.is_object() || j.value("nonce", "") != nonce) throw std::runtime_error("nonce");
    if (j.contains("crash")) return broken(Status::kCrash, j.at("crash").get<std::string>());
    if (j.contains("error")) {
      const int code = j.at("error").at("code").get<int>();
      if (code < static_cast<int>(ErrorCode::kInvalidTemperature) ||
          code > static_cast<int>(ErrorCode::kInvalidLogitBias)) {
        throw std::runtime_error("error code");
      }
      out = broken(Status::kFail, j.at("error").at("message").get<std::string>());
      out.code = static_cast<ErrorCode>(code);
      return out;
    }
    out.tokens = j.at("tokens").get<std::vector<int64_t>>();
    if (out.tokens.size() != want_tokens) throw std::runtime_error("token count");
  } catch (const std::exception&) {
    return broken(Status::kCrash, "the sample worker's message is not the runner's; received " +
                                      Snippet(w.message()));
  }
  return out;
}

}  // namespace

Expected<SampleOutcome> SampleInWorker(const SamplerOpener& open,
                                       const adapters::SamplerInfo& declared,
                                       const adapters::Batch& batch, uint64_t seed, uint64_t draws,
                                       const RunOptions& o) {
  if (Error e = HostFileLimit(); e.code != ErrorCode::kOk) return e;
  const json declared_json = InfoToJson(declared);
  const std::string nonce = Nonce();
  auto spawned =
      Worker::Spawn(Limits(o), SampleBody(open, declared_json, batch, seed, draws, nonce));
  if (!spawned.ok()) return spawned.error();
  Worker w = std::move(spawned).value();
  const WorkerEnd e = w.RunToEnd(Limits(o).Backstop());
  WarnOnce(o, w);
  if (const std::string host = w.HostError(); !host.empty()) {
    return Error{ErrorCode::kInternal, "host error: " + host};
  }
  return SampleOutcomeOf(w, e, nonce, batch.rows.size() * draws, o);
}

}  // namespace sampcert::runner

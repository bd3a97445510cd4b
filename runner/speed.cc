#include "runner/speed.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "results/strict_json.h"
#include "runner/interrupt_scope.h"
#include "runner/seconds.h"
#include "runner/worker.h"
#include "runner/worker_message.h"

namespace sampcert::runner {
namespace {

using nlohmann::json;

// The fixed rows of the speed phase: `rows` rows of `vocab` logits k / 8 for k in [-128, 128]
// from a fixed stream, exact in every dtype (f16 and bf16 hold 8 significant bits at this range).
class SpeedRows {
 public:
  SpeedRows(DType dtype, std::size_t vocab, std::size_t rows) : dtype_(dtype), vocab_(vocab) {
    std::mt19937_64 gen(kSpeedSeed);
    const std::size_t n = vocab * rows;
    if (dtype == DType::kF32) {
      bits32_.resize(n);
    } else {
      bits16_.resize(n);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const float x = static_cast<float>(static_cast<int>(gen() % 257) - 128) / 8.0f;
      const uint32_t b = std::bit_cast<uint32_t>(x);
      if (dtype == DType::kF32) {
        bits32_[i] = b;
      } else if (dtype == DType::kBF16) {
        bits16_[i] = static_cast<uint16_t>(b >> 16);
      } else {  // f16: the same sign and significand, the exponent rebiased (all normal or zero)
        const uint32_t exponent = (b >> 23) & 0xffu;
        bits16_[i] = x == 0.0f ? 0
                               : static_cast<uint16_t>(((b >> 16) & 0x8000u) |
                                                       ((exponent - 127 + 15) << 10) |
                                                       ((b & 0x7fffffu) >> 13));
      }
    }
  }
  // Rows [first, first + count) with row ids from `first_id`.
  adapters::Batch Batch(std::size_t first, std::size_t count, uint64_t first_id) const {
    adapters::Batch b{dtype_, vocab_, {}};
    for (std::size_t r = first; r < first + count; ++r) {
      RowView v;
      v.dtype = dtype_;
      v.vocab = vocab_;
      v.logits = dtype_ == DType::kF32 ? static_cast<const void*>(bits32_.data() + r * vocab_)
                                       : static_cast<const void*>(bits16_.data() + r * vocab_);
      v.row_id = first_id + (r - first);
      b.rows.push_back(v);
    }
    return b;
  }

 private:
  DType dtype_;
  std::size_t vocab_;
  std::vector<uint32_t> bits32_;
  std::vector<uint16_t> bits16_;
};

DType SpeedDType(const adapters::SamplerInfo& info) {
  if (info.Has(SAMPCERT_CAP_F32)) return DType::kF32;
  return info.Has(SAMPCERT_CAP_F16) ? DType::kF16 : DType::kBF16;
}

// The shapes timed: (rows, timed calls), one row first.
std::vector<std::pair<std::size_t, uint64_t>> Shapes(const adapters::SamplerInfo& info,
                                                     const SpeedSetup& setup) {
  std::vector<std::pair<std::size_t, uint64_t>> shapes{{1, setup.calls}};
  if (info.Has(SAMPCERT_CAP_BATCH) && setup.batch > 1) {
    shapes.emplace_back(setup.batch, setup.batch_calls);
  }
  return shapes;
}

// The timings of every shape as the worker's message: {"shapes": [[ns, ...], ...]}, or the
// sampler's error {"error": message}.
json Timings(adapters::Sampler& s, const SpeedSetup& setup) {
  const adapters::SamplerInfo& info = s.info();
  const auto shapes = Shapes(info, setup);
  std::size_t rows = 0;
  for (const auto& [n, calls] : shapes) rows = std::max(rows, n);
  // Row 0 is the one-row calls' (row id 0); the batch is rows 1.. (row ids 1..).
  const SpeedRows data(SpeedDType(info), setup.vocab, rows + 1);
  json out = json::array();
  for (const auto& [n, calls] : shapes) {
    const adapters::Batch batch = n == 1 ? data.Batch(0, 1, 0) : data.Batch(1, n, 1);
    auto ns = s.TimedSampleCalls(batch, kSpeedSeed, setup.warmup, calls);
    if (!ns.ok()) {
      return {{"error", fmt::format("sample() of {} row{} returned {}: {}", n, n == 1 ? "" : "s",
                                    ErrorCodeName(ns.error().code), ns.error().message)}};
    }
    out.push_back(*ns);
  }
  return {{"shapes", out}};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The outcome from the timings a worker (or this process) sent.
SpeedOutcome FromTimings(const json& j, const adapters::SamplerInfo& info,
                         const SpeedSetup& setup) {
  SpeedOutcome out;
  out.dtype = SpeedDType(info);
  out.vocab = setup.vocab;
  if (j.contains("error")) {
    out.status = SpeedStatus::kError;
    out.message = j.at("error").get<std::string>();
    return out;
  }
  const auto shapes = Shapes(info, setup);
  const json& got = j.at("shapes");
  if (!got.is_array() || got.size() != shapes.size()) throw std::runtime_error("shapes");
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const std::vector<double> ns = got[k].get<std::vector<double>>();
    if (ns.size() != shapes[k].second ||
        !std::ranges::all_of(ns, [](double x) { return std::isfinite(x) && x >= 0; })) {
      throw std::runtime_error("timings");
    }
    out.shapes.push_back(
        {shapes[k].first, shapes[k].second, Median(ns) / static_cast<double>(shapes[k].first)});
  }
  return out;
}

SpeedOutcome Broken(SpeedStatus status, std::string why, const adapters::SamplerInfo& info,
                    const SpeedSetup& setup) {
  SpeedOutcome out;
  out.status = status;
  out.message = std::move(why);
  out.dtype = SpeedDType(info);
  out.vocab = setup.vocab;
  return out;
}

// The worker's outcome from how it ended and what it sent.
SpeedOutcome WorkerOutcome(const Worker& w, const WorkerEnd& e, const std::string& nonce,
                           const WorkerLimits& limits, const adapters::SamplerInfo& info,
                           const SpeedSetup& setup) {
  if (e.killed_by_us) {
    return Broken(SpeedStatus::kTimeout,
                  fmt::format("the speed worker did not finish within its wall-clock backstop of "
                              "{} s{}",
                              limits.Backstop(), w.Call()),
                  info, setup);
  }
  if (WIFSIGNALED(e.status) &&
      (WTERMSIG(e.status) == SIGXCPU ||
       (WTERMSIG(e.status) == SIGKILL && e.cpu_s >= std::ceil(limits.cpu_s)))) {
    return Broken(SpeedStatus::kTimeout,
                  fmt::format("the sampler used the speed phase's {} s of CPU time{}", limits.cpu_s,
                              w.Call()),
                  info, setup);
  }
  if (const std::string death = w.Death(e, limits.memory_bytes); !death.empty()) {
    return Broken(SpeedStatus::kCrash, death, info, setup);
  }
  try {
    json j;
    std::string why;
    if (!results::ParseJson(w.message(), results::JsonKind::kWorkerMessage, &j, &why) ||
        !j.is_object() || j.value("nonce", "") != nonce) {
      throw std::runtime_error("nonce");
    }
    if (j.contains("crash")) {
      return Broken(SpeedStatus::kCrash, j.at("crash").get<std::string>(), info, setup);
    }
    return FromTimings(j, info, setup);
  } catch (const std::exception&) {
    return Broken(
        SpeedStatus::kCrash,
        "the speed worker's message is not the runner's; received " + Snippet(w.message()), info,
        setup);
  }
}

// SIGINT / SIGTERM during the phase set g_speed_interrupt (runner/interrupt_scope.h).
volatile sig_atomic_t g_speed_interrupt = 0;
void OnSpeedInterrupt(int sig) { g_speed_interrupt = sig; }

// RunToEnd, and an interrupt ends the worker too; true when one did.
bool RunToEndOrInterrupt(Worker& w, double backstop_s, WorkerEnd* end) {
  bool interrupted = false;
  while (!w.Exited()) {
    pollfd p[2] = {{w.channel_fd(), POLLIN, 0}, {w.output_fd(), POLLIN, 0}};
    poll(p, 2, 50);
    w.Drain();
    interrupted = g_speed_interrupt != 0;
    if (interrupted || w.Seconds() > backstop_s) {
      w.Terminate();
      break;
    }
  }
  *end = w.Reap();
  return interrupted;
}

}  // namespace

const SpeedSetup* SpeedSetupFor(std::string_view profile) {
  for (const SpeedSetup& s : kSpeedSetups) {
    if (s.profile == profile) return &s;
  }
  return nullptr;
}

std::string_view SpeedStatusName(SpeedStatus s) {
  switch (s) {
    case SpeedStatus::kMeasured: return "measured";
    case SpeedStatus::kCrash: return "crash";
    case SpeedStatus::kTimeout: return "timeout";
    case SpeedStatus::kError: return "error";
  }
  return "crash";
}

Expected<SpeedOutcome> MeasureSpeed(const SamplerOpener& open,
                                    const adapters::SamplerInfo& declared, const SpeedSetup& setup,
                                    const RunOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  if (!o.isolate) {  // --no-isolation: here, unprotected, like the run
    auto s = open();
    if (!s.ok()) return Broken(SpeedStatus::kError, s.error().message, declared, setup);
    SpeedOutcome out = FromTimings(Timings(**s, setup), declared, setup);
    out.seconds = Seconds(started);
    return out;
  }
  g_speed_interrupt = 0;
  // Not without isolation: ^C must end a hung sampler.
  const InterruptScope interrupts(
      OnSpeedInterrupt);  // not without isolation: ^C must end a hung sampler
  WorkerLimits limits;
  limits.cpu_s = std::min(o.item_timeout_s, setup.cpu_s);
  limits.wall_backstop_s = 2 * limits.cpu_s + 10;
  limits.memory_bytes = o.memory_limit_bytes;
  const json declared_json = InfoToJson(declared);
  const std::string nonce = fmt::format("{:016x}", std::random_device{}());
  auto spawned = Worker::Spawn(limits, [&]() -> std::string {
    auto s = open();
    if (!s.ok()) {
      return DumpMessage(
          {{"nonce", nonce},
           {"crash", "the sampler could not be opened in the speed worker: " + s.error().message}});
    }
    // Round-tripped as the parent received the describe step's (invalid UTF-8 replaced).
    if (json::parse(DumpMessage(InfoToJson((*s)->info()))) != declared_json) {
      return DumpMessage({{"nonce", nonce},
                          {"crash",
                           "get_info in the speed worker differs from what the describe step "
                           "saw"}});
    }
    json message = Timings(**s, setup);
    message["nonce"] = nonce;
    return DumpMessage(message);
  });
  if (!spawned.ok()) return spawned.error();
  Worker w = std::move(spawned).value();
  WorkerEnd e;
  if (RunToEndOrInterrupt(w, limits.Backstop(), &e)) {
    SpeedOutcome out = Broken(SpeedStatus::kError, "interrupted", declared, setup);
    out.interrupted = true;
    return out;
  }
  if (const std::string host = w.HostError(); !host.empty()) {
    return Error{ErrorCode::kInternal, "host error: " + host};
  }
  SpeedOutcome out = WorkerOutcome(w, e, nonce, limits, declared, setup);
  out.seconds = Seconds(started);
  return out;
}

}  // namespace sampcert::runner

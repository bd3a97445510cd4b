// One worker: the process in which sampler code runs, for a describe step, a plan item or
// `sampcert sample`. Two processes, in fact (SPEC.md section 14):
//
//   tool ── supervisor (own session, child subreaper, no sampler code)
//              └── body (own process group; limits; system-call filter; runs the sampler)
//
// The body gets stdin from /dev/null, stdout and stderr on a pipe the tool reads (the last
// bytes are kept for the Crash note), never the tool's terminal, and its result on a private
// channel. When the body ends, however it ends, the supervisor records its status and kills and
// reaps every process still below it (being a subreaper, every descendant stays below it,
// whatever process group or session it moved to) before exiting. The supervisor ends the body
// when the tool asks (SIGTERM) or dies (its parent-death signal).
#ifndef SAMPCERT_RUNNER_WORKER_H_
#define SAMPCERT_RUNNER_WORKER_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "adapters/sampler.h"
#include "adapters/unique_fd.h"
#include "sampcert/error.h"

namespace sampcert::runner {

struct WorkerLimits {
  double cpu_s = 300;          // RLIMIT_CPU of the body (user + system, all threads)
  double wall_backstop_s = 0;  // 0: 4 x cpu_s + 30 s
  uint64_t memory_bytes = 0;   // RLIMIT_AS of the body (0: none)
  double Backstop() const { return wall_backstop_s > 0 ? wall_backstop_s : 4 * cpu_s + 30; }
};

// How a worker's body ended.
struct WorkerEnd {
  int status = 0;             // its wait status (the supervisor's, if the supervisor could not say)
  double cpu_s = 0;           // the CPU time it used
  bool killed_by_us = false;  // the tool ended it (backstop, budget, interrupt)
};

struct SharedPage;  // the call trace and status page the tool and the worker share

class Worker {
 public:
  // Returns the message the tool receives on the channel.
  using Body = std::function<std::string()>;

  // Starts a worker running `body` under `limits`. An error is a host failure only.
  static Expected<Worker> Spawn(const WorkerLimits& limits, const Body& body);

  Worker(Worker&& o) noexcept;
  Worker& operator=(Worker&& o) noexcept;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  ~Worker();  // a worker not reaped yet is ended and reaped: nothing outlives its owner

  // The two descriptors to poll for input (channel, output).
  int channel_fd() const { return channel_.get(); }
  int output_fd() const { return output_.get(); }
  double Seconds() const;  // since Spawn
  // Reads what both descriptors hold now, up to `max_bytes` from each.
  void Drain(std::size_t max_bytes = std::size_t{4} << 20);
  bool Exited() const;  // has the supervisor exited (not reaped yet)?
  // Asks the supervisor to end the body now; the end then counts as killed_by_us.
  void Terminate();
  // Waits for the supervisor (after Terminate: at most a grace period, then kills everything
  // below it itself), reads what is left and returns how the body ended.
  WorkerEnd Reap();
  // Drains until the worker exits or `backstop_s` have passed (then it is terminated); reaps.
  WorkerEnd RunToEnd(double backstop_s);

  // After Reap:
  const std::string& message() const { return message_; }
  std::string HostError() const;      // a host failure met before any sampler code ran
  std::string FilterProblem() const;  // why the system-call filter is off ("" when it is on)
  std::string Call() const;           // " during sample()", or "" outside any sampler call
  uint64_t Draws() const;
  std::string DrawsText() const;  // "after N draws in M sampler calls"
  // Why the body died, in words ("" if it exited 0 outside any sampler call), with the end of
  // what it printed.
  std::string Death(const WorkerEnd& e, uint64_t memory_limit) const;
  // The last bytes the body wrote to stdout / stderr, printable ("" when it wrote nothing).
  std::string OutputEnding() const;

 private:
  struct Unmap {
    void operator()(SharedPage* p) const;
  };
  Worker() = default;
  void Finish();  // ends and reaps a live worker (destructor, move assignment)

  pid_t pid_ = -1;  // the supervisor
  UniqueFd channel_, output_;
  std::unique_ptr<SharedPage, Unmap> shared_;
  std::string message_, printed_;  // the channel's bytes; the end of stdout + stderr
  std::chrono::steady_clock::time_point started_;
  bool terminated_ = false, reaped_ = false;
};

}  // namespace sampcert::runner

#endif  // SAMPCERT_RUNNER_WORKER_H_

// The sampler's speed beside its verdict (SPEC REPORT-3): after a whole run, one worker times the
// sampler's sample() on fixed rows, one row per call and (for a sampler declaring batch) a batch
// per call, and the report shows the median time per row. Informational only: the speed phase is
// no part of the plan, and nothing it measures reaches a status, the verdict or the exit code.
// The sampler is as untrusted here as in the run: a crash, a hang or an error in the speed phase
// is the speed section's status, and the run goes on.
#ifndef SAMPCERT_RUNNER_SPEED_H_
#define SAMPCERT_RUNNER_SPEED_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/sampler.h"
#include "runner/runner.h"

namespace sampcert::runner {

// The seed of every speed-phase call ("SPEED" in ASCII); a test plug-in tells the speed phase's
// calls from the certification's by it (tests/plugins/hostile_plugin.c).
inline constexpr uint64_t kSpeedSeed = 0x5350454544;

// How big a profile's speed phase is: one row per profile of properties::ProfileByName. How to
// add a row: name the profile and only what differs from the defaults (standard's sizes). Each
// field is read by MeasureSpeed; the rows are f32 (else the first dtype declared) with fixed
// logits in [-16, 16], T = 1, nothing else set.
struct SpeedSetup {
  std::string_view profile;    // the profile's name; a profile without a row measures nothing
  std::size_t vocab = 131072;  // tokens per row
  std::size_t batch = 64;      // rows of the batched calls (samplers declaring batch)
  uint64_t warmup = 2;         // untimed calls before each shape's timed ones
  uint64_t calls = 31;         // timed calls of one row
  uint64_t batch_calls = 11;   // timed calls of `batch` rows
  double cpu_s = 60;           // CPU seconds the phase's worker may use (at most --item-timeout)
};
// quick: well under a second for a fast sampler (the phase is a fork, 1 M logits and 20 calls).
inline constexpr SpeedSetup kSpeedSetups[] = {
    {.profile = "quick", .vocab = 32000, .batch = 32, .calls = 15, .batch_calls = 5, .cpu_s = 10},
    {.profile = "standard"},
    {.profile = "full"},
};
const SpeedSetup* SpeedSetupFor(std::string_view profile);  // nullptr: no row

enum class SpeedStatus {
  kMeasured,
  kCrash,    // the worker died (a signal, exit()) or sent what is not the runner's message
  kTimeout,  // past its CPU time or its wall-clock backstop
  kError,    // the sampler returned an error status
};
std::string_view SpeedStatusName(SpeedStatus s);  // "measured", "crash", "timeout", "error"

// One timed shape: `calls` calls of `rows` rows, one draw per row.
struct SpeedShape {
  std::size_t rows = 0;
  uint64_t calls = 0;
  double ns_per_row = 0;  // the median call's nanoseconds / rows
};

struct SpeedOutcome {
  SpeedStatus status = SpeedStatus::kMeasured;
  std::string message;  // why it was not measured ("" when it was)
  DType dtype = DType::kF32;
  std::size_t vocab = 0;
  std::vector<SpeedShape> shapes;  // when measured: one row, then the batch where declared
  double seconds = 0;              // the phase's wall-clock time, the worker's start included
  // SIGINT or SIGTERM came during the phase: the worker was ended, nothing was measured, and the
  // caller leaves the speed out (the run it follows is whole and already decided).
  bool interrupted = false;
};

// Times the sampler `declared` describes in a worker (in this process when !options.isolate) with
// a plan item's limits, its CPU time capped at setup.cpu_s; SIGINT / SIGTERM end it at once
// (`interrupted`). An error is a host failure only.
Expected<SpeedOutcome> MeasureSpeed(const SamplerOpener& open,
                                    const adapters::SamplerInfo& declared, const SpeedSetup& setup,
                                    const RunOptions& options);

}  // namespace sampcert::runner

#endif  // SAMPCERT_RUNNER_SPEED_H_

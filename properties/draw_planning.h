// What every family's draw planning shares (SPEC STAT-4, STAT-8): the smallest draw count with
// a wanted power, the binomial power checks of two-cell and tail tests, and the rounding of a
// stated requirement. Basic IEEE operations only: the plan must be the same on every machine
// (REPRO-1).
#ifndef SAMPCERT_PROPERTIES_DRAW_PLANNING_H_
#define SAMPCERT_PROPERTIES_DRAW_PLANNING_H_

#include <algorithm>
#include <cstdint>
#include <utility>

namespace sampcert::properties {

// Planned with a little to spare, so that the stated power (a bisection to 1e-12) never reads
// as just short of the requirement.
inline constexpr double kSlack = 0.999;

// The smallest n in [lo, hi] with ok(n), by doubling from lo and bisection (ok is taken as
// monotone in n); hi when none is.
template <typename Ok>
uint64_t SmallestDraws(uint64_t lo, uint64_t hi, Ok ok) {
  uint64_t good = lo;
  while (good < hi && !ok(good)) good = std::min(hi, good * 2);
  if (good >= hi) return hi;
  uint64_t bad = std::max<uint64_t>(lo, good / 2) - 1;
  if (good == lo) return lo;
  while (good - bad > 1) {
    const uint64_t mid = bad + (good - bad) / 2;
    (ok(mid) ? good : bad) = mid;
  }
  return good;
}

// Both directions of a shift d of p0 detected w.p. 0.9 by the exact binomial of n draws at
// level alpha (a direction leaving [0, 1] is not required).
bool BinomialDetects(uint64_t n, double p0, double d, double alpha);
// The same against an interval null [lo, hi] around p0 (a bf16 / fp16 class, TOL-7).
bool BinomialDetects(uint64_t n, double p0, double d, double alpha,
                     std::pair<double, double> interval);

// x rounded up to two significant digits (after a 1e-6 relative margin, so that the run's own
// computation of the same quantity never lands above it).
double RoundUpTwoDigits(double x);

// bf16 round-to-nearest-even of a probability (the precision probe's target alternative).
double RoundBf16(double p);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_DRAW_PLANNING_H_

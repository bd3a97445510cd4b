// Exact binomial tails for count-in-a-set tests (SPEC.md STAT-3 with two cells, TAIL-1), against
// a point or an interval null, their exact power and the smallest shift they detect.
#ifndef SAMPCERT_PROPERTIES_STATISTICS_BINOMIAL_H_
#define SAMPCERT_PROPERTIES_STATISTICS_BINOMIAL_H_

#include <cstdint>

namespace sampcert::properties {

// Two-sided exact binomial p-value of k successes in n trials of probability p (Boost.Math):
// twice the smaller tail, capped at 1. With k = 0 this is the zero-count test, 2 (1 - p)^n.
double BinomialTwoSided(uint64_t k, uint64_t n, double p);

// The exact binomial against an interval null p in [lo, hi] (the tolerance's AdmissibleMass):
// each side one-sided at its end of the interval, P(K <= k | lo) and P(K >= k | hi), and twice
// the smaller, capped at 1. lo == hi is BinomialTwoSided exactly.
double BinomialTwoSidedInterval(uint64_t k, uint64_t n, double lo, double hi);

// Exact power of BinomialTwoSided at level alpha when the true probability is p1, not p0
// (of BinomialTwoSidedInterval against [lo, hi] in the second form).
double BinomialPower(uint64_t n, double p0, double p1, double alpha);
double BinomialIntervalPower(uint64_t n, double lo, double hi, double p1, double alpha);

// The smallest shift d of a probability p0 such that the level-alpha exact binomial test of n
// draws detects p0 - d and p0 + d with probability 0.9 (a direction that leaves [0, 1] is not
// required); +inf when no shift is detectable. A two-cell test's detectable TV is this d.
// With an interval null [lo, hi] around p0 the test is BinomialTwoSidedInterval's; a direction
// in which even the far end of [0, 1] is not detected gives that direction's whole range.
double DetectableShiftBinomial(uint64_t n, double p0, double alpha);
double DetectableShiftBinomial(uint64_t n, double p0, double alpha, double lo, double hi);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_STATISTICS_BINOMIAL_H_

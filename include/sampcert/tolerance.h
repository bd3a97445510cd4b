// The tolerance table (SPEC.md section 7). Every allowed error of a reported quantity and every
// rounding band comes from here, one row per accuracy class; SPEC.md derives each formula.
#ifndef SAMPCERT_TOLERANCE_H_
#define SAMPCERT_TOLERANCE_H_

#include <cstddef>

#include "sampcert/policies.h"

namespace sampcert {

struct AccuracyParams {
  AccuracyClass accuracy;
  double u_acc;  // unit roundoff of the internal arithmetic (fp32 in every class: 2^-24)
  double u_out;  // unit roundoff of the reported probabilities (the class's type)
  // Error of one computed log-weight, in units of u_acc, beyond 3|l| (subtract, scale by a
  // rounded 1/T or log2(e)/T, multiply): a <= 2-ulp exp (4u) plus 2u of slack (TOL-1).
  double c_elem;
  // Higham-Mary probabilistic summation constant: a sum of n terms is within
  // lambda * sqrt(n) * u of exact with probability >= 1 - 2n exp(-lambda^2 / 2) (TOL-2).
  double lambda;
  // Relative errors are checked for probabilities at or above this floor ...
  double prob_floor;
  // ... and below it each probability may be off by this much in absolute terms (TOL-4).
  double abs_below_floor;
};

// The table: one row per accuracy class.
const AccuracyParams& AccuracyFor(AccuracyClass accuracy);

// sigma(l): bound on the error of a computed log-weight l = (x - max) / T <= 0 (TOL-1).
double LogWeightError(const AccuracyParams& a, double ell);

// zeta(n): relative error bound of an fp32 sum of n positive terms (TOL-2).
double SumError(const AccuracyParams& a, std::size_t n);

// Allowed relative error of one reported probability p >= prob_floor whose log-weight is ell,
// in a row of vocab tokens (TOL-3): sigma(l) + zeta(V) + u_acc + u_out.
double ProbabilityRelTolerance(const AccuracyParams& a, double ell, std::size_t vocab);

// Allowed total variation between reported and reference probabilities (TOL-5).
double TotalVariationTolerance(const AccuracyParams& a, std::size_t vocab);

}  // namespace sampcert

#endif  // SAMPCERT_TOLERANCE_H_

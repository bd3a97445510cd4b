// The tolerance table. SPEC.md section 7 derives every entry; change both together.
#include "sampcert/tolerance.h"

#include <cmath>

namespace sampcert {
namespace {

constexpr double kU32 = 0x1p-24;   // binary32 unit roundoff
constexpr double kUBF16 = 0x1p-8;  // bfloat16: 8 significant bits
constexpr double kUF16 = 0x1p-11;  // binary16: 11 significant bits

// Columns: class, u_acc, u_out, c_elem, lambda, prob_floor, abs_below_floor.
// - fp32 and bf16 reach 2^-126 in their normal range, so relative accuracy is asked down to
//   2^-100 (an fp32 exp of a log-weight >= -69 is normal even after division by V <= 2^26).
// - fp16's normal range ends at 2^-14; below it an fp16 probability is a multiple of 2^-24,
//   so it can be off by half of that, 2^-25, in absolute terms.
constexpr AccuracyParams kTable[] = {
    {AccuracyClass::kF32, kU32, kU32, 6.0, 8.0, 0x1p-100, 0x1p-100},
    {AccuracyClass::kBF16, kU32, kUBF16, 6.0, 8.0, 0x1p-100, 0x1p-100},
    {AccuracyClass::kF16, kU32, kUF16, 6.0, 8.0, 0x1p-14, 0x1p-25},
};

}  // namespace

const AccuracyParams& AccuracyFor(AccuracyClass accuracy) {
  for (const AccuracyParams& row : kTable) {
    if (row.accuracy == accuracy) return row;
  }
  return kTable[0];
}

double LogWeightError(const AccuracyParams& a, double ell) {
  return a.u_acc * (3.0 * std::fabs(ell) + a.c_elem);
}

double SumError(const AccuracyParams& a, std::size_t n) {
  return a.lambda * std::sqrt(static_cast<double>(n)) * a.u_acc;
}

double ProbabilityRelTolerance(const AccuracyParams& a, double ell, std::size_t vocab) {
  return LogWeightError(a, ell) + SumError(a, vocab) + a.u_acc + a.u_out;
}

double TotalVariationTolerance(const AccuracyParams& a, std::size_t vocab) {
  // The p-weighted mean of |l| is at most the entropy, at most ln V (TOL-5).
  const double n = static_cast<double>(vocab);
  const double mean_rel =
      a.u_acc * (2.0 * std::log(n) + a.c_elem) + SumError(a, vocab) + a.u_acc + a.u_out;
  const double tv = 0.5 * (mean_rel + n * a.abs_below_floor);
  return tv < 1.0 ? tv : 1.0;
}

}  // namespace sampcert

// The tolerant null (SPEC.md TOL-6, TOL-7, STAT-6): what the declared accuracy class admits, per
// token (NullTolerance) and as each test's null parameter (a set's mass interval, the G-test's
// chi-square radius on its cells, the score tests' mean shift).
#ifndef SAMPCERT_PROPERTIES_STATISTICS_TOLERANT_NULL_H_
#define SAMPCERT_PROPERTIES_STATISTICS_TOLERANT_NULL_H_

#include <span>
#include <utility>
#include <vector>

#include "properties/statistics/cells.h"
#include "sampcert/policies.h"

namespace sampcert::properties {

// The declared accuracy class in the null (TOL-7, STAT-6). For the bf16 and fp16 classes a
// sampler may draw from any q whose reported probabilities p^_i lie within e_i of the
// reference p_i (TOL-3 relative error, plus TOL-4's absolute error below the class's floor),
// renormalized as it draws (q = p^ / sum p^). NullTolerance returns e_i per token of `null`
// (log_weights: the reference's, for sigma(l) of TOL-1); it is empty for the fp32 class, whose
// null stays the reference itself (its TOL-5 deviation is far below any planned test's reach).
std::vector<double> NullTolerance(std::span<const long double> null,
                                  std::span<const long double> log_weights, AccuracyClass accuracy);

// The interval of a set's drawn mass q_R that the tolerance admits, for reference mass m,
// admissible error e_set of its reported mass and e_rest of the other tokens' (TOL-6 with the
// renormalization): [(m - e) / (m - e + 1 - m + e_rest), (m + e) / (m + e + 1 - m - e_rest)],
// clamped to [0, 1]. A point (m, m) when both errors are 0.
std::pair<double, double> AdmissibleMass(double m, double e_set, double e_rest);

// Per cell, the admissible error of its reported mass (the sum of its tokens' errors).
std::vector<double> CellErrors(const Cells& cells, std::span<const double> token_error);

// The chi-square-divergence radius of the tolerance on `cells`: an upper bound of
// sum_c (Q_c - P_c)^2 / P_c over every admissible q (each cell at the far end of its
// AdmissibleMass interval). 0 when token_error is empty.
double ChiSquareRadius(const Cells& cells, std::span<const double> token_error);

// The largest shift of the mean of y per draw that an admissible q can cause (the score tests'
// tolerance, per draw): sum_i e_i |y_i - E_p y| / (1 - sum_i e_i), since
// E_q y - E_p y = sum_i (p^_i - p_i)(y_i - E_p y) / sum p^. 0 when token_error is empty.
double ScoreMeanTolerance(std::span<const double> y, std::span<const long double> null,
                          std::span<const double> token_error);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_STATISTICS_TOLERANT_NULL_H_

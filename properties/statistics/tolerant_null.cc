#include "properties/statistics/tolerant_null.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sampcert/tolerance.h"

namespace sampcert::properties {

std::vector<double> NullTolerance(std::span<const long double> null,
                                  std::span<const long double> log_weights,
                                  AccuracyClass accuracy) {
  if (accuracy == AccuracyClass::kF32) return {};
  const AccuracyParams& acc = AccuracyFor(accuracy);
  const std::size_t v = null.size();
  std::vector<double> e(v, 0);
  for (std::size_t i = 0; i < v; ++i) {
    const double p = static_cast<double>(null[i]);
    if (!(p > 0)) continue;
    // sigma(l) of TOL-1 from the token's log-weight (0 where it is not finite: +inf ties).
    const double ell = i < log_weights.size() && std::isfinite(log_weights[i])
                           ? static_cast<double>(log_weights[i])
                           : 0.0;
    e[i] =
        p * ProbabilityRelTolerance(acc, ell, v) + (p < acc.prob_floor ? acc.abs_below_floor : 0);
  }
  return e;
}

std::pair<double, double> AdmissibleMass(double m, double e_set, double e_rest) {
  if (e_set == 0 && e_rest == 0) return {m, m};
  const double up = m + e_set, down = std::max(0.0, m - e_set);
  const double rest_low = std::max(0.0, 1 - m - e_rest), rest_high = 1 - m + e_rest;
  const double hi = up + rest_low > 0 ? up / (up + rest_low) : 1.0;
  const double lo = down > 0 ? down / (down + rest_high) : 0.0;
  return {std::clamp(lo, 0.0, m), std::clamp(hi, m, 1.0)};
}

std::vector<double> CellErrors(const Cells& cells, std::span<const double> token_error) {
  std::vector<double> e(cells.probability.size(), 0);
  for (std::size_t i = 0; i < cells.cell_of.size() && i < token_error.size(); ++i) {
    if (cells.cell_of[i] >= 0) e[static_cast<std::size_t>(cells.cell_of[i])] += token_error[i];
  }
  return e;
}

double ChiSquareRadius(const Cells& cells, std::span<const double> token_error) {
  if (token_error.empty() || cells.probability.size() < 2) return 0;
  const std::vector<double> e = CellErrors(cells, token_error);
  double total_p = 0, total_e = 0;
  for (std::size_t c = 0; c < e.size(); ++c) {
    total_p += cells.probability[c];
    total_e += e[c];
  }
  // Two upper bounds of the joint maximum; the smaller is the radius. Both only grow when cells
  // are split (Cauchy-Schwarz), so a bound on fine cells also bounds the coarser cells that
  // fewer draws make.
  // (1) With reported cell masses P_c + d_c (|d_c| <= E_c), s = sum d_c and Q_c = (P_c + d_c) /
  //     (1 + s): sum (Q_c - P_c)^2 / P_c = (sum d_c^2 / P_c - s^2) / (1 + s)^2
  //     <= sum E_c^2 / P_c / (1 - sum E_c)^2.
  // (2) Each term at its own worst end (AdmissibleMass), tighter when one cell's error is
  //     most of the total.
  double joint = 0, separate = 0;
  for (std::size_t c = 0; c < e.size(); ++c) {
    const double p = cells.probability[c] / total_p;
    if (!(p > 0)) continue;
    joint += e[c] * e[c] / p;
    const auto [lo, hi] = AdmissibleMass(p, e[c], total_e - e[c]);
    const double d = std::max(hi - p, p - lo);
    separate += d * d / p;
  }
  if (total_e < 1) joint /= (1 - total_e) * (1 - total_e);
  return total_e < 1 ? std::min(joint, separate) : separate;
}

double ScoreMeanTolerance(std::span<const double> y, std::span<const long double> null,
                          std::span<const double> token_error) {
  if (token_error.empty()) return 0;
  double mean = 0, total_e = 0, shift = 0;
  for (std::size_t i = 0; i < y.size() && i < null.size(); ++i) {
    mean += static_cast<double>(null[i]) * y[i];
  }
  for (std::size_t i = 0; i < y.size() && i < token_error.size(); ++i) {
    total_e += token_error[i];
    shift += token_error[i] * std::fabs(y[i] - mean);
  }
  return total_e < 1 ? shift / (1 - total_e) : std::numeric_limits<double>::infinity();
}

}  // namespace sampcert::properties

#include "properties/probability_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace sampcert::properties {

ProbabilityCheck CheckProbabilities(const ReferenceDistribution& ref, std::span<const double> got,
                                    const AccuracyParams& acc) {
  ProbabilityCheck c;
  const std::size_t v = ref.vocab;
  auto fail = [&c](const char* id, std::string what) {
    if (c.ok) {
      c.ok = false;
      c.property = id;
      c.failure = std::move(what);
    }
  };
  if (got.size() != v) {
    fail("PROB-1", fmt::format("{} probabilities for a vocabulary of {}", got.size(), v));
    return c;
  }
  std::vector<uint8_t> kept(v, 0);
  double sum = 0;
  for (std::size_t i = 0; i < v; ++i) {
    const double p = got[i];
    if (!std::isfinite(p) || p < 0 || p > 1) {
      fail("FIN-1", fmt::format("token {} has probability {}", i, p));
      return c;
    }
    sum += p;
    const KeepClass k = ref.keep[i];
    if (k == KeepClass::kOutsideSupport && p != 0) {
      fail("SUPP-1", fmt::format("token {} is outside the support but has probability {}", i, p));
    } else if (k == KeepClass::kMustDrop && p != 0) {
      fail("SUPP-2", fmt::format("token {} must be dropped but has probability {}", i, p));
    } else if (k == KeepClass::kMustKeep && p == 0 &&
               ref.probs[i] >= static_cast<long double>(acc.prob_floor)) {
      fail("SUPP-2", fmt::format("token {} must be kept (reference {:.6g}) but has probability 0",
                                 i, static_cast<double>(ref.probs[i])));
    }
    kept[i] = (p > 0 && k >= KeepClass::kMayKeep) || k == KeepClass::kMustKeep;
  }
  if (!c.ok) return c;
  const double norm_tol = SumError(acc, v) + acc.u_acc + acc.u_out;
  if (std::fabs(sum - 1) > norm_tol) {  // reported; the measurements below still run
    fail("NORM-1",
         fmt::format("probabilities sum to {:.17g} (allowed |sum - 1| <= {:.3g})", sum, norm_tol));
  }
  // Greedy ties under the `any` tie-break: any split of the mass over the winners is allowed,
  // and the support checks above are all there is to check.
  if (ref.any_greedy_ties) return c;
  // The null: the reference itself, or renormalized over what the sampler kept at a boundary.
  Expected<std::vector<long double>> null = ref.RenormalizedOver(kept);
  if (!null.ok()) {
    fail("SUPP-2", null.error().message);
    return c;
  }
  long double tv = 0;
  for (std::size_t i = 0; i < v; ++i) {
    const double want = static_cast<double>((*null)[i]);
    const double err = std::fabs(got[i] - want);
    tv += err;
    const double ell =
        std::isfinite(ref.log_weights[i]) ? static_cast<double>(ref.log_weights[i]) : 0.0;
    const double rel_tol = ProbabilityRelTolerance(acc, ell, v);
    const double allowed =
        want >= acc.prob_floor ? want * rel_tol : acc.abs_below_floor + want * rel_tol;
    const double ratio = allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0);
    if (ratio > c.worst_ratio) {
      c.worst_ratio = ratio;
      c.worst_token = i;
    }
    if (want >= acc.prob_floor) c.worst_rel_error = std::max(c.worst_rel_error, err / want);
    if (ratio > 1) {
      fail("PROB-1", fmt::format("token {}: probability {:.9g}, reference {:.9g} (relative "
                                 "error {:.3g}, allowed {:.3g})",
                                 i, got[i], want, want > 0 ? err / want : err,
                                 want > 0 ? allowed / want : allowed));
    }
  }
  c.total_variation = static_cast<double>(tv / 2);
  c.tv_tolerance = TotalVariationTolerance(acc, v);
  if (c.total_variation > c.tv_tolerance) {
    fail("PROB-1",
         fmt::format("total variation {:.3g} exceeds {:.3g}", c.total_variation, c.tv_tolerance));
  }
  return c;
}

}  // namespace sampcert::properties

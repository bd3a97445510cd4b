// The high-precision reference (SPEC.md sections 3-6): for one row, the exact distribution a
// correct sampler draws from, its support, and the must-keep / may-keep / must-drop sets at
// truncation boundaries. Probabilities are long double (x86-64's 64-bit significand).
#ifndef SAMPCERT_REFERENCE_DISTRIBUTION_H_
#define SAMPCERT_REFERENCE_DISTRIBUTION_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "sampcert/error.h"
#include "sampcert/policies.h"
#include "sampcert/row.h"

namespace sampcert {

// The reference's accuracy claim (2^-48 relative, 24 bits beyond fp32) rests on this.
static_assert(std::numeric_limits<long double>::digits == 64,
              "sampcert's reference needs x86-64's 80-bit long double");

// Where a token stands after truncation (SPEC BAND-1).
enum class KeepClass : uint8_t {
  kOutsideSupport = 0,  // masked, -inf, or NaN treated as masked: never drawn
  kMustDrop = 1,        // in the support, truncated away under every admissible rounding
  kMayKeep = 2,         // inside a rounding band or an exact tie that the policy leaves open
  kMustKeep = 3,        // kept under every admissible rounding
};

// Which formula produced the base distribution (SPEC SEM-2..SEM-4).
enum class Regime : uint8_t {
  kFinite = 0,       // p_i proportional to exp((x_i - M) / T)
  kGreedy = 1,       // T = 0 (or below the declared greedy threshold): the arg-max set
  kPositiveInf = 2,  // a +inf logit in the support: uniform over the +inf tokens
};

struct ReferenceDistribution {
  std::size_t vocab = 0;
  Regime regime = Regime::kFinite;
  // The temperature actually used: the row's, or 0 when the greedy threshold applied.
  float effective_temperature = 1.0f;
  bool greedy_threshold_applied = false;  // a declared deviation (POL-5): report as Warning
  long double max_logit = 0;              // M, the largest logit in the support

  // Base weights before truncation, relative to the largest: w_i = exp((x_i - M) / T) for
  // T > 0, 1 on the arg-max / +inf set in the limits, 0 outside the support. Max is 1.
  std::vector<long double> weights;
  // Log-weights l_i = (x_i - M) / T at the effective temperature (-inf outside the support,
  // 0 in the limit regimes on the winning set). Used for the rounding bands.
  std::vector<long double> log_weights;
  // The nominal distribution: exact semantics, exact ties resolved per policy (kExactAny
  // resolved to the lowest indices), normalized to 1 over the nominal kept set.
  std::vector<long double> probs;
  std::vector<KeepClass> keep;  // per token
  std::size_t support_size = 0;
  std::size_t kept_size = 0;  // tokens with probs > 0 in the nominal distribution
  // Greedy regime under the lowest-index tie-break: only the lowest-index kept winner is drawn.
  bool lowest_index_greedy = false;
  // Greedy regime under the `any` tie-break with two or more winners: every draw must be a
  // winner, and which one is unconstrained, so no distribution over them is tested. The
  // nominal (and RenormalizedOver) puts the mass on the lowest-index kept winner.
  bool any_greedy_ties = false;

  // The null at a boundary: the base weights renormalized over `kept` (vocab flags, nonzero =
  // kept). Tokens outside `kept` get 0. Returns an error if `kept` contains a must-drop or
  // outside-support token, misses a must-keep token, or has the wrong size.
  Expected<std::vector<long double>> RenormalizedOver(std::span<const uint8_t> kept) const;
};

// Computes the reference for one row under the declared policies. Never throws; invalid input
// comes back as an Error whose message names `row_index` and the cause (SPEC section 5).
Expected<ReferenceDistribution> ComputeReference(const RowView& row, const Policies& policies,
                                                 std::size_t row_index = 0);

// Exact decoding of one logit bit pattern (fp16 / bf16 / fp32 values are exact in long double).
long double DecodeLogit(DType dtype, const void* logits, std::size_t index);

// Total variation distance between two distributions of equal length.
long double TotalVariation(std::span<const long double> a, std::span<const long double> b);

}  // namespace sampcert

#endif  // SAMPCERT_REFERENCE_DISTRIBUTION_H_

// The reference of speculative-decoding verification (SPEC.md section 15): for one chain of k
// drafted tokens, drawn from draft distributions q_1..q_k, against the target rows of positions
// 1..k+1, the exact laws a correct verifier's output follows (Leviathan et al. 2023, Chen et
// al. 2023), in the reference's precision (long double, over the reference distributions of
// the target rows).
//
// - A drafted token d_j, once position j is reached, is accepted with probability
//   min(1, p_j(d_j) / q_j(d_j)).
// - On the first rejection, at position j, the emitted token follows the residual
//   r_j = (p_j - q_j)+ / sum_x (p_j(x) - q_j(x))+.
// - When all k are accepted, a bonus token is drawn from p_{k+1}.
// With d_j ~ q_j (the suite draws the drafts itself), position j is accepted with probability
// beta_j = sum_x min(p_j(x), q_j(x)), so the accepted count n has P(n = m) =
// beta_1 ... beta_m (1 - beta_{m+1}) (m < k) and P(n = k) = beta_1 ... beta_k, and the token
// emitted at every reached position j is distributed exactly as p_j, whatever q is.
#ifndef SAMPCERT_REFERENCE_VERIFY_H_
#define SAMPCERT_REFERENCE_VERIFY_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sampcert/error.h"
#include "sampcert/policies.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/row.h"

namespace sampcert {

// A draft row is a distribution when every entry is finite and >= 0 and they sum to 1 within
// this (a double sum of V terms rounds by at most V * 2^-53 relative; 1e-9 admits any draft
// computed in double and normalized, and refuses one normalized in fp16 or not at all).
inline constexpr double kDraftSumTolerance = 1e-9;

// VER-INV-1: the error of a draft row q (vocab entries) with its drafted token d, or kOk.
// `what` names the row in the message ("chain 3, draft 2"). ValidateDraftRow checks the row
// alone (a distribution), ValidateDrafted the token alone (in [0, V) with q(d) > 0);
// ValidateDraft is both.
Error ValidateDraftRow(std::span<const double> q, const char* what);
Error ValidateDrafted(std::span<const double> q, int64_t drafted, const char* what);
Error ValidateDraft(std::span<const double> q, int64_t drafted, const char* what);

struct ChainLaw {
  std::size_t k = 0;
  // p_1..p_{k+1}: the reference distributions of the target rows.
  std::vector<ReferenceDistribution> targets;
  // beta_j = sum_x min(p_j(x), q_j(x)), j = 1..k (index j - 1).
  std::vector<long double> acceptance;
  // r_j, normalized; all zero where p_j <= q_j everywhere (beta_j = 1: no rejection happens).
  // p_j(x) - q_j(x) within 2^-50 of p_j(x) (a double's rounding of p_j, the q of p = q) counts
  // as no residual mass.
  std::vector<std::vector<long double>> residual;
  // P(n = m), m = 0..k, with the drafts drawn from q.
  std::vector<long double> accepted_count;
};

// The laws of one chain: k + 1 target rows (validated as sample() would, under `policies`) and
// k draft rows of `vocab` probabilities each (row-major). Invalid input comes back as an Error
// (a target row's code, or kInvalidDraft for a draft that is no distribution).
Expected<ChainLaw> ComputeChainLaw(std::span<const RowView> targets, std::span<const double> drafts,
                                   const Policies& policies);

// The acceptance probability of drafted token d at one position: min(1, p(d) / q(d)).
long double AcceptanceProbability(std::span<const long double> p, std::span<const double> q,
                                  int64_t drafted);

}  // namespace sampcert

#endif  // SAMPCERT_REFERENCE_VERIFY_H_

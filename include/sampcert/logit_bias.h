// The logit bias and the minimum length of SPEC.md section 18, in the reference's precision.
// The reference applies the bias to the decoded logits first (BIAS-1: before the penalties) and
// leaves the banned tokens outside the support exactly as a zero mask byte does (BIAS-2,
// MINLEN-1).
#ifndef SAMPCERT_LOGIT_BIAS_H_
#define SAMPCERT_LOGIT_BIAS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sampcert/error.h"
#include "sampcert/row.h"

namespace sampcert {

// Per token, 1 where the row bans it: a bias of -inf (BIAS-2), or eos_token_id while the output
// is shorter than min_tokens (MINLEN-1). Empty when the row bans nothing. The row must be valid.
std::vector<uint8_t> BannedTokens(const RowView& row);

// Whether token i is allowed by the row's mask and not banned (`banned` from BannedTokens).
inline bool Allowed(const RowView& row, std::span<const uint8_t> banned, std::size_t i) {
  return row.Allowed(i) && (banned.empty() || banned[i] == 0);
}

// Adds the bias to x (the row's exact logits, vocab of them; BIAS-1, BIAS-3): a finite x_i
// becomes the exact x_i + b_i (a +inf bias makes it +inf); a -inf bias is a ban (BannedTokens),
// and an infinite or NaN x_i stays as it is (BIAS-2). Leaves x untouched without a bias.
void ApplyLogitBias(const RowView& row, std::span<long double> x);

// INV-9: the bias list (ids distinct and in [0, vocab), biases not NaN, no null list of nonzero
// length) and the minimum length's id (in [0, vocab) when min_tokens > 0). min_tokens' own range
// is the row table's.
Error ValidateLogitBias(const RowView& row, std::size_t row_index);

}  // namespace sampcert

#endif  // SAMPCERT_LOGIT_BIAS_H_

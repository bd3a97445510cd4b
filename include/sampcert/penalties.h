// The token-history penalties of SPEC.md section 16 (repetition, presence, frequency), in the
// reference's precision. The reference applies them to the decoded logits before anything else
// (PEN-1); tests use them to build the model of a sequence of calls.
#ifndef SAMPCERT_PENALTIES_H_
#define SAMPCERT_PENALTIES_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sampcert/policies.h"
#include "sampcert/row.h"

namespace sampcert {

// count_H(i) for every token of the row's vocabulary, over the history that `scope` names
// (PEN-IN-1): the output's tokens, or the prompt's and the output's. Ids must be valid (INV-8).
std::vector<int64_t> HistoryCounts(const RowView& row, PenaltyHistory scope);

// Rewrites x (the row's exact logits, vocab of them) into the penalized logits x' of PEN-2 and
// PEN-3, in long double. Leaves x untouched when no penalty is on (PEN-4), and never touches a
// NaN or an infinity. The row must be valid (ValidateRowParameters).
void ApplyPenalties(const RowView& row, const Policies& policies, std::span<long double> x);

}  // namespace sampcert

#endif  // SAMPCERT_PENALTIES_H_

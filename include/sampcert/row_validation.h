// Validation of one row against SPEC.md section 5, shared by the reference and the shipped
// samplers so that every invalid row gets the same code and message everywhere.
#ifndef SAMPCERT_ROW_VALIDATION_H_
#define SAMPCERT_ROW_VALIDATION_H_

#include <cstddef>

#include "sampcert/error.h"
#include "sampcert/policies.h"
#include "sampcert/row.h"

namespace sampcert {

// Returns an Error with code kOk when the row is valid; otherwise the first failing check of
// SPEC section 5, in its order, with a message naming `row_index`, the value and the valid
// range. Reads every logit (NaN and support checks): O(V).
Error ValidateRow(const RowView& row, const Policies& policies, std::size_t row_index);

// The part of ValidateRow that does not read the logits (policies, dtype, vocabulary size,
// temperature, top_k, top_p, min_p, the penalties and the history's ids: O(history)). A fast
// sampler runs this first and, only when its own pass over the logits meets a NaN or an empty
// support, ValidateRow for the exact message.
Error ValidateRowParameters(const RowView& row, const Policies& policies, std::size_t row_index);

}  // namespace sampcert

#endif  // SAMPCERT_ROW_VALIDATION_H_

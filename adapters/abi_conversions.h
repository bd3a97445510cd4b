// Conversions between the C ABI's plain structs and sampcert's C++ types, used on both sides
// of the boundary (built-in samplers and the host).
#ifndef SAMPCERT_ADAPTERS_ABI_CONVERSIONS_H_
#define SAMPCERT_ADAPTERS_ABI_CONVERSIONS_H_

#include <cstddef>
#include <cstdint>

#include "adapters/declarations.h"  // PoliciesToInfo, SamplerInfoFromAbi: the info struct
#include "sampcert/error.h"
#include "sampcert/policies.h"
#include "sampcert/row.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::adapters {

// The row r of a batch as a RowView (no copies; valid as long as the batch's buffers are).
RowView ToRowView(const sampcert_batch& batch, std::size_t r);
// One row of a batch of `dtype` and `vocab` as a RowView: the fields and buffers its struct_size
// covers (the history from MINOR 4's layout on), the rest at their defaults.
RowView ToRowView(const sampcert_row& row, int32_t dtype, uint64_t vocab);

// A batch header of this MINOR over `num_rows` rows, asking for no log-probabilities.
inline sampcert_batch AbiBatch(int32_t dtype, uint64_t vocab, uint64_t num_rows,
                               const sampcert_row* rows) {
  sampcert_batch b{};
  b.struct_size = SAMPCERT_BATCH_STRUCT_SIZE;
  b.dtype = dtype;
  b.vocab = vocab;
  b.num_rows = num_rows;
  b.rows = rows;
  return b;
}

// The log-probabilities a batch asks for (ABI MINOR 8, SPEC section 20): its logprob_mode, or
// SAMPCERT_LOGPROBS_NONE where its struct_size does not cover the MINOR 8 fields.
inline int32_t BatchLogprobMode(const sampcert_batch& batch) {
  return batch.struct_size >= offsetof(sampcert_batch, out_top_logprobs) + sizeof(double*)
             ? batch.logprob_mode
             : SAMPCERT_LOGPROBS_NONE;
}

// The capability bit a logprob mode needs (0 for an unknown mode).
constexpr uint32_t LogprobCapability(int32_t mode) {
  return mode == SAMPCERT_LOGPROBS_RAW         ? SAMPCERT_CAP_LOGPROBS_RAW
         : mode == SAMPCERT_LOGPROBS_SCALED    ? SAMPCERT_CAP_LOGPROBS_SCALED
         : mode == SAMPCERT_LOGPROBS_PROCESSED ? SAMPCERT_CAP_LOGPROBS_PROCESSED
                                               : 0u;
}

// A row's mask layout (ABI MINOR 7, SPEC section 19; the row's struct_size covers it): bytes
// with no packed_mask, or packed words with no `mask`, only with packed-mask (and mask) declared.
Error CheckMaskLayout(const sampcert_row& row, uint32_t capabilities);

// Writes `error` into the caller's struct (message truncated to fit, always NUL-terminated) and
// returns its code as the ABI status. Safe with a null `out`.
int32_t FillAbiError(const Error& error, sampcert_error* out);

// Reads the caller-visible error of a failed call.
Error FromAbiError(int32_t status, const sampcert_error& error);

// ABI-level shape checks every call makes before any semantics: struct sizes, dtype code,
// num_rows, null pointers, batch capability, and (MINOR 8) the log-probabilities asked for: a
// known mode the sampler declares, with its output buffers. Returns kOk or a kInvalidArgument /
// kUnsupported error. A batch of the MINOR 7 layout (40 bytes, an older host's) is accepted.
Error CheckBatchShape(const sampcert_batch* batch, uint32_t capabilities);

// The same for a verify() call (ABI MINOR 2), and the drafts' validity (VER-INV-1): k >= 1 and
// at most max_drafts, every pointer set, every draft row a distribution with its drafted token
// in its support. Errors name the chain in `row`; a draft that is no distribution is
// kInvalidDraft. The target rows' own validity is the sampling semantics' (SPEC section 5).
// Draft rows given as logits (MINOR 3) are checked for shape and declaration, and every drafted
// token for being in [0, V); whether q_j(d_j) > 0 is for the sampler to check once it has q_j.
Error CheckChainBatch(const sampcert_chain_batch* batch, uint32_t capabilities);

// The MINOR 3 fields of a chain batch, NULL where its struct_size does not cover them.
inline const sampcert_row* const* ChainDraftRows(const sampcert_chain_batch& batch) {
  return batch.struct_size >= offsetof(sampcert_chain_batch, draft_rows) + sizeof(void*)
             ? batch.draft_rows
             : nullptr;
}
inline double* ChainAcceptanceOut(const sampcert_chain_batch& batch) {
  return batch.struct_size >= offsetof(sampcert_chain_batch, out_acceptance) + sizeof(double*)
             ? batch.out_acceptance
             : nullptr;
}

}  // namespace sampcert::adapters

#endif  // SAMPCERT_ADAPTERS_ABI_CONVERSIONS_H_

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

// Writes `error` into the caller's struct (message truncated to fit, always NUL-terminated) and
// returns its code as the ABI status. Safe with a null `out`.
int32_t FillAbiError(const Error& error, sampcert_error* out);

// Reads the caller-visible error of a failed call.
Error FromAbiError(int32_t status, const sampcert_error& error);

// ABI-level shape checks every call makes before any semantics: struct sizes, dtype code,
// num_rows, null pointers, batch capability. Returns kOk or a kInvalidArgument /
// kUnsupported error.
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

#include "adapters/abi_conversions.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <string>

#include "adapters/row_fields.h"
#include "sampcert/reference_verify.h"

namespace sampcert::adapters {

Error CheckMaskLayout(const sampcert_row& row, uint32_t capabilities) {
  if (row.mask_layout == kMaskBytes) {
    if (row.packed_mask != nullptr) {
      return Error{ErrorCode::kInvalidArgument, "packed_mask is set but mask_layout is 0 (bytes)"};
    }
    return Error{};
  }
  if (row.mask_layout != kMaskPacked) {
    return Error{
        ErrorCode::kInvalidArgument,
        fmt::format("mask_layout is {} (must be 0, bytes, or 1, packed words)", row.mask_layout)};
  }
  if ((capabilities & SAMPCERT_CAP_PACKED_MASK) == 0) {
    return Error{ErrorCode::kUnsupported, "packed masks are not declared"};
  }
  if (row.packed_mask != nullptr && (capabilities & SAMPCERT_CAP_MASK) == 0) {
    return Error{ErrorCode::kUnsupported, "masks are not declared"};
  }
  if (row.mask != nullptr) {
    return Error{ErrorCode::kInvalidArgument, "mask_layout is 1 (packed words) but mask is set"};
  }
  return Error{};
}

RowView ToRowView(const sampcert_batch& batch, std::size_t r) {
  return ToRowView(batch.rows[r], batch.dtype, batch.vocab);
}

RowView ToRowView(const sampcert_row& row, int32_t dtype, uint64_t vocab) {
  RowView v;
  static_cast<RowParams&>(v) = RowParamsFromAbi(row);
  v.dtype = static_cast<DType>(dtype);
  v.logits = row.logits;
  v.vocab = static_cast<std::size_t>(vocab);
  v.mask = row.mask;
  // MINOR 4 (SPEC section 16): the history where the struct covers it (a MINOR 4 host's rows
  // are 104 bytes); the penalties are the table's fields, as the row holds them (a repetition
  // penalty of 0, a zeroed row's, is off: HasPenalties and every rule read it so).
  if (row.struct_size >= SAMPCERT_ROW_MINOR4_STRUCT_SIZE) {
    v.prompt_tokens = row.prompt_tokens;
    v.num_prompt_tokens = static_cast<std::size_t>(row.num_prompt_tokens);
    v.output_tokens = row.output_tokens;
    v.num_output_tokens = static_cast<std::size_t>(row.num_output_tokens);
  }
  // MINOR 6 (SPEC section 18): the bias where the struct covers it (min_tokens and eos_token_id
  // are the table's fields).
  if (row.struct_size >= SAMPCERT_ROW_MINOR6_STRUCT_SIZE) {
    v.bias_tokens = row.bias_tokens;
    v.bias_values = row.bias_values;
    v.num_bias = static_cast<std::size_t>(row.num_bias);
  }
  // MINOR 7 (SPEC section 19): a packed mask (mask_layout is the table's field).
  if (row.struct_size >= SAMPCERT_ROW_STRUCT_SIZE && v.mask_layout == kMaskPacked) {
    v.packed_mask = row.packed_mask;
    v.mask = nullptr;
  }
  return v;
}

int32_t FillAbiError(const Error& error, sampcert_error* out) {
  const auto code = static_cast<int32_t>(error.code);
  if (out == nullptr || out->struct_size < offsetof(sampcert_error, message) + 1) return code;
  out->code = code;
  out->row = error.row;
  const std::size_t capacity = std::min<std::size_t>(
      SAMPCERT_ERROR_MESSAGE_CAPACITY, out->struct_size - offsetof(sampcert_error, message));
  const std::size_t n = std::min(error.message.size(), capacity - 1);
  std::memcpy(out->message, error.message.data(), n);
  out->message[n] = '\0';
  return code;
}

Error FromAbiError(int32_t status, const sampcert_error& error) {
  Error e;
  e.code = static_cast<ErrorCode>(status);
  e.row = error.row;
  e.message.assign(error.message, strnlen(error.message, sizeof error.message));
  if (e.message.empty()) e.message = fmt::format("status {} without a message", status);
  return e;
}

Error CheckBatchShape(const sampcert_batch* batch, uint32_t capabilities) {
  auto bad = [](std::string what) { return Error{ErrorCode::kInvalidArgument, std::move(what)}; };
  if (batch == nullptr) return bad("batch is null");
  if (batch->struct_size < SAMPCERT_BATCH_MINOR7_STRUCT_SIZE) {
    return bad(fmt::format("batch struct_size {} is smaller than {}", batch->struct_size,
                           SAMPCERT_BATCH_MINOR7_STRUCT_SIZE));
  }
  // MINOR 8 (SPEC section 20): the log-probabilities asked for.
  if (const int32_t mode = BatchLogprobMode(*batch); mode != SAMPCERT_LOGPROBS_NONE) {
    const uint32_t cap = LogprobCapability(mode);
    if (cap == 0) {
      return bad(fmt::format("logprob_mode {} is not 1 (raw), 2 (scaled) or 3 (processed)", mode));
    }
    if ((capabilities & cap) == 0) {
      return Error{ErrorCode::kUnsupported,
                   fmt::format("log-probabilities in mode {} are not declared", mode)};
    }
    if (batch->out_logprobs == nullptr ||
        (batch->top_logprobs > 0 &&
         (batch->out_top_tokens == nullptr || batch->out_top_logprobs == nullptr))) {
      return bad("log-probabilities asked for without their output buffers");
    }
    if (batch->top_logprobs > batch->vocab) {
      return bad(fmt::format("top_logprobs {} is larger than the vocabulary ({})",
                             batch->top_logprobs, batch->vocab));
    }
  }
  if (batch->dtype < 0 || batch->dtype > 2) {
    return bad(fmt::format("unknown dtype code {}", batch->dtype));
  }
  const uint32_t dtype_cap = 1u << batch->dtype;  // SAMPCERT_CAP_F32 / F16 / BF16
  if ((capabilities & dtype_cap) == 0) {
    return Error{ErrorCode::kUnsupported, fmt::format("dtype {} is not declared",
                                                      DTypeName(static_cast<DType>(batch->dtype)))};
  }
  if (batch->num_rows == 0 || batch->rows == nullptr) return bad("batch has no rows");
  if (batch->num_rows > 1 && (capabilities & SAMPCERT_CAP_BATCH) == 0) {
    return Error{ErrorCode::kUnsupported, "batches of more than one row are not declared"};
  }
  for (uint64_t r = 0; r < batch->num_rows; ++r) {
    if (batch->rows[r].struct_size < SAMPCERT_ROW_STRUCT_SIZE) {
      Error e = bad(fmt::format("row {}: struct_size {} is smaller than {}", r,
                                batch->rows[r].struct_size, SAMPCERT_ROW_STRUCT_SIZE));
      e.row = static_cast<int64_t>(r);
      return e;
    }
    if (batch->rows[r].mask != nullptr && (capabilities & SAMPCERT_CAP_MASK) == 0) {
      Error e{ErrorCode::kUnsupported, fmt::format("row {}: masks are not declared", r),
              static_cast<int64_t>(r)};
      return e;
    }
    if (Error e = CheckMaskLayout(batch->rows[r], capabilities); e.code != ErrorCode::kOk) {
      e.message = fmt::format("row {}: {}", r, e.message);
      e.row = static_cast<int64_t>(r);
      return e;
    }
    if ((capabilities & SAMPCERT_CAP_PENALTIES) == 0 && ToRowView(*batch, r).HasPenalties()) {
      return Error{ErrorCode::kUnsupported, fmt::format("row {}: penalties are not declared", r),
                   static_cast<int64_t>(r)};
    }
    if ((capabilities & SAMPCERT_CAP_SEEDS) == 0 && batch->rows[r].seed_mode != kSeedCall) {
      return Error{ErrorCode::kUnsupported, fmt::format("row {}: seeds are not declared", r),
                   static_cast<int64_t>(r)};
    }
    if ((capabilities & SAMPCERT_CAP_LOGIT_BIAS) == 0 && batch->rows[r].num_bias != 0) {
      return Error{ErrorCode::kUnsupported, fmt::format("row {}: logit bias is not declared", r),
                   static_cast<int64_t>(r)};
    }
    if ((capabilities & SAMPCERT_CAP_MIN_TOKENS) == 0 && batch->rows[r].min_tokens != 0) {
      return Error{ErrorCode::kUnsupported,
                   fmt::format("row {}: a minimum length is not declared", r),
                   static_cast<int64_t>(r)};
    }
  }
  return Error{};
}

Error CheckChainBatch(const sampcert_chain_batch* batch, uint32_t capabilities) {
  auto bad = [](std::string what, int64_t chain = -1) {
    return Error{ErrorCode::kInvalidArgument, std::move(what), chain};
  };
  if (batch == nullptr) return bad("chain batch is null");
  if (batch->struct_size < SAMPCERT_CHAIN_BATCH_MINOR2_STRUCT_SIZE) {
    return bad(fmt::format("chain batch struct_size {} is smaller than {}", batch->struct_size,
                           SAMPCERT_CHAIN_BATCH_MINOR2_STRUCT_SIZE));
  }
  if (batch->dtype < 0 || batch->dtype > 2) {
    return bad(fmt::format("unknown dtype code {}", batch->dtype));
  }
  if ((capabilities & (1u << batch->dtype)) == 0) {
    return Error{ErrorCode::kUnsupported, fmt::format("dtype {} is not declared",
                                                      DTypeName(static_cast<DType>(batch->dtype)))};
  }
  if (batch->vocab == 0) return Error{ErrorCode::kEmptyVocab, "vocabulary size is 0"};
  if (batch->num_chains == 0 || batch->chains == nullptr) return bad("chain batch has no chains");
  const std::size_t v = batch->vocab;
  const sampcert_row* const* draft_rows = ChainDraftRows(*batch);
  if (draft_rows != nullptr) {
    if ((capabilities & SAMPCERT_CAP_VERIFY_DRAFT_LOGITS) == 0) {
      return Error{ErrorCode::kUnsupported, "draft rows given as logits are not declared"};
    }
    if (batch->draft_dtype < 0 || batch->draft_dtype > 2) {
      return bad(fmt::format("unknown draft dtype code {}", batch->draft_dtype));
    }
    if ((capabilities & (1u << batch->draft_dtype)) == 0) {
      return Error{ErrorCode::kUnsupported,
                   fmt::format("draft dtype {} is not declared",
                               DTypeName(static_cast<DType>(batch->draft_dtype)))};
    }
  }
  // Trials share their draft rows: each distinct row is checked as a distribution once.
  std::vector<const double*> checked_rows;
  for (uint64_t c = 0; c < batch->num_chains; ++c) {
    const sampcert_chain& ch = batch->chains[c];
    const auto ci = static_cast<int64_t>(c);
    if (ch.struct_size < SAMPCERT_CHAIN_STRUCT_SIZE) {
      return bad(fmt::format("chain {}: struct_size {} is smaller than {}", c, ch.struct_size,
                             SAMPCERT_CHAIN_STRUCT_SIZE),
                 ci);
    }
    if (ch.num_drafts == 0) return bad(fmt::format("chain {}: no drafted tokens (k = 0)", c), ci);
    if (ch.num_drafts > batch->max_drafts) {
      return bad(fmt::format("chain {}: k = {} drafted tokens, more than max_drafts = {}", c,
                             ch.num_drafts, batch->max_drafts),
                 ci);
    }
    const sampcert_row* drafts = draft_rows != nullptr ? draft_rows[c] : nullptr;
    if (ch.target_rows == nullptr || ch.draft_tokens == nullptr ||
        (draft_rows == nullptr ? ch.draft_probs == nullptr : drafts == nullptr)) {
      return bad(fmt::format("chain {}: a null target_rows, {} or draft_tokens", c,
                             draft_rows == nullptr ? "draft_probs" : "draft_rows"),
                 ci);
    }
    auto check_row = [&](const sampcert_row& r, const char* what, uint64_t j) -> Error {
      if (r.struct_size < SAMPCERT_ROW_STRUCT_SIZE) {
        return bad(fmt::format("chain {}, {} row {}: struct_size {} is smaller than {}", c, what,
                               j + 1, r.struct_size, SAMPCERT_ROW_STRUCT_SIZE),
                   ci);
      }
      if (r.logits == nullptr) {
        return bad(fmt::format("chain {}, {} row {}: null logits", c, what, j + 1), ci);
      }
      if (r.mask != nullptr && (capabilities & SAMPCERT_CAP_MASK) == 0) {
        return Error{ErrorCode::kUnsupported,
                     fmt::format("chain {}, {} row {}: masks are not declared", c, what, j + 1),
                     ci};
      }
      if (Error e = CheckMaskLayout(r, capabilities); e.code != ErrorCode::kOk) {
        e.message = fmt::format("chain {}, {} row {}: {}", c, what, j + 1, e.message);
        e.row = ci;
        return e;
      }
      return Error{};
    };
    for (uint64_t j = 0; j <= ch.num_drafts; ++j) {
      if (Error e = check_row(ch.target_rows[j], "target", j); e.code != ErrorCode::kOk) return e;
    }
    if (drafts != nullptr) {
      for (uint64_t j = 0; j < ch.num_drafts; ++j) {
        if (Error e = check_row(drafts[j], "draft", j); e.code != ErrorCode::kOk) return e;
        const int64_t d = ch.draft_tokens[j];
        if (d < 0 || static_cast<uint64_t>(d) >= v) {
          return Error{
              ErrorCode::kInvalidDraft,
              fmt::format("chain {}, draft {}: drafted token {} is not in [0, {})", c, j + 1, d, v),
              ci};
        }
      }
      continue;
    }
    for (uint64_t j = 0; j < ch.num_drafts; ++j) {
      const double* row = ch.draft_probs + j * v;
      const std::span<const double> q(row, v);
      const int64_t d = ch.draft_tokens[j];
      const bool row_known =
          std::find(checked_rows.begin(), checked_rows.end(), row) != checked_rows.end();
      const bool token_ok = d >= 0 && static_cast<uint64_t>(d) < v && row[d] > 0;
      if (row_known && token_ok) continue;
      const std::string what = fmt::format("chain {}, draft {}", c, j + 1);
      Error e = row_known ? ValidateDrafted(q, d, what.c_str()) : ValidateDraft(q, d, what.c_str());
      if (e.code != ErrorCode::kOk) {
        e.row = ci;
        return e;
      }
      if (checked_rows.size() < 64) checked_rows.push_back(row);
    }
  }
  return Error{};
}

}  // namespace sampcert::adapters

#include "sampcert/row_validation.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <type_traits>

// The row's table is header-only data (adapters/row_fields.h), read here so that each field's
// range is written once.
#include "adapters/row_fields.h"
#include "sampcert/logit_bias.h"
#include "sampcert/reference_distribution.h"

namespace sampcert {
namespace {

// The error, naming its row in the message and in the row-index field.
Error RowErrorAt(std::size_t row_index, ErrorCode code, const std::string& what) {
  return Error{code, fmt::format("row {}: {}", row_index, what), static_cast<int64_t>(row_index)};
}

// INV-8 (SPEC section 16): each history list (the penalties are the table's fields).
Error ValidateHistory(const RowView& row, std::size_t row_index) {
  auto bad = [row_index](const std::string& what) {
    return RowErrorAt(row_index, ErrorCode::kInvalidPenalty, what);
  };
  const struct {
    const char* name;
    const int64_t* ids;
    std::size_t n;
  } lists[] = {{"prompt_tokens", row.prompt_tokens, row.num_prompt_tokens},
               {"output_tokens", row.output_tokens, row.num_output_tokens}};
  for (const auto& list : lists) {
    if (list.n > 0 && list.ids == nullptr) {
      return bad(fmt::format("{} is null with {} tokens", list.name, list.n));
    }
    for (std::size_t j = 0; j < list.n; ++j) {
      const int64_t id = list.ids[j];
      if (id < 0 || static_cast<uint64_t>(id) >= row.vocab) {
        return bad(fmt::format("{}[{}] is {} (must be a token id in [0, {}))", list.name, j, id,
                               row.vocab));
      }
    }
  }
  return Error{};
}

}  // namespace

Error ValidateRowParameters(const RowView& row, const Policies& pol, std::size_t row_index) {
  if (std::string why = ValidatePolicies(pol); !why.empty()) {
    return RowErrorAt(row_index, ErrorCode::kInvalidArgument, "invalid policies: " + why);
  }
  const int dtype_code = static_cast<int>(row.dtype);
  if (dtype_code < 0 || dtype_code > 2) {
    return RowErrorAt(row_index, ErrorCode::kInvalidArgument,
                      fmt::format("unknown dtype code {}", dtype_code));
  }
  if (row.vocab == 0 || row.logits == nullptr) {
    return RowErrorAt(row_index, ErrorCode::kEmptyVocab,
                      row.vocab == 0 ? "vocabulary size is 0" : "logits buffer is null");
  }
  // The row's fields, in their table's order (SPEC section 5's): each in its range.
  for (const adapters::RowField& f : adapters::kRowFields) {
    if (adapters::InRange(f, row)) continue;
    const std::string value = adapters::VisitRowField(f, row, [](const auto& v) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(v)>, float>) {
        if (std::isnan(v)) return std::string("NaN");
      }
      return fmt::format("{}", v);
    });
    return RowErrorAt(row_index, f.invalid,
                      fmt::format("{} is {} ({})", f.name, value, f.requirement));
  }
  if (Error e = ValidateHistory(row, row_index); e.code != ErrorCode::kOk) return e;
  return ValidateLogitBias(row, row_index);  // INV-9, after INV-8
}

Error ValidateRow(const RowView& row, const Policies& pol, std::size_t row_index) {
  if (Error e = ValidateRowParameters(row, pol, row_index); e.code != ErrorCode::kOk) return e;
  // PEN-POL-1: a rule the sampler declares it does not have (history `none`) cannot be asked of
  // it: the row is NotSupported, as one needing an undeclared capability is.
  const bool repetition = row.repetition_penalty != 1.0f && row.repetition_penalty != 0.0f;
  if (repetition && pol.repetition_history == PenaltyHistory::kNone) {
    return RowErrorAt(row_index, ErrorCode::kUnsupported,
                      fmt::format("repetition penalty {} asked of a sampler that declares no "
                                  "repetition penalty (repetition_history none)",
                                  row.repetition_penalty));
  }
  if ((row.presence_penalty != 0.0f || row.frequency_penalty != 0.0f) &&
      pol.additive_history == PenaltyHistory::kNone) {
    return RowErrorAt(row_index, ErrorCode::kUnsupported,
                      fmt::format("presence penalty {} and frequency penalty {} asked of a sampler "
                                  "that declares no presence or frequency penalty "
                                  "(additive_history none)",
                                  row.presence_penalty, row.frequency_penalty));
  }
  std::size_t masked = 0, banned = 0, neg_inf = 0, nan_masked = 0, support = 0;
  const std::vector<uint8_t> bans = BannedTokens(row);  // BIAS-2, MINLEN-1: banned as if masked
  for (std::size_t i = 0; i < row.vocab; ++i) {
    if (!row.Allowed(i)) {  // the mask's byte, or its packed bit (SPEC section 19)
      ++masked;
      continue;
    }
    if (!bans.empty() && bans[i] != 0) {
      ++banned;
      continue;
    }
    const long double x = DecodeLogit(row.dtype, row.logits, i);
    if (std::isnan(x)) {
      if (pol.nan_policy == NanPolicy::kError) {
        return RowErrorAt(row_index, ErrorCode::kNanLogit,
                          fmt::format("logit {} is NaN and allowed (NaN policy: error)", i));
      }
      ++nan_masked;
    } else if (x == -INFINITY) {
      ++neg_inf;
    } else {
      ++support;
    }
  }
  if (support == 0) {
    return RowErrorAt(row_index, ErrorCode::kEmptySupport,
                      banned == 0
                          ? fmt::format("empty support: of {} tokens, {} masked, {} -inf, {} NaN "
                                        "treated as masked",
                                        row.vocab, masked, neg_inf, nan_masked)
                          : fmt::format("empty support: of {} tokens, {} masked, {} banned (a -inf "
                                        "bias or the minimum length), {} -inf, {} NaN treated as "
                                        "masked",
                                        row.vocab, masked, banned, neg_inf, nan_masked));
  }
  return Error{};
}

}  // namespace sampcert

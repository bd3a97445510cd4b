// BIAS-1..BIAS-3 and MINLEN-1 in long double. Every binary32 bias and every f32/f16/bf16 logit
// is exact in long double; their sum is rounded once (2^-64 relative, far inside REF-1's
// budget) and never overflows (long double's range covers 2 * FLT_MAX).
#include "sampcert/logit_bias.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sampcert {

std::vector<uint8_t> BannedTokens(const RowView& row) {
  std::vector<uint8_t> banned;
  auto ban = [&](std::size_t i) {
    if (banned.empty()) banned.assign(row.vocab, 0);
    banned[i] = 1;
  };
  for (std::size_t j = 0; j < row.num_bias; ++j) {
    if (row.bias_values[j] == -std::numeric_limits<float>::infinity()) {
      ban(static_cast<std::size_t>(row.bias_tokens[j]));
    }
  }
  if (row.EosBanned(row.num_output_tokens)) ban(static_cast<std::size_t>(row.eos_token_id));
  return banned;
}

void ApplyLogitBias(const RowView& row, std::span<long double> x) {
  for (std::size_t j = 0; j < row.num_bias; ++j) {
    const float b = row.bias_values[j];
    long double& xi = x[static_cast<std::size_t>(row.bias_tokens[j])];
    if (!std::isfinite(xi) || b == -std::numeric_limits<float>::infinity()) continue;
    xi += static_cast<long double>(b);  // +inf for a +inf bias: SEM-4's limit
  }
}

Error ValidateLogitBias(const RowView& row, std::size_t row_index) {
  auto bad = [row_index](const std::string& what) {
    return Error{ErrorCode::kInvalidLogitBias, fmt::format("row {}: {}", row_index, what),
                 static_cast<int64_t>(row_index)};
  };
  if (row.num_bias > 0 && (row.bias_tokens == nullptr || row.bias_values == nullptr)) {
    return bad(fmt::format("{} is null with {} entries",
                           row.bias_tokens == nullptr ? "bias_tokens" : "bias_values",
                           row.num_bias));
  }
  for (std::size_t j = 0; j < row.num_bias; ++j) {
    const int64_t id = row.bias_tokens[j];
    if (id < 0 || static_cast<uint64_t>(id) >= row.vocab) {
      return bad(
          fmt::format("bias_tokens[{}] is {} (must be a token id in [0, {}))", j, id, row.vocab));
    }
    if (std::isnan(row.bias_values[j])) {
      return bad(
          fmt::format("bias_values[{}] (token {}) is NaN (a bias is any binary32 but "
                      "NaN; -inf bans the token)",
                      j, id));
    }
  }
  if (row.num_bias > 1) {
    std::vector<std::pair<int64_t, std::size_t>> ids(row.num_bias);
    for (std::size_t j = 0; j < row.num_bias; ++j) ids[j] = {row.bias_tokens[j], j};
    std::sort(ids.begin(), ids.end());
    for (std::size_t j = 1; j < ids.size(); ++j) {
      if (ids[j].first == ids[j - 1].first) {
        return bad(
            fmt::format("bias_tokens[{}] and bias_tokens[{}] are both token {} (each "
                        "token has one bias)",
                        ids[j - 1].second, ids[j].second, ids[j].first));
      }
    }
  }
  if (row.min_tokens > 0 &&
      (row.eos_token_id < 0 || static_cast<uint64_t>(row.eos_token_id) >= row.vocab)) {
    return bad(
        fmt::format("eos_token_id is {} (must be a token id in [0, {}) while min_tokens "
                    "is {})",
                    row.eos_token_id, row.vocab, row.min_tokens));
  }
  return Error{};
}

}  // namespace sampcert

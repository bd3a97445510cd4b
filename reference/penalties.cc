// PEN-2 and PEN-3 in long double. Compiled like the rest of the reference (-ffp-contract=off):
// x - alpha * c - beta is rounded as written, twice, each a 2^-64 relative rounding (PEN-5).
#include "sampcert/penalties.h"

#include <cmath>

namespace sampcert {

std::vector<int64_t> HistoryCounts(const RowView& row, PenaltyHistory scope) {
  std::vector<int64_t> count(row.vocab, 0);
  auto add = [&count](const int64_t* ids, std::size_t n) {
    for (std::size_t j = 0; j < n; ++j) ++count[static_cast<std::size_t>(ids[j])];
  };
  if (scope == PenaltyHistory::kPromptAndOutput) add(row.prompt_tokens, row.num_prompt_tokens);
  add(row.output_tokens, row.num_output_tokens);
  return count;
}

void ApplyPenalties(const RowView& row, const Policies& policies, std::span<long double> x) {
  if (!row.HasPenalties()) return;  // PEN-4: bit for bit the row without a history
  const float r = row.repetition_penalty;
  if (r != 1.0f && r != 0.0f) {
    const std::vector<int64_t> count = HistoryCounts(row, policies.repetition_history);
    const long double rl = r;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (count[i] == 0 || !std::isfinite(x[i])) continue;
      // The sign rule: a seen token becomes less likely for r > 1 whatever its sign (PEN-2).
      x[i] = x[i] > 0 ? x[i] / rl : x[i] * rl;
    }
  }
  if (row.presence_penalty != 0.0f || row.frequency_penalty != 0.0f) {
    const std::vector<int64_t> count = HistoryCounts(row, policies.additive_history);
    const long double alpha = row.frequency_penalty;
    const long double beta = row.presence_penalty;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (count[i] == 0 || !std::isfinite(x[i])) continue;
      x[i] = x[i] - alpha * static_cast<long double>(count[i]) - beta;
    }
  }
}

}  // namespace sampcert

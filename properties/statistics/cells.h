// The cells of the G-test (SPEC.md STAT-2), fixed from the reference probabilities before
// drawing.
#ifndef SAMPCERT_PROPERTIES_STATISTICS_CELLS_H_
#define SAMPCERT_PROPERTIES_STATISTICS_CELLS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sampcert::properties {

// Cells fixed before drawing: tokens with n * p >= min_expected are cells of their own; the
// other tokens are pooled by probability band floor(-log2 p); bands below min_expected are merged
// with the next band, and a short remainder into the last cell. Tokens of probability 0 belong
// to no cell (-1): drawing one is an exact failure, not a statistic.
struct Cells {
  std::vector<int32_t> cell_of;     // per token, -1 for probability 0
  std::vector<double> probability;  // per cell
  std::vector<std::string> label;   // per cell: "token 17" or "band 2^-12..2^-9"
  std::vector<int64_t> token;       // per cell: its one token, or -1 for a band (MakeCells)
};
// At most max_token_cells tokens get cells of their own (the most probable ones), so that the
// degrees of freedom, and with them the draws needed for a given power, stay bounded.
Cells MakeCells(std::span<const long double> probs, uint64_t draws, double min_expected = 50,
                std::size_t max_token_cells = 64);

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_STATISTICS_CELLS_H_

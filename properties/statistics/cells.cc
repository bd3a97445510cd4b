#include "properties/statistics/cells.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>

namespace sampcert::properties {

Cells MakeCells(std::span<const long double> probs, uint64_t draws, double min_expected,
                std::size_t max_token_cells) {
  Cells c;
  const std::size_t v = probs.size();
  c.cell_of.assign(v, -1);
  const double n = static_cast<double>(draws);
  std::map<int, std::vector<std::size_t>> bands;  // band -> tokens, bands in increasing order
  // The probability above which a token is a cell of its own: n p >= min_expected, and among
  // the max_token_cells most probable.
  std::vector<double> sorted;
  for (long double p : probs) {
    if (p > 0) sorted.push_back(static_cast<double>(p));
  }
  double own_cell_above = 0;
  if (sorted.size() > max_token_cells) {
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(max_token_cells),
                     sorted.end(), std::greater<double>());
    own_cell_above = sorted[max_token_cells];
  }
  for (std::size_t i = 0; i < v; ++i) {
    const double p = static_cast<double>(probs[i]);
    if (!(p > 0)) continue;
    if (n * p >= min_expected && p > own_cell_above) {
      c.cell_of[i] = static_cast<int32_t>(c.probability.size());
      c.probability.push_back(p);
      c.label.push_back(fmt::format("token {}", i));
      c.token.push_back(static_cast<int64_t>(i));
    } else {
      // floor(-log2 p) exactly, from the binary exponent (p = m 2^e, m in [0.5, 1)): a cell
      // boundary must not depend on libm's last bit.
      int e = 0;
      const double m = std::frexp(p, &e);
      bands[m == 0.5 ? 1 - e : -e].push_back(i);
    }
  }
  // Pool bands from the most probable down; close a cell once it reaches min_expected.
  std::vector<std::size_t> pending;
  double pending_p = 0;
  int first_band = 0, last_band = 0;
  for (const auto& [band, tokens] : bands) {
    if (pending.empty()) first_band = band;
    last_band = band;
    for (std::size_t t : tokens) {
      pending.push_back(t);
      pending_p += static_cast<double>(probs[t]);
    }
    if (n * pending_p >= min_expected) {
      for (std::size_t t : pending) c.cell_of[t] = static_cast<int32_t>(c.probability.size());
      c.probability.push_back(pending_p);
      c.label.push_back(
          fmt::format("band 2^-{}..2^-{} ({} tokens)", last_band + 1, first_band, pending.size()));
      c.token.push_back(-1);
      pending.clear();
      pending_p = 0;
    }
  }
  if (!pending.empty()) {  // a short remainder joins the last cell (or stands alone)
    if (c.probability.empty()) {
      c.probability.push_back(0);
      c.label.push_back("remainder");
      c.token.push_back(-1);
    }
    const auto last = static_cast<int32_t>(c.probability.size() - 1);
    for (std::size_t t : pending) c.cell_of[t] = last;
    c.probability.back() += pending_p;
    c.label.back() += fmt::format(" + {} tail tokens", pending.size());
    c.token.back() = -1;
  }
  // One cell but more than one token: the most probable token against the rest, tested by the
  // exact binomial (no expected-count floor is needed there). A row that is almost a point mass
  // still has a test with power against moving mass off its top token.
  if (c.probability.size() == 1 && sorted.size() > 1) {
    std::size_t top = 0;
    for (std::size_t i = 1; i < v; ++i) {
      if (probs[i] > probs[top]) top = i;
    }
    c.cell_of[top] = 0;
    c.probability = {static_cast<double>(probs[top]), 0};
    c.label = {fmt::format("token {}", top), "the other tokens"};
    c.token = {static_cast<int64_t>(top), -1};
    for (std::size_t i = 0; i < v; ++i) {
      if (i != top && probs[i] > 0) {
        c.cell_of[i] = 1;
        c.probability[1] += static_cast<double>(probs[i]);
      }
    }
  }
  return c;
}

}  // namespace sampcert::properties

// The exact reference sampler: the canonical draw (canonical_draw.h) applied to a reference
// distribution in long double. Reproducible and independent of batching: a row's tokens depend
// only on (seed, row id, draw index) and the row itself.
#ifndef SAMPCERT_REFERENCE_SAMPLER_H_
#define SAMPCERT_REFERENCE_SAMPLER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sampcert {

class ReferenceSampler {
 public:
  // `probs` is a distribution over the row's tokens (for instance
  // ReferenceDistribution::probs); copied into a cumulative table, so it need not outlive this.
  explicit ReferenceSampler(std::span<const long double> probs);

  // Inverse CDF (DRAW-3): the smallest index i with u < C_i, where C_i is the cumulative
  // probability up to and including i in index order. Never returns a zero-probability token:
  // if rounding leaves C_last <= u, the last token with positive probability is returned.
  int64_t TokenFor(long double u) const;

  // The token for draw `draw_index` of row `row_id` under `seed`.
  int64_t Draw(uint64_t seed, uint64_t row_id, uint64_t draw_index) const;

  // out[j] = Draw(seed, row_id, first_draw + j).
  void Draw(uint64_t seed, uint64_t row_id, uint64_t first_draw, std::span<int64_t> out) const;

 private:
  std::vector<long double> cdf_;  // compensated cumulative sums, one per token
  int64_t last_positive_ = -1;
};

}  // namespace sampcert

#endif  // SAMPCERT_REFERENCE_SAMPLER_H_

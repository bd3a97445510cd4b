#include "sampcert/reference_sampler.h"

#include <algorithm>

#include "reference/compensated_sum.h"
#include "sampcert/canonical_draw.h"

namespace sampcert {

ReferenceSampler::ReferenceSampler(std::span<const long double> probs) {
  cdf_.reserve(probs.size());
  internal::CompensatedSum run;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    run.Add(probs[i]);
    cdf_.push_back(run.Total());
    if (probs[i] > 0) last_positive_ = static_cast<int64_t>(i);
  }
}

int64_t ReferenceSampler::TokenFor(long double u) const {
  // First i with C_i > u. A zero-probability token repeats its predecessor's C, so it is never
  // the first to exceed u.
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  if (it == cdf_.end()) return last_positive_;
  return static_cast<int64_t>(it - cdf_.begin());
}

int64_t ReferenceSampler::Draw(uint64_t seed, uint64_t row_id, uint64_t draw_index) const {
  return TokenFor(CanonicalUniform(seed, row_id, draw_index));
}

void ReferenceSampler::Draw(uint64_t seed, uint64_t row_id, uint64_t first_draw,
                            std::span<int64_t> out) const {
  for (std::size_t j = 0; j < out.size(); ++j) out[j] = Draw(seed, row_id, first_draw + j);
}

}  // namespace sampcert

// The shape naive and floor_fix share: per row, float probabilities and their float cumulative
// sums; a draw is the first index whose cumulative sum exceeds u times the total (upper_bound),
// and past the end, the last index, whatever its probability (the bug both inherit from
// textbook multinomials). Derived provides:
//   Error Row(const sampcert_batch&, std::size_t r);  // fills probs_ and cdf_
//   static float Target(double u, float total);        // how it scales the uniform
#ifndef SAMPCERT_IMPLS_COMMON_FLOAT_CDF_SAMPLER_H_
#define SAMPCERT_IMPLS_COMMON_FLOAT_CDF_SAMPLER_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sampcert/canonical_draw.h"
#include "sampcert/error.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::impls {

template <typename Derived>
class FloatCdfSampler {
 public:
  Error Probabilities(const sampcert_batch& batch, double* out) {
    const std::size_t v = static_cast<std::size_t>(batch.vocab);
    for (std::size_t r = 0; r < batch.num_rows; ++r) {
      if (Error e = self().Row(batch, r); e.code != ErrorCode::kOk) return e;
      std::copy(probs_.begin(), probs_.end(), out + r * v);
    }
    return Error{};
  }

  Error Sample(const sampcert_batch& batch, uint64_t seed, uint64_t first_draw,
               uint64_t draws_per_row, int64_t* out) {
    for (std::size_t r = 0; r < batch.num_rows; ++r) {
      if (Error e = self().Row(batch, r); e.code != ErrorCode::kOk) return e;
      for (uint64_t j = 0; j < draws_per_row; ++j) {
        const double u = CanonicalUniform(seed, batch.rows[r].row_id, first_draw + j);
        const float target = Derived::Target(u, cdf_.back());
        const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), target);
        out[r * draws_per_row + j] =
            it == cdf_.end() ? static_cast<int64_t>(cdf_.size() - 1) : it - cdf_.begin();
      }
    }
    return Error{};
  }

 protected:
  std::vector<float> probs_;
  std::vector<float> cdf_;

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};

}  // namespace sampcert::impls

#endif  // SAMPCERT_IMPLS_COMMON_FLOAT_CDF_SAMPLER_H_

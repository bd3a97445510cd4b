// floor_fix: the popular published "fix" for half-precision sampling, faithfully: upcast to
// fp32, subtract the row maximum, divide by T, replace every non-finite value by -1e4, fill
// masked tokens and tokens removed by top-k / top-p with -1e4, and fall back to a uniform
// distribution when softmax still yields NaN. It never crashes, and it is right on the easy
// cases; the suite shows where it is not (+inf logits lose, T = 0 and all-masked rows become
// uniform draws, a masked outlier makes the -1e4 floor outrank every legitimate token).
#ifndef SAMPCERT_IMPLS_FLOOR_FIX_FLOOR_FIX_SAMPLER_H_
#define SAMPCERT_IMPLS_FLOOR_FIX_FLOOR_FIX_SAMPLER_H_

#include <cstdint>
#include <vector>

#include "impls/common/float_cdf_sampler.h"
#include "sampcert/error.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::impls {

class FloorFixSampler : public FloatCdfSampler<FloorFixSampler> {
 public:
  static constexpr uint32_t kCapabilities =
      SAMPCERT_CAP_F32 | SAMPCERT_CAP_F16 | SAMPCERT_CAP_BF16 | SAMPCERT_CAP_MASK |
      SAMPCERT_CAP_TOP_K | SAMPCERT_CAP_TOP_P | SAMPCERT_CAP_TEMPERATURE_ZERO |
      SAMPCERT_CAP_PROBABILITIES | SAMPCERT_CAP_BATCH;
  static constexpr float kFloor = -1e4f;
  static void Describe(sampcert_sampler_info* info);

  Error Row(const sampcert_batch& batch, std::size_t r);
  static float Target(double u, float total) {
    return static_cast<float>(u * static_cast<double>(total));
  }

 private:
  std::vector<float> z_;
};

const sampcert_sampler_api* FloorFixSamplerApi();

}  // namespace sampcert::impls

#endif  // SAMPCERT_IMPLS_FLOOR_FIX_FLOOR_FIX_SAMPLER_H_

// naive: the textbook sampler, bugs included, as found in countless code bases: logits divided
// by T in the input dtype, softmax in the input dtype (every operation rounded to it), masks
// filled with -inf, HF-style top-k / top-p, and a multinomial that rejects a row with inf or NaN
// probabilities the way torch.multinomial does. It validates nothing. Shipped so the suite can
// show what it catches: fp16 [30000, -5, 20, 100] / 0.1 overflows to inf, softmax gives NaN and
// the draw fails; T = 0 divides by zero; a negative temperature silently samples the wrong end.
#ifndef SAMPCERT_IMPLS_NAIVE_NAIVE_SAMPLER_H_
#define SAMPCERT_IMPLS_NAIVE_NAIVE_SAMPLER_H_

#include <cstdint>
#include <vector>

#include "impls/common/float_cdf_sampler.h"
#include "sampcert/error.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::impls {

class NaiveSampler : public FloatCdfSampler<NaiveSampler> {
 public:
  static constexpr uint32_t kCapabilities =
      SAMPCERT_CAP_F32 | SAMPCERT_CAP_F16 | SAMPCERT_CAP_BF16 | SAMPCERT_CAP_MASK |
      SAMPCERT_CAP_TOP_K | SAMPCERT_CAP_TOP_P | SAMPCERT_CAP_TEMPERATURE_ZERO |
      SAMPCERT_CAP_PROBABILITIES | SAMPCERT_CAP_BATCH;
  static void Describe(sampcert_sampler_info* info);

  // The row's probabilities as the input dtype computes them (widened to float exactly), and
  // its cumulative sums in the input dtype. Fails the way torch.multinomial does.
  Error Row(const sampcert_batch& batch, std::size_t r);
  // u rounded to float first: it can become 1.0f, and the draw runs past the end.
  static float Target(double u, float total) { return static_cast<float>(u) * total; }
};

const sampcert_sampler_api* NaiveSamplerApi();

}  // namespace sampcert::impls

#endif  // SAMPCERT_IMPLS_NAIVE_NAIVE_SAMPLER_H_

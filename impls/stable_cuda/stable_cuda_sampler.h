// stable_cuda: stable_cpu's exact semantics on an NVIDIA GPU, for batched rows of f32, f16 and
// bf16 logits (SPEC sections 3-9): exact T = 0 and +inf limits, masks, top-k / top-p / min-p
// in that order after temperature, keep-all ties, probabilities, and the canonical draw with
// fp64 prefix sums, so that for the same seed and row id it draws stable_cpu's tokens except
// where DRAW-4 allows. A row's bits never depend on the rest of the batch.
//
// Declares (as stable_cpu): keep-all ties at the top-k and top-p cuts (every token equal to the
// k-th value, or to the last value the top-p prefix needs, is kept; -0 ties +0), a uniform
// greedy tie-break, temperature first then top-k, top-p, min-p, NaN logits an error,
// cross-device determinism, the fp32 accuracy class.
//
// This is the upper of two layers: it validates rows with the shared ValidateRowParameters /
// ValidateRow, owns the device buffers (grown, never shrunk, reused across calls), launches
// stable_cuda_kernels.h and maps CUDA errors to ABI errors. CUDA is touched lazily, on the
// first call that needs the device, never at static initialization or in create (which probes
// for a device in a child process: a CUDA context does not survive fork, and the runner forks
// its workers).
#ifndef SAMPCERT_IMPLS_STABLE_CUDA_STABLE_CUDA_SAMPLER_H_
#define SAMPCERT_IMPLS_STABLE_CUDA_STABLE_CUDA_SAMPLER_H_

#include <cstdint>
#include <memory>

#include "sampcert/error.h"
#include "sampcert/policies.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::impls {

class StableCudaSampler {
 public:
  static constexpr uint32_t kCapabilities =
      SAMPCERT_CAP_F32 | SAMPCERT_CAP_F16 | SAMPCERT_CAP_BF16 | SAMPCERT_CAP_MASK |
      SAMPCERT_CAP_TOP_K | SAMPCERT_CAP_TOP_P | SAMPCERT_CAP_MIN_P | SAMPCERT_CAP_TEMPERATURE_ZERO |
      SAMPCERT_CAP_PROBABILITIES | SAMPCERT_CAP_BATCH;
  // Largest vocabulary: top-p's fixed-point masses (row_math.h) sum below 2^64 up to here.
  static constexpr uint64_t kMaxVocab = uint64_t{1} << 23;

  static void Describe(sampcert_sampler_info* info);
  static Policies DeclaredPolicies();
  // kUnsupported "stable_cuda: no CUDA device (...)" where there is none (create fails with it).
  static Error CheckAvailable();

  StableCudaSampler();
  ~StableCudaSampler();
  StableCudaSampler(const StableCudaSampler&) = delete;
  StableCudaSampler& operator=(const StableCudaSampler&) = delete;

  Error Probabilities(const sampcert_batch& batch, double* out);
  Error Sample(const sampcert_batch& batch, uint64_t seed, uint64_t first_draw,
               uint64_t draws_per_row, int64_t* out);

 private:
  struct Device;  // stream and buffers (CUDA types stay out of this header)
  Error Prepare(const sampcert_batch& batch);
  std::unique_ptr<Device> device_;
};

const sampcert_sampler_api* StableCudaSamplerApi();

}  // namespace sampcert::impls

#endif  // SAMPCERT_IMPLS_STABLE_CUDA_STABLE_CUDA_SAMPLER_H_

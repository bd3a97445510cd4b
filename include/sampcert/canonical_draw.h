// The canonical draw (SPEC.md section 8), shared by the reference sampler and every shipped
// sampler, CPU and CUDA alike: Philox4x32-10 keyed by the seed, counter = (row id, draw
// index), a uniform strictly inside (0, 1), inverse CDF over the kept tokens in index order.
// Header-only and __host__ __device__ so that the CPU build tests the code the GPU runs.
#ifndef SAMPCERT_CANONICAL_DRAW_H_
#define SAMPCERT_CANONICAL_DRAW_H_

#include <Random123/philox.h>

#include <cstdint>

#if defined(__CUDACC__)
#define SAMPCERT_HD __host__ __device__
#else
#define SAMPCERT_HD
#endif

namespace sampcert {

// The 52 bits that make the uniform: the top 52 bits of the 64-bit word (r[0] << 32 | r[1]) of
// Philox4x32-10 at key (seed_lo, seed_hi), counter (row_lo, row_hi, draw_lo, draw_hi).
SAMPCERT_HD inline uint64_t CanonicalBits(uint64_t seed, uint64_t row_id, uint64_t draw_index) {
  philox4x32_ctr_t ctr = {{static_cast<uint32_t>(row_id), static_cast<uint32_t>(row_id >> 32),
                           static_cast<uint32_t>(draw_index),
                           static_cast<uint32_t>(draw_index >> 32)}};
  philox4x32_key_t key = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  philox4x32_ctr_t r = philox4x32_R(10, ctr, key);
  uint64_t word = (static_cast<uint64_t>(r.v[0]) << 32) | r.v[1];
  return word >> 12;
}

// u = (2m + 1) / 2^53 for the 52-bit m above: 2^52 equally spaced values, the smallest 2^-53
// and the largest 1 - 2^-53, each exact in double, so u is never 0 and never 1 (DRAW-2).
SAMPCERT_HD inline double CanonicalUniform(uint64_t seed, uint64_t row_id, uint64_t draw_index) {
  uint64_t m = CanonicalBits(seed, row_id, draw_index);
  return static_cast<double>(2 * m + 1) * 0x1p-53;
}

}  // namespace sampcert

#endif  // SAMPCERT_CANONICAL_DRAW_H_

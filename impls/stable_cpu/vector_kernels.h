// stable_cpu's hot loops, written with GCC/Clang vector extensions so that one source compiles
// to AVX2+FMA (x86-64-v3), AVX-512 or plain SSE2: the width follows the target flags.
//
// Why not Eigen's packet exp: measured here at 88 us for a 128k row (x86-64-v3), 13x Eigen's
// own sum of the row, against the brief's 10x budget for the whole sampler. The kernel below
// works in the log2 domain (one multiply folds 1/T and log2(e)), a degree-5 polynomial for 2^r
// on [-1/2, 1/2] (Cephes' expf polynomial rescaled; max error measured in the sampler tests), the
// exponent added in the integer domain, and writes weights and per-block sums in the same pass.
#ifndef SAMPCERT_IMPLS_STABLE_CPU_VECTOR_KERNELS_H_
#define SAMPCERT_IMPLS_STABLE_CPU_VECTOR_KERNELS_H_

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace sampcert::impls::kernels {

#if defined(__AVX512F__)
inline constexpr std::size_t kVectorBytes = 64;
#elif defined(__AVX__)
inline constexpr std::size_t kVectorBytes = 32;
#else
inline constexpr std::size_t kVectorBytes = 16;
#endif

typedef float VF __attribute__((vector_size(kVectorBytes)));
typedef int32_t VI __attribute__((vector_size(kVectorBytes)));
inline constexpr std::size_t kLanes = kVectorBytes / sizeof(float);

inline VF Splat(float f) { return VF{} + f; }
inline VF Load(const float* p) {
  VF v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void Store(float* p, VF v) { std::memcpy(p, &v, sizeof v); }
inline float HorizontalSum(VF v) {
  float s = 0;
  for (std::size_t k = 0; k < kLanes; ++k) s += v[k];
  return s;
}

// 2^y for y <= 0, lane-wise; exactly 0 for y <= -150 (and -inf), exactly 1 for y = 0.
// Relative error <= 1.5 ulp for results in the normal range; results below 2^-126 are not
// accurate (they are below every accuracy class's floor, SPEC TOL-4).
inline VF Exp2NonPositive(VF y) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  y = y > Splat(-150.0f) ? y : Splat(-150.0f);
  const VF t = y + Splat(kMagic);
  const VF n = t - Splat(kMagic);
  const VI ni = reinterpret_cast<VI>(t) - reinterpret_cast<VI>(Splat(kMagic));
  const VF r = y - n;  // exact, in [-1/2, 1/2]
  // 2^r = e^(r ln 2) with Cephes expf's degree-7 polynomial for e^x, its coefficients
  // rescaled by powers of ln 2 so that Horner's rule runs in r: 7 fused multiply-adds.
  VF p = Splat(1.5279195034e-05f);
  p = p * r + Splat(1.5506795114e-04f);
  p = p * r + Splat(1.3333747868e-03f);
  p = p * r + Splat(9.6179281027e-03f);
  p = p * r + Splat(5.5504104643e-02f);
  p = p * r + Splat(2.4022651273e-01f);
  p = p * r + Splat(6.9314718056e-01f);
  p = p * r + Splat(1.0f);
  // Scale by 2^n in the exponent field. For n < -126 the field goes <= 0 (-inf and anything
  // below 2^-150 reach a negative field: the sign bit, so the max() below makes them 0; the
  // few lanes in between become tiny positive values below 2^-126, under every floor).
  const VI bits = reinterpret_cast<VI>(p) + (ni << 23);
  const VF res = reinterpret_cast<VF>(bits);
  return res > Splat(0.0f) ? res : Splat(0.0f);
}

// Scalar twin of Exp2NonPositive for the tail of a row (same formulas, one lane).
inline float Exp2NonPositive(float y) {
  VF v = Splat(y);
  return Exp2NonPositive(v)[0];
}

// The maximum of x[0..n) and whether any element is NaN.
inline float MaxAndNan(const float* x, std::size_t n, bool* has_nan) {
  VF vmax = Splat(-std::numeric_limits<float>::infinity());
  VI nan = VI{};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const VF v = Load(x + i);
    vmax = v > vmax ? v : vmax;
    nan |= v != v;
  }
  float m = -std::numeric_limits<float>::infinity();
  bool any_nan = false;
  for (std::size_t k = 0; k < kLanes; ++k) {
    m = vmax[k] > m ? vmax[k] : m;
    any_nan |= nan[k] != 0;
  }
  for (; i < n; ++i) {
    m = x[i] > m ? x[i] : m;
    any_nan |= std::isnan(x[i]);
  }
  *has_nan = any_nan;
  return m;
}

// w[i] = 2^((x[i] - m) * scale) for i in [0, n), and the sum of each block of `block` weights
// (a multiple of kLanes) into block_sums. scale = log2(e) / T.
inline void WeightsAndBlockSums(const float* x, std::size_t n, float m, float scale, float* w,
                                std::size_t block, double* block_sums) {
  const VF vm = Splat(m);
  const VF vs = Splat(scale);
  for (std::size_t b = 0; b * block < n; ++b) {
    const std::size_t begin = b * block;
    const std::size_t end = begin + block < n ? begin + block : n;
    VF acc = VF{};
    std::size_t i = begin;
    for (; i + kLanes <= end; i += kLanes) {
      const VF e = Exp2NonPositive((Load(x + i) - vm) * vs);
      Store(w + i, e);
      acc += e;
    }
    float s = HorizontalSum(acc);
    for (; i < end; ++i) {
      w[i] = Exp2NonPositive((x[i] - m) * scale);
      s += w[i];
    }
    block_sums[b] = s;
  }
}

// The sum of each block of `block` elements of w[0..n) into block_sums.
inline void BlockSums(const float* w, std::size_t n, std::size_t block, double* block_sums) {
  for (std::size_t b = 0; b * block < n; ++b) {
    const std::size_t begin = b * block;
    const std::size_t end = begin + block < n ? begin + block : n;
    VF acc = VF{};
    std::size_t i = begin;
    for (; i + kLanes <= end; i += kLanes) acc += Load(w + i);
    float s = HorizontalSum(acc);
    for (; i < end; ++i) s += w[i];
    block_sums[b] = s;
  }
}

// f16 / bf16 -> f32, exact.
inline void WidenF16(const void* half_bits, std::size_t v, float* out) {
  const auto* h = static_cast<const uint16_t*>(half_bits);
  std::size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= v; i += 8) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(packed));
  }
#endif
  // Without F16C: exact bit manipulation the compiler vectorizes. The magnitude bits shifted
  // into an f32 and scaled by 2^112 give every finite half exactly (subnormals included, the
  // scaling by a power of two being exact); inf and NaN keep an all-ones exponent.
  for (; i < v; ++i) {
    const uint32_t magnitude = static_cast<uint32_t>(h[i] & 0x7fff) << 13;
    const uint32_t finite = std::bit_cast<uint32_t>(std::bit_cast<float>(magnitude) * 0x1p112f);
    const uint32_t special = 0u - static_cast<uint32_t>(magnitude >= (0x7c00u << 13));  // mask
    const uint32_t bits = (finite & ~special) | ((magnitude | 0x7f800000u) & special);
    out[i] = std::bit_cast<float>(bits | (static_cast<uint32_t>(h[i] & 0x8000) << 16));
  }
}

inline void WidenBF16(const void* half_bits, std::size_t v, float* out) {
  const auto* h = static_cast<const uint16_t*>(half_bits);
  for (std::size_t i = 0; i < v; ++i) {
    out[i] = std::bit_cast<float>(static_cast<uint32_t>(h[i]) << 16);  // the upper half of an f32
  }
}

}  // namespace sampcert::impls::kernels

#endif  // SAMPCERT_IMPLS_STABLE_CPU_VECTOR_KERNELS_H_

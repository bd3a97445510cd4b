// stable_cuda's per-element and per-step math, __host__ __device__ so that the CPU build runs,
// in unit tests, exactly what the kernels run (stable_cuda_kernels.cu) without a GPU:
// logit decoding, the row's regime (T = 0 and +inf limits, the double-precision corners), the
// log2-domain weight, the radix-select steps that find the top-k and top-p thresholds, the
// fixed-point masses of the top-p search, the warp-order chunk sums and the canonical draw's
// inverse CDF over the chunk prefix sums.
//
// Rounding: host and device must round every operation alike, and nvcc contracts a * b + c
// into an FMA unless told otherwise. So the float arithmetic below goes through Mul/Add/Sub/Div
// helpers that are the round-to-nearest intrinsics on the device (never contracted) and plain
// operators on the host, where every translation unit that includes this header is compiled
// with -ffp-contract=off (the adapter and the tests; see impls/CMakeLists.txt).
//
// C++17 (nvcc), no Eigen, no standard library beyond <cstdint>/<cmath>/<cstring>.
#ifndef SAMPCERT_IMPLS_STABLE_CUDA_ROW_MATH_H_
#define SAMPCERT_IMPLS_STABLE_CUDA_ROW_MATH_H_

#include <cmath>
#include <cstdint>
#include <cstring>

#include "sampcert/canonical_draw.h"  // SAMPCERT_HD

namespace sampcert::impls::cuda_math {

// Elements per chunk sum (one warp per chunk on the device) and lanes of a warp.
inline constexpr int64_t kChunk = 256;
inline constexpr int kWarp = 32;
// Fixed-point scale of the top-p masses: weights are in [0, 1], so a row of up to 2^18 tokens
// sums to below 2^58 and the integer sums never overflow. Integer sums are exact and
// order-independent, which is what makes the device's histogram atomics deterministic.
inline constexpr double kMassScale = 0x1p40;
inline constexpr uint32_t kDTypeF32 = 0, kDTypeF16 = 1, kDTypeBF16 = 2;  // SAMPCERT_DTYPE_*

SAMPCERT_HD inline int64_t ChunksFor(int64_t vocab) { return (vocab + kChunk - 1) / kChunk; }

enum class Mode : int32_t {
  kNormal = 0,  // w = 2^((x - m) * log2(e) / T), float, as stable_cpu
  kDouble = 1,  // T such that log2(e) / T is not a normal float, or T > 1e36 with m > 0
  kLimit = 2,   // T = 0 or a +inf in the support: 1 on the arg-max set, 0 elsewhere
};

enum class RowStatus : int32_t { kOk = 0, kNanLogit = 1, kEmptySupport = 2 };

// ---- Uncontracted arithmetic ----
SAMPCERT_HD inline float Mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
SAMPCERT_HD inline float Add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
SAMPCERT_HD inline float Sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
// a * b + c rounded once (stable_cpu's kernels use the same FMA on every CPU target).
SAMPCERT_HD inline float Fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
SAMPCERT_HD inline float Div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
SAMPCERT_HD inline double AddD(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
SAMPCERT_HD inline double MulD(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

SAMPCERT_HD inline uint32_t FloatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
SAMPCERT_HD inline float BitsFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

SAMPCERT_HD inline float Infinity() { return BitsFloat(0x7f800000u); }

// ---- Logits ----
// Exact f16 -> f32 by bit manipulation (stable_cpu's portable path): the magnitude shifted into
// an f32 and scaled by 2^112 is every finite half exactly; inf and NaN keep all-ones exponents.
SAMPCERT_HD inline float WidenF16(uint16_t h) {
  const uint32_t magnitude = static_cast<uint32_t>(h & 0x7fffu) << 13;
  const uint32_t finite = FloatBits(Mul(BitsFloat(magnitude), 0x1p112f));
  const uint32_t special = 0u - static_cast<uint32_t>(magnitude >= (0x7c00u << 13));
  const uint32_t bits = (finite & ~special) | ((magnitude | 0x7f800000u) & special);
  return BitsFloat(bits | (static_cast<uint32_t>(h & 0x8000u) << 16));
}
SAMPCERT_HD inline float WidenBF16(uint16_t h) { return BitsFloat(static_cast<uint32_t>(h) << 16); }

// Logit i of one row (dtype a SAMPCERT_DTYPE_* code), exact in f32.
SAMPCERT_HD inline float LoadLogit(const void* row, uint32_t dtype, int64_t i) {
  if (dtype == kDTypeF32) return BitsFloat(static_cast<const uint32_t*>(row)[i]);
  const uint16_t h = static_cast<const uint16_t*>(row)[i];
  return dtype == kDTypeF16 ? WidenF16(h) : WidenBF16(h);
}

// The logit as the support sees it: -inf where masked (SEM-1). A NaN in an allowed position
// stays NaN (the row is an error, INV-5).
SAMPCERT_HD inline float SupportLogit(const void* row, uint32_t dtype, const uint8_t* mask,
                                      int64_t i) {
  const float x = LoadLogit(row, dtype, i);
  return (mask == nullptr || mask[i] != 0) ? x : -Infinity();
}

// A total order on non-NaN floats as unsigned integers, larger value -> larger key; -0 and +0
// get the same key because they tie (SEM-6). -inf has the smallest key of the support values.
SAMPCERT_HD inline uint32_t OrderedKey(float x) {
  uint32_t b = FloatBits(x);
  if ((b & 0x7fffffffu) == 0) b = 0;
  return (b & 0x80000000u) != 0 ? ~b : (b | 0x80000000u);
}

// ---- The row's regime ----
struct RowSetup {
  float m = 0;      // the maximum over the support
  float scale = 0;  // log2(e) / T in kNormal
  float temperature = 1;
  Mode mode = Mode::kNormal;
};

// SEM-2..SEM-4 after the maximum is known (stable_cpu's choices, corner for corner).
SAMPCERT_HD inline RowSetup MakeRowSetup(float m, float temperature) {
  RowSetup s;
  s.m = m;
  s.temperature = temperature;
  if (temperature == 0.0f || m == Infinity()) {
    s.mode = Mode::kLimit;
    return s;
  }
  s.scale = Div(1.44269504088896341f, temperature);
  const bool scale_ok = s.scale >= 0x1p-126f && s.scale < Infinity();
  s.mode = (scale_ok && !(m > 0.0f && temperature > 1e36f)) ? Mode::kNormal : Mode::kDouble;
  return s;
}

// 2^y for y <= 0: exactly 0 for y <= -150 (and -inf), exactly 1 for y = 0; the same formulas
// as stable_cpu's kernels (impls/stable_cpu/vector_kernels.cc: a degree-6 polynomial in the
// log2 domain, by FMAs), one lane.
SAMPCERT_HD inline float Exp2NonPositive(float y) {
  const float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  y = y > -150.0f ? y : -150.0f;
  const float t = Add(y, kMagic);
  const float r = Sub(y, Sub(t, kMagic));  // exact, in [-1/2, 1/2]
  float p = 1.5353341587e-04f;
  p = Fma(p, r, 1.3398872688e-03f);
  p = Fma(p, r, 9.6184378490e-03f);
  p = Fma(p, r, 5.5503323674e-02f);
  p = Fma(p, r, 2.4022647738e-01f);
  p = Fma(p, r, 6.9314718246e-01f);
  p = Fma(p, r, 1.0f);
  // 2^n in the exponent field (t's bits shifted left by 23 are n's: the magic's low 9 bits are
  // 0); far below 2^-126 the field wraps into the sign bit and the comparison turns the result
  // into 0 (stable_cpu does the same).
  const float res = BitsFloat(FloatBits(p) + (FloatBits(t) << 23));
  return res > 0.0f ? res : 0.0f;
}

// The base weight of a support logit x (x = -inf outside the support) before truncation.
SAMPCERT_HD inline float BaseWeight(float x, const RowSetup& s) {
  switch (s.mode) {
    case Mode::kLimit: return x == s.m ? 1.0f : 0.0f;
    case Mode::kDouble:
#if defined(__CUDA_ARCH__)
      return static_cast<float>(::exp((static_cast<double>(x) - static_cast<double>(s.m)) /
                                      static_cast<double>(s.temperature)));
#else
      return static_cast<float>(std::exp((static_cast<double>(x) - static_cast<double>(s.m)) /
                                         static_cast<double>(s.temperature)));
#endif
    case Mode::kNormal: break;
  }
  return Exp2NonPositive(Mul(Sub(x, s.m), s.scale));
}

// ---- Truncation thresholds (keep-all ties, temperature first, top-k -> top-p -> min-p) ----
// A token survives a step iff its key is at least the step's threshold key; 0 keeps all.
struct Thresholds {
  uint32_t top_k_key = 0;
  uint32_t top_p_key = 0;
  float min_p = 0;  // 0 = off; weights are relative to the maximum's, which is exactly 1
};

// The weight a token is drawn with: 0 outside the kept set.
SAMPCERT_HD inline float KeptWeight(float x, const RowSetup& s, const Thresholds& t) {
  const float w = BaseWeight(x, s);
  if (s.mode == Mode::kLimit || w == 0.0f) return w;  // limits: keep-all leaves the winners
  const uint32_t key = OrderedKey(x);
  if (key < t.top_k_key || key < t.top_p_key) return 0.0f;
  return w < t.min_p ? 0.0f : w;
}

// Radix select, 8 bits per pass from the top (shift 24, 16, 8, 0): does `key` share the
// digits above `shift` with `prefix`, and which bin does it fall in?
SAMPCERT_HD inline bool MatchesPrefix(uint32_t key, uint32_t prefix, int shift) {
  return shift == 24 || (key >> (shift + 8)) == (prefix >> (shift + 8));
}
SAMPCERT_HD inline uint32_t Digit(uint32_t key, int shift) { return (key >> shift) & 0xffu; }

// top-k: hist[b] counts the support tokens in bin b of this pass. Returns the bin of the k-th
// largest (k = *k_left counted from the top of the bins) and updates *k_left to its rank
// inside that bin. After four passes the prefix is the k-th largest key: keep key >= it
// (every token tied with the k-th stays: keep-all).
SAMPCERT_HD inline uint32_t SelectTopKDigit(const uint32_t* hist, uint64_t* k_left) {
  uint64_t above = 0;
  for (int b = 255; b >= 0; --b) {
    if (above + hist[b] >= *k_left) {
      *k_left -= above;
      return static_cast<uint32_t>(b);
    }
    above += hist[b];
  }
  return 0;  // not reached: the caller checked that the support has >= k tokens
}

// top-p's mass of one token in fixed point (truncated; exact scaling by a power of two).
SAMPCERT_HD inline uint64_t FixedMass(float w) {
  return static_cast<uint64_t>(static_cast<double>(w) * kMassScale);
}

// top-p keeps token i iff the mass of the strictly larger values is < p * Z (SEM-6, keep-all
// at the cut). hist[b] is the fixed-point mass in bin b of this pass; *above is the mass of
// every key above this pass's prefix. Returns the bin holding the cut value (the first bin,
// from the top, whose inclusive cumulative mass reaches target) and adds the mass of the bins
// above it to *above. After four passes the prefix is the cut value's key: keep key >= it.
// (Count: uint64_t on the host, the device atomics' unsigned long long; both 64 bits.)
template <typename Count>
SAMPCERT_HD inline uint32_t SelectTopPDigit(const Count* hist, double target, uint64_t* above) {
  for (int b = 255; b >= 0; --b) {
    if (static_cast<double>(*above + hist[b]) >= target) return static_cast<uint32_t>(b);
    *above += hist[b];
  }
  return 0;  // not reached: target = p * Z < Z, the full sum
}

SAMPCERT_HD inline double TopPTarget(float top_p, uint64_t total_mass) {
  return MulD(static_cast<double>(top_p), static_cast<double>(total_mass));
}

// ---- Sums and the draw ----
// The sum of one chunk of n <= kChunk weights in the order a warp adds them: lane l adds
// w[l], w[l + 32], ... in double, then a butterfly over the lanes (xor 16, 8, 4, 2, 1); lane
// 0's value. The device computes the same sums with __shfl_xor_sync. Depends on n alone.
template <typename WeightAt>
SAMPCERT_HD inline double ChunkSumWarpOrder(const WeightAt& weight_at, int64_t begin, int64_t n) {
  double lane[kWarp];
  for (int l = 0; l < kWarp; ++l) {
    double acc = 0.0;
    for (int64_t j = l; j < n; j += kWarp)
      acc = AddD(acc, static_cast<double>(weight_at(begin + j)));
    lane[l] = acc;
  }
  for (int offset = kWarp / 2; offset >= 1; offset /= 2) {
    double next[kWarp];
    for (int l = 0; l < kWarp; ++l) next[l] = AddD(lane[l], lane[l ^ offset]);
    for (int l = 0; l < kWarp; ++l) lane[l] = next[l];
  }
  return lane[0];
}

// The weight of token i of one row, as every kernel after the thresholds sees it.
struct RowWeights {
  const void* logits;
  uint32_t dtype;
  const uint8_t* mask;  // nullptr: all allowed
  RowSetup setup;
  Thresholds thresholds;
  SAMPCERT_HD float operator()(int64_t i) const {
    return KeptWeight(SupportLogit(logits, dtype, mask, i), setup, thresholds);
  }
};

// Inclusive prefix sums of the chunk sums held in prefix[1..chunks], in place, with
// prefix[0] = 0, in the order one warp computes them: lane l scans its segment of
// ceil(chunks / 32) consecutive chunks sequentially, the segment totals are added
// sequentially into offsets, and each lane adds its offset to its segment. The result is
// non-decreasing (a segment's last sum is bit-equal to the next offset) and depends on `chunks`
// alone. (A single sequential scan of 1024 chunk sums is a 1024-long dependent chain on the
// device; this one is 64 long.)
SAMPCERT_HD inline int64_t PrefixSegment(int64_t chunks) { return (chunks + kWarp - 1) / kWarp; }
SAMPCERT_HD inline void PrefixInPlace(double* prefix, int64_t chunks) {
  const int64_t seg = PrefixSegment(chunks);
  double offset[kWarp + 1];
  offset[0] = 0.0;
  for (int l = 0; l < kWarp; ++l) {
    double acc = 0.0;
    for (int64_t c = l * seg; c < (l + 1) * seg && c < chunks; ++c) {
      acc = AddD(acc, prefix[c + 1]);
      prefix[c + 1] = acc;
    }
    offset[l + 1] = AddD(offset[l], acc);
  }
  for (int l = 0; l < kWarp; ++l) {
    for (int64_t c = l * seg; c < (l + 1) * seg && c < chunks; ++c) {
      prefix[c + 1] = AddD(offset[l], prefix[c + 1]);
    }
  }
  prefix[0] = 0.0;
}

// The canonical inverse CDF (DRAW-3) over chunk prefix sums: the smallest i with
// u * total < C_i and a positive weight; the chunk by binary search, then a scan inside it in
// double. last_positive (the largest index of positive weight) when rounding leaves the target
// at or past the end. stable_cpu's TokenFor, with fp64 chunk sums.
template <typename WeightAt>
SAMPCERT_HD inline int64_t DrawToken(const double* prefix, int64_t chunks, int64_t vocab, double u,
                                     int64_t last_positive, const WeightAt& weight_at) {
  const double target = MulD(u, prefix[chunks]);
  int64_t lo = 0, hi = chunks;  // first chunk c with prefix[c + 1] > target
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (prefix[mid + 1] > target) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  for (int64_t c = lo; c < chunks; ++c) {
    double acc = prefix[c];
    const int64_t end = (c + 1) * kChunk < vocab ? (c + 1) * kChunk : vocab;
    for (int64_t i = c * kChunk; i < end; ++i) {
      const float w = weight_at(i);
      acc = AddD(acc, static_cast<double>(w));
      if (target < acc && w > 0.0f) return i;
    }
  }
  return last_positive;
}

}  // namespace sampcert::impls::cuda_math

#endif  // SAMPCERT_IMPLS_STABLE_CUDA_ROW_MATH_H_

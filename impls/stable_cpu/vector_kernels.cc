// stable_cpu's hot loops (vector_kernels.h), compiled once per Highway target by
// hwy/foreach_target.h re-including this file.
//
// The exp works in the log2 domain (one multiply folds 1/T and log2(e)): 2^y = 2^n 2^r with n
// the nearest integer and r in [-1/2, 1/2], a degree-6 polynomial for 2^r, the exponent added
// in the integer domain; weights and per-block sums are written in the same pass. About 15
// vector operations per vector of logits. Why not Highway's Exp (hwy/contrib/math) or Eigen's
// packet exp: both take e^x with a two-step range reduction and a longer polynomial (Eigen's
// measured 13x the row's sum alone); this one meets the fp32 class's accuracy (<= 2 ulp,
// vector_kernels_test) at the speed docs/performance.md states.

// Every target, the portable fallback included (the tests compare each with it), except: SVE,
// whose vectors have no compile-time width (128-bit NEON is as fast on today's cores), and x86's
// SSSE3 and SSE4, which have no FMA: a CPU without AVX2 (made before 2013-2015) runs the
// portable fallback, which rounds each FMA exactly in software.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS \
  (HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128 | HWY_SSSE3 | HWY_SSE4)
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "impls/stable_cpu/vector_kernels.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// After foreach_target.h:
#include <hwy/highway.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "impls/stable_cpu/vector_kernels.h"

HWY_BEFORE_NAMESPACE();
namespace sampcert::impls::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// At most 16 lanes: the reductions sum 16 virtual lanes on every target.
using DF = hn::CappedTag<float, 16>;
using DI = hn::RebindToSigned<DF>;
constexpr std::size_t kVirtualLanes = 16;
constexpr std::size_t kLanes = hn::MaxLanes(DF());
static_assert(kVirtualLanes % kLanes == 0, "the vector width divides the 16 virtual lanes");
constexpr std::size_t kVectors = kVirtualLanes / kLanes;
using VF = hn::Vec<DF>;

// a * b + c rounded once (an FMA) on every target: the hardware's where the target has one,
// else per lane through std::fma (correctly rounded in software by glibc), so that every
// target gives the same bits.
HWY_INLINE VF Fma(VF a, VF b, VF c) {
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || \
    (HWY_ARCH_ARM_A64 && HWY_TARGET == HWY_NEON)
  return hn::MulAdd(a, b, c);
#else
  const DF d;
  HWY_ALIGN float la[kLanes], lb[kLanes], lc[kLanes];
  hn::Store(a, d, la);
  hn::Store(b, d, lb);
  hn::Store(c, d, lc);
  for (std::size_t k = 0; k < kLanes; ++k) la[k] = std::fma(la[k], lb[k], lc[k]);
  return hn::Load(d, la);
#endif
}

HWY_INLINE VF Exp2(VF y) {
  const DF d;
  const DI di;
  const VF magic = hn::Set(d, 12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  const VF floor = hn::Set(d, -150.0f);
  y = hn::Max(y, floor);  // y is never NaN, so Max means the same on every target
  const VF t = hn::Add(y, magic);
  const VF r = hn::Sub(y, hn::Sub(t, magic));  // exact, in [-1/2, 1/2]
  // 2^r by a degree-6 polynomial with p(0) = 1 exactly, fitted here for the smallest maximum
  // relative error on [-1/2, 1/2] (Lawson's iteration; 2.0e-9 before rounding, 0.94 ulp with
  // float coefficients and FMAs), by Horner's rule: 6 FMAs.
  VF p = hn::Set(d, 1.5353341587e-04f);
  p = Fma(p, r, hn::Set(d, 1.3398872688e-03f));
  p = Fma(p, r, hn::Set(d, 9.6184378490e-03f));
  p = Fma(p, r, hn::Set(d, 5.5503323674e-02f));
  p = Fma(p, r, hn::Set(d, 2.4022647738e-01f));
  p = Fma(p, r, hn::Set(d, 6.9314718246e-01f));
  p = Fma(p, r, hn::Set(d, 1.0f));
  // Scale by 2^n in the exponent field: t's bits are the magic's plus n, and the magic's low 9
  // bits are 0, so t's bits shifted left by 23 are n's. For n < -126 the field goes <= 0: -inf
  // and anything below 2^-150 borrow into the sign bit (negative values, -inf or NaN, which
  // the integer max below makes +0 on every target; a float max would keep NaN on NEON); the
  // few lanes in between become tiny positive values below 2^-126, under every floor.
  const auto bits = hn::Add(hn::BitCast(di, p), hn::ShiftLeft<23>(hn::BitCast(di, t)));
  return hn::BitCast(d, hn::Max(bits, hn::Zero(di)));
}

// The tail of a row (fewer than 16 elements) through the same vector code, padded: its bits
// are the lanes' bits.
HWY_INLINE void Exp2Tail(const float* x, std::size_t n, float m, float scale, float* out) {
  const DF d;
  HWY_ALIGN float buf[kVirtualLanes];
  for (float& b : buf) b = m;  // padding lanes compute 2^0
  for (std::size_t i = 0; i < n; ++i) buf[i] = x[i];
  for (std::size_t k = 0; k < kVectors; ++k) {
    const VF y = hn::Mul(hn::Sub(hn::Load(d, buf + k * kLanes), hn::Set(d, m)), hn::Set(d, scale));
    hn::Store(Exp2(y), d, buf + k * kLanes);
  }
  for (std::size_t i = 0; i < n; ++i) out[i] = buf[i];
}

void Exp2NonPositiveImpl(const float* y, std::size_t n, float* out) {
  const DF d;
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) hn::StoreU(Exp2(hn::LoadU(d, y + i)), d, out + i);
  // (y - 0) * 1 is y: the tail takes the same path.
  Exp2Tail(y + i, n - i, 0.0f, 1.0f, out + i);
}

float MaxAndNanImpl(const float* x, std::size_t n, bool* has_nan) {
  const DF d;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // Four independent maxima so that the loop runs at the loads' speed, not the latency of one
  // chain; the maximum is exact in any order (with a NaN the caller ignores it). NaN: a NaN
  // anywhere makes the sum NaN on every target; a NaN sum without one (inf - inf, overflow) is
  // rare and settled by an exact scan, so the answer is exact.
  VF m0 = hn::Set(d, -kInf), m1 = m0, m2 = m0, m3 = m0;
  VF s0 = hn::Zero(d), s1 = s0;
  std::size_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    const VF v0 = hn::LoadU(d, x + i), v1 = hn::LoadU(d, x + i + kLanes);
    const VF v2 = hn::LoadU(d, x + i + 2 * kLanes), v3 = hn::LoadU(d, x + i + 3 * kLanes);
    m0 = hn::Max(m0, v0);
    m1 = hn::Max(m1, v1);
    m2 = hn::Max(m2, v2);
    m3 = hn::Max(m3, v3);
    s0 = hn::Add(s0, hn::Add(v0, v1));
    s1 = hn::Add(s1, hn::Add(v2, v3));
  }
  HWY_ALIGN float lanes[kLanes];
  hn::Store(hn::Max(hn::Max(m0, m1), hn::Max(m2, m3)), d, lanes);
  float m = -kInf;
  for (float l : lanes) m = l > m ? l : m;
  const VF sum = hn::Add(s0, s1);
  bool any_nan = !hn::AllTrue(d, hn::Eq(sum, sum));
  if (any_nan) {  // maybe: look
    any_nan = false;
    for (std::size_t j = 0; j < i; ++j) any_nan |= std::isnan(x[j]);
  }
  for (; i < n; ++i) {
    m = x[i] > m ? x[i] : m;
    any_nan |= std::isnan(x[i]);
  }
  *has_nan = any_nan;
  return m;
}

// The sum of w[begin, end) in one order on every target: element begin + 16 j + l into virtual
// lane l, the 16 lanes summed pairwise, then the elements past the last full 16 in order.
// With weights (x non-null) it computes w from x first, in the same pass.
HWY_INLINE float BlockSum(const float* x, float m, float scale, float* w, std::size_t begin,
                          std::size_t end) {
  const DF d;
  const VF vm = hn::Set(d, m);
  const VF vs = hn::Set(d, scale);
  VF acc[kVectors];
  for (VF& a : acc) a = hn::Zero(d);
  std::size_t i = begin;
  for (; i + kVirtualLanes <= end; i += kVirtualLanes) {
    for (std::size_t k = 0; k < kVectors; ++k) {
      const std::size_t at = i + k * kLanes;
      VF e;
      if (x != nullptr) {
        e = Exp2(hn::Mul(hn::Sub(hn::LoadU(d, x + at), vm), vs));
        hn::StoreU(e, d, w + at);
      } else {
        e = hn::LoadU(d, w + at);
      }
      acc[k] = hn::Add(acc[k], e);
    }
  }
  HWY_ALIGN float lanes[kVirtualLanes];
  for (std::size_t k = 0; k < kVectors; ++k) hn::Store(acc[k], d, lanes + k * kLanes);
  // Pairwise, in a fixed tree (lane i plus lane i + w for w = 8, 4, 2, 1): four dependent adds
  // where a left-to-right sum would take sixteen (it cost a fifth of the kernel's time).
  for (std::size_t half = kVirtualLanes / 2; half >= 1; half /= 2) {
    for (std::size_t l = 0; l < half; ++l) lanes[l] += lanes[l + half];
  }
  float s = lanes[0];
  if (x != nullptr) Exp2Tail(x + i, end - i, m, scale, w + i);
  for (; i < end; ++i) s += w[i];
  return s;
}

void WeightsAndBlockSumsImpl(const float* x, std::size_t n, float m, float scale, float* w,
                             std::size_t block, double* block_sums) {
  for (std::size_t b = 0; b * block < n; ++b) {
    const std::size_t begin = b * block;
    block_sums[b] = BlockSum(x, m, scale, w, begin, begin + block < n ? begin + block : n);
  }
}

void BlockSumsImpl(const float* w, std::size_t n, std::size_t block, double* block_sums) {
  for (std::size_t b = 0; b * block < n; ++b) {
    const std::size_t begin = b * block;
    block_sums[b] = BlockSum(nullptr, 0.0f, 0.0f, const_cast<float*>(w), begin,
                             begin + block < n ? begin + block : n);
  }
}

// f16 -> f32 by bit manipulation, exact on every target (Highway 1.0's PromoteTo without F16C
// maps inf and NaN to finite values). The magnitude bits shifted into an f32 and scaled by
// 2^112 give every finite half exactly (subnormals included, the scaling by a power of two
// being exact); inf and NaN keep an all-ones exponent.
HWY_INLINE uint32_t WidenF16Bits(uint16_t h) {
  const uint32_t magnitude = static_cast<uint32_t>(h & 0x7fff) << 13;
  const uint32_t finite = std::bit_cast<uint32_t>(std::bit_cast<float>(magnitude) * 0x1p112f);
  const uint32_t special = 0u - static_cast<uint32_t>(magnitude >= (0x7c00u << 13));  // mask
  const uint32_t bits = (finite & ~special) | ((magnitude | 0x7f800000u) & special);
  return bits | (static_cast<uint32_t>(h & 0x8000) << 16);
}

// The end of a widening pass: the maximum of the lanes and the tail, NaN from the lanes' sum as
// in MaxAndNanImpl (settled by an exact scan of out when the sum is NaN).
HWY_INLINE float FinishMax(VF vmax, VF sum, const float* out, std::size_t vector_end, std::size_t n,
                           bool* has_nan) {
  const DF d;
  HWY_ALIGN float lanes[kLanes];
  hn::Store(vmax, d, lanes);
  float m = -std::numeric_limits<float>::infinity();
  for (float l : lanes) m = l > m ? l : m;
  bool any_nan = !hn::AllTrue(d, hn::Eq(sum, sum));
  if (any_nan) {
    any_nan = false;
    for (std::size_t j = 0; j < vector_end; ++j) any_nan |= std::isnan(out[j]);
  }
  for (std::size_t j = vector_end; j < n; ++j) {
    m = out[j] > m ? out[j] : m;
    any_nan |= std::isnan(out[j]);
  }
  *has_nan = any_nan;
  return m;
}

float WidenF16Impl(const void* half_bits, std::size_t n, float* out, bool* has_nan) {
  const auto* h = static_cast<const uint16_t*>(half_bits);
  const DF d;
  const hn::RebindToUnsigned<DF> du;
  const DI di;
  const hn::Rebind<uint16_t, DF> d16;
  VF vmax = hn::Set(d, -std::numeric_limits<float>::infinity());
  VF sum = hn::Zero(d);
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const auto wide = hn::PromoteTo(du, hn::LoadU(d16, h + i));
    const auto magnitude = hn::ShiftLeft<13>(hn::And(wide, hn::Set(du, 0x7fffu)));
    const auto finite = hn::BitCast(du, hn::Mul(hn::BitCast(d, magnitude), hn::Set(d, 0x1p112f)));
    // (Highway 1.0 compares signed lanes only; the magnitude is below 2^28.)
    const auto special =
        hn::RebindMask(du, hn::Gt(hn::BitCast(di, magnitude), hn::Set(di, (0x7c00 << 13) - 1)));
    const auto bits = hn::IfThenElse(special, hn::Or(magnitude, hn::Set(du, 0x7f800000u)), finite);
    const auto sign = hn::ShiftLeft<16>(hn::And(wide, hn::Set(du, 0x8000u)));
    const VF f = hn::BitCast(d, hn::Or(bits, sign));
    hn::StoreU(f, d, out + i);
    vmax = hn::Max(vmax, f);
    sum = hn::Add(sum, f);
  }
  const std::size_t vector_end = i;
  for (; i < n; ++i) out[i] = std::bit_cast<float>(WidenF16Bits(h[i]));
  return FinishMax(vmax, sum, out, vector_end, n, has_nan);
}

float WidenBF16Impl(const void* half_bits, std::size_t n, float* out, bool* has_nan) {
  const auto* h = static_cast<const uint16_t*>(half_bits);
  const DF d;
  const hn::RebindToUnsigned<DF> du;
  const hn::Rebind<uint16_t, DF> d16;
  std::size_t i = 0;
  VF vmax = hn::Set(d, -std::numeric_limits<float>::infinity());
  VF sum = hn::Zero(d);
  for (; i + kLanes <= n; i += kLanes) {
    const VF f = hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(d16, h + i))));
    hn::StoreU(f, d, out + i);
    vmax = hn::Max(vmax, f);
    sum = hn::Add(sum, f);
  }
  const std::size_t vector_end = i;
  for (; i < n; ++i) out[i] = std::bit_cast<float>(static_cast<uint32_t>(h[i]) << 16);
  return FinishMax(vmax, sum, out, vector_end, n, has_nan);
}

int64_t TargetImpl() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace sampcert::impls::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sampcert::impls::kernels {

HWY_EXPORT(Exp2NonPositiveImpl);
HWY_EXPORT(MaxAndNanImpl);
HWY_EXPORT(WeightsAndBlockSumsImpl);
HWY_EXPORT(BlockSumsImpl);
HWY_EXPORT(WidenF16Impl);
HWY_EXPORT(WidenBF16Impl);
HWY_EXPORT(TargetImpl);

namespace {
bool UseTargetOf(const std::string& name);

// SAMPCERT_KERNEL_TARGET=NAME holds the kernels to one target of CompiledTargets() for the
// whole process (a certification on the portable fallback, to compare with the best target's).
// A name this CPU does not run is an error by name: the process stops before any kernel runs.
void ApplyEnvironment() {
  static const bool applied = [] {
    const char* name = std::getenv("SAMPCERT_KERNEL_TARGET");
    if (name != nullptr && *name != '\0' && !UseTargetOf(name)) {
      std::fprintf(stderr, "SAMPCERT_KERNEL_TARGET=%s: not a kernel target this CPU runs\n", name);
      std::abort();
    }
    return true;
  }();
  (void)applied;
}
}  // namespace

void Exp2NonPositive(const float* y, std::size_t n, float* out) {
  ApplyEnvironment();
  HWY_DYNAMIC_DISPATCH(Exp2NonPositiveImpl)(y, n, out);
}
float MaxAndNan(const float* x, std::size_t n, bool* has_nan) {
  ApplyEnvironment();
  return HWY_DYNAMIC_DISPATCH(MaxAndNanImpl)(x, n, has_nan);
}
void WeightsAndBlockSums(const float* x, std::size_t n, float m, float scale, float* w,
                         std::size_t block, double* block_sums) {
  ApplyEnvironment();
  HWY_DYNAMIC_DISPATCH(WeightsAndBlockSumsImpl)(x, n, m, scale, w, block, block_sums);
}
void BlockSums(const float* w, std::size_t n, std::size_t block, double* block_sums) {
  ApplyEnvironment();
  HWY_DYNAMIC_DISPATCH(BlockSumsImpl)(w, n, block, block_sums);
}
float WidenF16(const void* half_bits, std::size_t n, float* out, bool* has_nan) {
  ApplyEnvironment();
  return HWY_DYNAMIC_DISPATCH(WidenF16Impl)(half_bits, n, out, has_nan);
}
float WidenBF16(const void* half_bits, std::size_t n, float* out, bool* has_nan) {
  ApplyEnvironment();
  return HWY_DYNAMIC_DISPATCH(WidenBF16Impl)(half_bits, n, out, has_nan);
}

namespace {
int64_t chosen_target = 0;  // UseTarget's choice (a Highway target bit), 0 for the best

// The targets compiled in that the CPU runs, whatever UseTarget chose.
std::vector<int64_t> CpuTargets() {
  hwy::SetSupportedTargetsForTest(0);
  std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  hwy::SetSupportedTargetsForTest(chosen_target);
  return targets;
}
}  // namespace

std::vector<std::string> CompiledTargets() {
  std::vector<std::string> names;
  for (int64_t t : CpuTargets()) names.emplace_back(hwy::TargetName(t));
  return names;
}

std::string CurrentTarget() {
  ApplyEnvironment();
  return hwy::TargetName(HWY_DYNAMIC_DISPATCH(TargetImpl)());
}

bool UseTarget(const std::string& name) {
  ApplyEnvironment();  // first, so that it never overrides this choice later
  return UseTargetOf(name);
}

namespace {
bool UseTargetOf(const std::string& name) {
  for (int64_t t : CpuTargets()) {
    if (name.empty() || name == hwy::TargetName(t)) {
      chosen_target = name.empty() ? 0 : t;
      hwy::SetSupportedTargetsForTest(chosen_target);
      return true;
    }
  }
  return false;
}
}  // namespace

}  // namespace sampcert::impls::kernels
#endif  // HWY_ONCE

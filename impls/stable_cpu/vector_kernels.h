// stable_cpu's hot loops, written once with Highway and compiled for every instruction set a
// CPU of the build's architecture may have (x86-64: SSSE3, SSE4, AVX2, AVX-512 and a portable
// fallback; aarch64: NEON and the fallback). Each call runs the best one the CPU it runs on has
// (runtime dispatch), so one binary never dies with SIGILL on an older CPU.
//
// Every target gives the same bits (stable_cpu declares cross-device determinism, SPEC POL-6):
// each step is one IEEE-rounded operation, the exp's polynomial one FMA per step on every target
// (the hardware's, or glibc's correctly rounded std::fma on the portable fallback; x86's SSSE3
// and SSE4, which lack FMA, are not compiled), nothing else contracted (-ffp-contract=off), and
// every reduction sums in one order whatever the vector width (16 virtual lanes, then those
// pairwise). vector_kernels_test checks each target against the fallback, bit for bit, on x86-64
// and (impls.vector_kernels_aarch64_qemu) on aarch64. SAMPCERT_KERNEL_TARGET=NAME in the
// environment holds a process to one target.
#ifndef SAMPCERT_IMPLS_STABLE_CPU_VECTOR_KERNELS_H_
#define SAMPCERT_IMPLS_STABLE_CPU_VECTOR_KERNELS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sampcert::impls::kernels {

// 2^y[i] for y[i] <= 0 into out[i], i in [0, n); exactly 0 for y <= -150 (and -inf), exactly 1
// for y = 0. Relative error <= 2 ulp for results in the normal range; results below 2^-126 are
// not accurate (they are below every accuracy class's floor, SPEC TOL-4).
void Exp2NonPositive(const float* y, std::size_t n, float* out);

// The maximum of x[0..n) and whether any element is NaN.
float MaxAndNan(const float* x, std::size_t n, bool* has_nan);

// w[i] = 2^((x[i] - m) * scale) for i in [0, n), and the sum of each block of `block` weights
// (a multiple of 16) into block_sums. scale = log2(e) / T.
void WeightsAndBlockSums(const float* x, std::size_t n, float m, float scale, float* w,
                         std::size_t block, double* block_sums);

// The sum of each block of `block` (a multiple of 16) elements of w[0..n) into block_sums.
void BlockSums(const float* w, std::size_t n, std::size_t block, double* block_sums);

// f16 / bf16 -> f32, exact (NaNs stay NaNs of the same sign), returning what MaxAndNan would of
// out (in the same pass: a half row is read once before the weights).
float WidenF16(const void* half_bits, std::size_t n, float* out, bool* has_nan);
float WidenBF16(const void* half_bits, std::size_t n, float* out, bool* has_nan);

// Dispatch control, for tests and benchmarks: the targets compiled in that this CPU runs (best
// first, the portable fallback last), the one calls use now, and a switch to one of them by
// name ("" returns to the best). UseTarget returns false for a name not in CompiledTargets().
std::vector<std::string> CompiledTargets();
std::string CurrentTarget();
bool UseTarget(const std::string& name);

}  // namespace sampcert::impls::kernels

#endif  // SAMPCERT_IMPLS_STABLE_CPU_VECTOR_KERNELS_H_

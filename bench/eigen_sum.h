// Eigen's vectorized sum of a row, the baseline the CPU sampler's ratios are taken against,
// built once per instruction set so that each stable_cpu target is compared with Eigen on the
// same vectors (eigen_sum.cc, compiled per set by bench/CMakeLists.txt).
#ifndef SAMPCERT_BENCH_EIGEN_SUM_H_
#define SAMPCERT_BENCH_EIGEN_SUM_H_

#include <cstddef>

namespace sampcert::bench {

float EigenSumBaseline(const float* x,
                       std::ptrdiff_t n);  // the build's own flags (sampler_bench.cc)
#if defined(SAMPCERT_BENCH_X86_SUMS)
float EigenSumAvx2(const float* x, std::ptrdiff_t n);    // -mavx2 -mfma
float EigenSumAvx512(const float* x, std::ptrdiff_t n);  // AVX-512 F/DQ/BW/VL
#endif

}  // namespace sampcert::bench

#endif  // SAMPCERT_BENCH_EIGEN_SUM_H_

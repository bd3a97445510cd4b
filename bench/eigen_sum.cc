// One Eigen sum, named by SAMPCERT_EIGEN_SUM_NAME; compiled once per instruction set. Eigen is
// force-inlined into it: the object defines this function and nothing else (nm, GCC 12 at -O2
// and -O3), so the linker has no instruction-set-specific copy of an Eigen template to share
// with the baseline (an AVX-512 copy in its place would die on an older CPU).
#include "bench/eigen_sum.h"

#include <Eigen/Core>

namespace sampcert::bench {

float SAMPCERT_EIGEN_SUM_NAME(const float* x, std::ptrdiff_t n) {
  return Eigen::Map<const Eigen::ArrayXf>(x, n).sum();
}

}  // namespace sampcert::bench

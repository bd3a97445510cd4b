// Neumaier's compensated summation in long double: the reference's normalizer and cumulative
// sums stay within a few ulps of exact for any V sampcert supports (2^18 and beyond).
#ifndef SAMPCERT_REFERENCE_COMPENSATED_SUM_H_
#define SAMPCERT_REFERENCE_COMPENSATED_SUM_H_

#include <cmath>

namespace sampcert::internal {

class CompensatedSum {
 public:
  void Add(long double x) {
    const long double t = sum_ + x;
    if (std::fabs(sum_) >= std::fabs(x)) {
      compensation_ += (sum_ - t) + x;
    } else {
      compensation_ += (x - t) + sum_;
    }
    sum_ = t;
  }
  long double Total() const { return sum_ + compensation_; }

 private:
  long double sum_ = 0;
  long double compensation_ = 0;
};

}  // namespace sampcert::internal

#endif  // SAMPCERT_REFERENCE_COMPENSATED_SUM_H_

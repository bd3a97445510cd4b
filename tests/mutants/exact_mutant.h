// What the catalogue's small exact samplers share (penalty_mutants, bias_mutants, seed_mutants):
// double probabilities per row, drawn by the canonical uniform (seed, row id, draw index) through
// an inverse CDF in index order. A mutant derives from ExactMutant<Itself> and provides
// `Error Prepare(const sampcert_batch&, std::size_t row)`, which fills p_ for that row (or
// FromLogits does); a mutant whose draws are keyed otherwise defines its own Sample.
#ifndef SAMPCERT_TESTS_MUTANTS_EXACT_MUTANT_H_
#define SAMPCERT_TESTS_MUTANTS_EXACT_MUTANT_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "sampcert/canonical_draw.h"
#include "sampcert/error.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::mutants {

template <typename Derived>
class ExactMutant {
 public:
  Error Probabilities(const sampcert_batch& batch, double* out) {
    const std::size_t v = static_cast<std::size_t>(batch.vocab);
    for (std::size_t r = 0; r < batch.num_rows; ++r) {
      if (Error e = Self().Prepare(batch, r); e.code != ErrorCode::kOk) return e;
      for (std::size_t i = 0; i < v; ++i) out[r * v + i] = p_[i];
    }
    return Error{};
  }
  Error Sample(const sampcert_batch& batch, uint64_t seed, uint64_t first_draw,
               uint64_t draws_per_row, int64_t* out) {
    for (std::size_t r = 0; r < batch.num_rows; ++r) {
      if (Error e = Self().Prepare(batch, r); e.code != ErrorCode::kOk) return e;
      for (uint64_t j = 0; j < draws_per_row; ++j) {
        const double u = CanonicalUniform(seed, batch.rows[r].row_id, first_draw + j);
        out[r * draws_per_row + j] = Token(u);
      }
    }
    return Error{};
  }

 protected:
  // p_ from the row's rewritten logits x (-inf outside the support) at temperature t: the arg-max
  // set uniformly at t = 0 or when the maximum is +inf, else exp((x - max) / scale) normalized
  // (scale is t, unless the logits were scaled already). A NaN is never the maximum and spreads.
  void FromLogits(const std::vector<double>& x, double t, double scale) {
    double m = -std::numeric_limits<double>::infinity();
    for (double e : x) m = std::max(m, e);
    p_.assign(x.size(), 0.0);
    double z = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (t == 0.0 || std::isinf(m)) {
        p_[i] = x[i] == m ? 1.0 : std::isnan(x[i]) ? x[i] : 0.0;
      } else {
        p_[i] = std::exp((x[i] - m) / scale);
      }
      z += p_[i];
    }
    for (double& e : p_) e /= z;
  }

  // The canonical inverse CDF in index order: the smallest i with u < C_i.
  int64_t Token(double u) const {
    double c = 0;
    int64_t last = -1;
    for (std::size_t i = 0; i < p_.size(); ++i) {
      if (p_[i] <= 0) continue;
      c += p_[i];
      last = static_cast<int64_t>(i);
      if (u < c) return last;
    }
    return last;
  }

  std::vector<double> p_;

 private:
  Derived& Self() { return static_cast<Derived&>(*this); }
};

}  // namespace sampcert::mutants

#endif  // SAMPCERT_TESTS_MUTANTS_EXACT_MUTANT_H_

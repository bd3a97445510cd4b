#include "impls/naive/naive_sampler.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "adapters/abi_conversions.h"
#include "adapters/builtin_adapter.h"

namespace sampcert::impls {
namespace {

template <typename S>
S Load(const void* logits, std::size_t i) {
  if constexpr (std::is_same_v<S, float>) {
    float f;
    std::memcpy(&f, static_cast<const char*>(logits) + 4 * i, 4);
    return f;
  } else {
    uint16_t b;
    std::memcpy(&b, static_cast<const char*>(logits) + 2 * i, 2);
    return Eigen::numext::bit_cast<S>(b);
  }
}

// Everything in S, each operation rounded to S (Eigen::half / bfloat16 arithmetic rounds the
// float result of every operation).
template <typename S>
Error RowIn(const sampcert_batch& batch, std::size_t r, std::vector<float>* probs,
            std::vector<float>* cdf) {
  const sampcert_row& row = batch.rows[r];
  const std::size_t v = static_cast<std::size_t>(batch.vocab);
  const S inf = S(std::numeric_limits<float>::infinity());
  const S t = S(row.temperature);
  std::vector<S> z(v);
  for (std::size_t i = 0; i < v; ++i) {
    z[i] = Load<S>(row.logits, i) / t;  // logits / temperature, in the input dtype
    if (row.mask != nullptr && row.mask[i] == 0) z[i] = -inf;  // masked_fill(-inf)
  }
  if (row.top_k > 0) {  // HF TopKLogitsWarper: min(top_k, V), keep values >= the k-th
    const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(row.top_k), v);
    std::vector<S> sorted = z;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k - 1),
                     sorted.end(), [](S a, S b) { return a > b; });
    const S kth = sorted[k - 1];
    for (S& x : z) {
      if (x < kth) x = -inf;
    }
  }
  auto softmax = [v](const std::vector<S>& in, std::vector<S>* out) {
    S m = -S(std::numeric_limits<float>::infinity());
    for (S x : in) m = x > m ? x : m;
    S sum = S(0.0f);
    out->resize(v);
    for (std::size_t i = 0; i < v; ++i) {
      (*out)[i] = S(std::exp(static_cast<float>(in[i] - m)));
      sum = sum + (*out)[i];
    }
    for (S& p : *out) p = p / sum;
  };
  if (row.top_p < 1.0f) {  // HF TopPLogitsWarper: ascending sort, cumsum, drop <= 1 - p
    std::vector<std::size_t> order(v);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return static_cast<float>(z[a]) < static_cast<float>(z[b]);
    });
    std::vector<S> sorted(v), p;
    for (std::size_t j = 0; j < v; ++j) sorted[j] = z[order[j]];
    softmax(sorted, &p);
    const S limit = S(1.0f) - S(row.top_p);
    S cum = S(0.0f);
    for (std::size_t j = 0; j + 1 < v; ++j) {  // the last (largest) token is always kept
      cum = cum + p[j];
      if (cum <= limit) z[order[j]] = -inf;
    }
  }
  std::vector<S> p;
  softmax(z, &p);
  probs->resize(v);
  cdf->resize(v);
  S cum = S(0.0f);
  for (std::size_t i = 0; i < v; ++i) {
    const float f = static_cast<float>(p[i]);
    if (std::isnan(f) || std::isinf(f) || f < 0.0f) {
      return Error{ErrorCode::kNumericalFailure,
                   fmt::format("row {}: probability tensor contains either inf, nan or element "
                               "< 0 (token {} has {})",
                               r, i, f),
                   static_cast<int64_t>(r)};
    }
    (*probs)[i] = f;
    cum = cum + p[i];  // the multinomial's cumulative sum, in the input dtype too
    (*cdf)[i] = static_cast<float>(cum);
  }
  if (!(cdf->back() > 0.0f)) {
    return Error{ErrorCode::kNumericalFailure,
                 fmt::format("row {}: invalid multinomial distribution (sum of probabilities "
                             "<= 0)",
                             r),
                 static_cast<int64_t>(r)};
  }
  return Error{};
}

}  // namespace

void NaiveSampler::Describe(sampcert_sampler_info* info) {
  info->name = "naive";
  info->version = "1";
  // The policies such code would claim if asked: HF's (the defaults), same-seed determinism.
  adapters::PoliciesToInfo(Policies{}, info);
  info->thread_safe = 1;
}

Error NaiveSampler::Row(const sampcert_batch& batch, std::size_t r) {
  if (batch.vocab == 0) return Error{ErrorCode::kEmptyVocab, "vocabulary size is 0"};
  switch (batch.dtype) {
    case SAMPCERT_DTYPE_F16: return RowIn<Eigen::half>(batch, r, &probs_, &cdf_);
    case SAMPCERT_DTYPE_BF16: return RowIn<Eigen::bfloat16>(batch, r, &probs_, &cdf_);
    default: return RowIn<float>(batch, r, &probs_, &cdf_);
  }
}

const sampcert_sampler_api* NaiveSamplerApi() {
  return adapters::BuiltinApi<NaiveSampler>::Table();
}

}  // namespace sampcert::impls

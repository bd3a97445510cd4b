#include "impls/floor_fix/floor_fix_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "adapters/abi_conversions.h"
#include "adapters/builtin_adapter.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::impls {

void FloorFixSampler::Describe(sampcert_sampler_info* info) {
  info->name = "floor_fix";
  info->version = "1";
  Policies p;  // HF's defaults, but: "non-finite values are replaced"
  p.nan_policy = NanPolicy::kMasked;
  adapters::PoliciesToInfo(p, info);
  info->thread_safe = 1;
}

Error FloorFixSampler::Row(const sampcert_batch& batch, std::size_t r) {
  const sampcert_row& row = batch.rows[r];
  const std::size_t v = static_cast<std::size_t>(batch.vocab);
  if (v == 0) return Error{ErrorCode::kEmptyVocab, "vocabulary size is 0"};
  const RowView view = adapters::ToRowView(batch, r);
  z_.resize(v);
  // logits.float() - logits.max(): torch.max propagates NaN.
  float m = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < v; ++i) {
    z_[i] = static_cast<float>(DecodeLogit(view.dtype, view.logits, i));
    m = std::isnan(z_[i]) || std::isnan(m) ? std::numeric_limits<float>::quiet_NaN()
                                           : std::max(m, z_[i]);
  }
  for (std::size_t i = 0; i < v; ++i) {
    z_[i] = (z_[i] - m) / row.temperature;
    if (!std::isfinite(z_[i])) z_[i] = kFloor;                    // the "fix"
    if (row.mask != nullptr && row.mask[i] == 0) z_[i] = kFloor;  // masked_fill(-1e4)
  }
  if (row.top_k > 0) {
    const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(row.top_k), v);
    std::vector<float> sorted = z_;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k - 1),
                     sorted.end(), std::greater<float>());
    const float kth = sorted[k - 1];
    for (float& x : z_) {
      if (x < kth) x = kFloor;
    }
  }
  auto softmax = [](const std::vector<float>& in, std::vector<float>* out) {
    const float mz = *std::max_element(in.begin(), in.end());
    float sum = 0.0f;
    out->resize(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      (*out)[i] = std::exp(in[i] - mz);
      sum += (*out)[i];
    }
    for (float& p : *out) p /= sum;
  };
  if (row.top_p < 1.0f) {
    std::vector<std::size_t> order(v);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return z_[a] < z_[b]; });
    std::vector<float> sorted(v), p;
    for (std::size_t j = 0; j < v; ++j) sorted[j] = z_[order[j]];
    softmax(sorted, &p);
    float cum = 0.0f;
    for (std::size_t j = 0; j + 1 < v; ++j) {
      cum += p[j];
      if (cum <= 1.0f - row.top_p) z_[order[j]] = kFloor;
    }
  }
  softmax(z_, &probs_);
  if (std::any_of(probs_.begin(), probs_.end(), [](float p) { return std::isnan(p); })) {
    std::fill(probs_.begin(), probs_.end(), 1.0f / static_cast<float>(v));  // the fallback
  }
  cdf_.resize(v);
  float cum = 0.0f;
  for (std::size_t i = 0; i < v; ++i) {
    cum += probs_[i];
    cdf_[i] = cum;
  }
  return Error{};
}

const sampcert_sampler_api* FloorFixSamplerApi() {
  return adapters::BuiltinApi<FloorFixSampler>::Table();
}

}  // namespace sampcert::impls

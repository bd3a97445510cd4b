// A sequential host model of stable_cuda's kernels: the same row_math.h functions, called in
// the kernels' order (maximum, regime, top-k radix select, top-p mass search, warp-order
// chunk sums, prefix, draw). The CPU unit tests check it against the reference and stable_cpu;
// on a GPU, the device test checks the kernels against it bit for bit. Host only.
#ifndef SAMPCERT_IMPLS_STABLE_CUDA_HOST_MODEL_H_
#define SAMPCERT_IMPLS_STABLE_CUDA_HOST_MODEL_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "impls/stable_cuda/row_math.h"

namespace sampcert::impls::cuda_math {

struct HostRowInput {
  const void* logits = nullptr;
  uint32_t dtype = kDTypeF32;
  const uint8_t* mask = nullptr;
  int64_t vocab = 0;
  float temperature = 1;
  int64_t top_k = 0;
  float top_p = 1;
  float min_p = 0;
};

class HostModelRow {
 public:
  explicit HostModelRow(const HostRowInput& in) : in_(in) { Prepare(); }

  RowStatus status() const { return status_; }
  const RowSetup& setup() const { return setup_; }
  const Thresholds& thresholds() const { return th_; }
  float Weight(int64_t i) const {
    return KeptWeight(SupportLogit(in_.logits, in_.dtype, in_.mask, i), setup_, th_);
  }
  double Total() const { return prefix_.back(); }
  double Probability(int64_t i) const { return static_cast<double>(Weight(i)) / Total(); }
  int64_t Draw(double u) const {
    return DrawToken(prefix_.data(), chunks_, in_.vocab, u, last_positive_,
                     [this](int64_t i) { return Weight(i); });
  }
  const std::vector<double>& prefix() const { return prefix_; }

 private:
  void Prepare() {
    const int64_t v = in_.vocab;
    float m = -Infinity();
    bool nan = false;
    for (int64_t i = 0; i < v; ++i) {
      const float x = SupportLogit(in_.logits, in_.dtype, in_.mask, i);
      if (x != x) nan = true;
      m = x > m ? x : m;
    }
    if (nan || m == -Infinity()) {
      status_ = nan ? RowStatus::kNanLogit : RowStatus::kEmptySupport;
      return;
    }
    setup_ = MakeRowSetup(m, in_.temperature);
    th_.min_p = in_.min_p;
    if (setup_.mode != Mode::kLimit && in_.top_k > 0 && in_.top_k < v) TopK();
    if (setup_.mode != Mode::kLimit && in_.top_p < 1.0f) TopP();
    chunks_ = (v + kChunk - 1) / kChunk;
    prefix_.assign(static_cast<std::size_t>(chunks_ + 1), 0.0);
    const auto weight_at = [this](int64_t i) { return Weight(i); };
    for (int64_t c = 0; c < chunks_; ++c) {
      const int64_t n = (c + 1) * kChunk < v ? kChunk : v - c * kChunk;
      prefix_[static_cast<std::size_t>(c + 1)] = ChunkSumWarpOrder(weight_at, c * kChunk, n);
    }
    PrefixInPlace(prefix_.data(), chunks_);
    for (int64_t i = v; i-- > 0;) {
      if (Weight(i) > 0.0f) {
        last_positive_ = i;
        break;
      }
    }
  }

  // Four histogram passes over the support, as the count-histogram and select kernels do.
  void TopK() {
    uint64_t k_left = static_cast<uint64_t>(in_.top_k);
    uint32_t prefix = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
      uint32_t hist[256] = {};
      for (int64_t i = 0; i < in_.vocab; ++i) {
        const float x = SupportLogit(in_.logits, in_.dtype, in_.mask, i);
        const uint32_t key = OrderedKey(x);
        if (x != -Infinity() && MatchesPrefix(key, prefix, shift)) ++hist[Digit(key, shift)];
      }
      if (shift == 24) {
        uint64_t support = 0;
        for (uint32_t h : hist) support += h;
        if (support < k_left) return;  // fewer than k tokens: keep all
      }
      prefix |= SelectTopKDigit(hist, &k_left) << shift;
    }
    th_.top_k_key = prefix;
  }

  void TopP() {
    const Thresholds after_top_k{th_.top_k_key, 0, 0.0f};
    uint64_t above = 0;
    uint32_t prefix = 0;
    double target = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
      uint64_t hist[256] = {};
      for (int64_t i = 0; i < in_.vocab; ++i) {
        const float x = SupportLogit(in_.logits, in_.dtype, in_.mask, i);
        const uint32_t key = OrderedKey(x);
        if (MatchesPrefix(key, prefix, shift)) {
          hist[Digit(key, shift)] += FixedMass(KeptWeight(x, setup_, after_top_k));
        }
      }
      if (shift == 24) {
        uint64_t z = 0;
        for (uint64_t h : hist) z += h;
        target = TopPTarget(in_.top_p, z);
      }
      prefix |= SelectTopPDigit(hist, target, &above) << shift;
    }
    th_.top_p_key = prefix;
  }

  HostRowInput in_;
  RowStatus status_ = RowStatus::kOk;
  RowSetup setup_;
  Thresholds th_;
  int64_t chunks_ = 0;
  std::vector<double> prefix_;
  int64_t last_positive_ = -1;
};

}  // namespace sampcert::impls::cuda_math

#endif  // SAMPCERT_IMPLS_STABLE_CUDA_HOST_MODEL_H_

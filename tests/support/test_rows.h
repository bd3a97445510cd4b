// Test support: rows built from float values in any dtype, owning their bit patterns.
#ifndef SAMPCERT_TESTS_SUPPORT_TEST_ROWS_H_
#define SAMPCERT_TESTS_SUPPORT_TEST_ROWS_H_

#include <Eigen/Core>
#include <cstdint>
#include <cstring>
#include <vector>

#include "sampcert/row.h"

namespace sampcert::testing_support {

// Owns one row's bit patterns and mask; view() is rebuilt on each call, so copies stay valid.
class TestRow {
 public:
  explicit TestRow(const std::vector<float>& logits, DType dtype = DType::kF32) {
    base_.dtype = dtype;
    base_.vocab = logits.size();
    for (float v : logits) {
      if (dtype == DType::kF32) {
        uint32_t b;
        std::memcpy(&b, &v, 4);
        bits32_.push_back(b);
      } else if (dtype == DType::kF16) {
        bits16_.push_back(Eigen::numext::bit_cast<uint16_t>(Eigen::half(v)));
      } else {
        bits16_.push_back(Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(v)));
      }
    }
  }
  RowView view() const {
    RowView v = base_;
    v.logits = base_.dtype == DType::kF32 ? static_cast<const void*>(bits32_.data())
                                          : static_cast<const void*>(bits16_.data());
    if (null_logits_) v.logits = nullptr;
    v.mask = mask_.empty() ? nullptr : mask_.data();
    v.prompt_tokens = prompt_.empty() ? nullptr : prompt_.data();
    v.num_prompt_tokens = prompt_.size();
    v.output_tokens = output_.empty() ? nullptr : output_.data();
    v.num_output_tokens = output_.size();
    v.bias_tokens = bias_tokens_.empty() ? nullptr : bias_tokens_.data();
    v.bias_values = bias_values_.empty() ? nullptr : bias_values_.data();
    v.num_bias = bias_tokens_.size();
    return v;
  }
  // Malformed rows, for the validation tests.
  TestRow& NullLogits() {
    null_logits_ = true;
    return *this;
  }
  TestRow& RawDType(int code) {
    base_.dtype = static_cast<DType>(code);
    return *this;
  }
  TestRow& Mask(std::vector<uint8_t> m) {
    mask_ = std::move(m);
    return *this;
  }
  TestRow& T(float t) {
    base_.temperature = t;
    return *this;
  }
  TestRow& TopK(int64_t k) {
    base_.top_k = k;
    return *this;
  }
  TestRow& TopP(float p) {
    base_.top_p = p;
    return *this;
  }
  TestRow& MinP(float p) {
    base_.min_p = p;
    return *this;
  }
  // The token history and its penalties (SPEC section 16).
  TestRow& History(std::vector<int64_t> prompt, std::vector<int64_t> output) {
    prompt_ = std::move(prompt);
    output_ = std::move(output);
    return *this;
  }
  // The logit bias and the minimum length (SPEC section 18).
  TestRow& Bias(std::vector<int64_t> ids, std::vector<float> values) {
    bias_tokens_ = std::move(ids);
    bias_values_ = std::move(values);
    return *this;
  }
  TestRow& MinTokens(int64_t min_tokens, int64_t eos) {
    base_.min_tokens = min_tokens;
    base_.eos_token_id = eos;
    return *this;
  }
  TestRow& Penalties(float repetition, float presence, float frequency) {
    base_.repetition_penalty = repetition;
    base_.presence_penalty = presence;
    base_.frequency_penalty = frequency;
    return *this;
  }
  // The mask given packed (SPEC section 19): the host packs Mask()'s bytes into words.
  TestRow& Packed() {
    base_.mask_layout = kMaskPacked;
    return *this;
  }
  TestRow& RowId(uint64_t id) {
    base_.row_id = id;
    return *this;
  }
  // The row's seed and what keys its draws (SPEC section 17: kSeedCall, kSeedOwn, kSeedUnseeded).
  TestRow& Seed(uint64_t seed, int64_t mode) {
    base_.seed = seed;
    base_.seed_mode = mode;
    return *this;
  }
  DType dtype() const { return base_.dtype; }
  std::size_t vocab() const { return base_.vocab; }

 private:
  RowView base_;
  std::vector<uint32_t> bits32_;
  std::vector<uint16_t> bits16_;
  std::vector<uint8_t> mask_;
  std::vector<int64_t> prompt_;
  std::vector<int64_t> output_;
  std::vector<int64_t> bias_tokens_;
  std::vector<float> bias_values_;
  bool null_logits_ = false;
};

}  // namespace sampcert::testing_support

#endif  // SAMPCERT_TESTS_SUPPORT_TEST_ROWS_H_

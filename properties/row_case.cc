#include "properties/row_case.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <cstring>

#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

RowView RowCase::view() const {
  RowView v;
  v.dtype = dtype;
  v.logits = dtype == DType::kF32 ? static_cast<const void*>(bits32.data())
                                  : static_cast<const void*>(bits16.data());
  v.vocab = vocab();
  v.mask = mask.empty() ? nullptr : mask.data();
  v.temperature = temperature;
  v.top_k = top_k;
  v.top_p = top_p;
  v.min_p = min_p;
  v.row_id = row_id;
  return v;
}

float RowCase::Logit(std::size_t i) const {
  const RowView v = view();
  return static_cast<float>(DecodeLogit(dtype, v.logits, i));
}

void RowCase::SetLogit(std::size_t i, float value) {
  switch (dtype) {
    case DType::kF32: std::memcpy(&bits32[i], &value, 4); break;
    case DType::kF16: bits16[i] = Eigen::numext::bit_cast<uint16_t>(Eigen::half(value)); break;
    case DType::kBF16: bits16[i] = Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(value)); break;
  }
}

adapters::Batch OneRow(const RowCase& row) {
  return adapters::Batch{row.dtype, row.vocab(), {row.view()}};
}

std::string Describe(const RowCase& row) {
  std::string logits;
  const std::size_t shown = std::min<std::size_t>(row.vocab(), 8);
  for (std::size_t i = 0; i < shown; ++i) {
    logits += fmt::format("{}{}", i ? "," : "", row.Logit(i));
  }
  if (shown < row.vocab()) logits += ",...";
  std::string masked;
  if (!row.mask.empty()) {
    std::size_t allowed = 0;
    for (uint8_t m : row.mask) allowed += m != 0;
    masked = fmt::format(" mask={}/{} allowed", allowed, row.vocab());
  }
  return fmt::format("{} V={} T={} top_k={} top_p={} min_p={}{} row_id={} logits=[{}] ({})",
                     DTypeName(row.dtype), row.vocab(), row.temperature, row.top_k, row.top_p,
                     row.min_p, masked, row.row_id, logits, row.family);
}

}  // namespace sampcert::properties

// Names and small validators for the public enums.
#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "sampcert/error.h"
#include "sampcert/policies.h"
#include "sampcert/row.h"

namespace sampcert {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "Ok";
    case ErrorCode::kInvalidTemperature: return "InvalidTemperature";
    case ErrorCode::kInvalidTopK: return "InvalidTopK";
    case ErrorCode::kInvalidTopP: return "InvalidTopP";
    case ErrorCode::kInvalidMinP: return "InvalidMinP";
    case ErrorCode::kNanLogit: return "NanLogit";
    case ErrorCode::kEmptySupport: return "EmptySupport";
    case ErrorCode::kEmptyVocab: return "EmptyVocab";
    case ErrorCode::kInvalidArgument: return "InvalidArgument";
    case ErrorCode::kInternal: return "Internal";
    case ErrorCode::kNumericalFailure: return "NumericalFailure";
    case ErrorCode::kUnsupported: return "Unsupported";
    case ErrorCode::kVersionMismatch: return "VersionMismatch";
    case ErrorCode::kOutOfMemory: return "OutOfMemory";
  }
  return "Unknown";
}

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
  }
  return "unknown";
}

std::size_t DTypeBytes(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kF16:
    case DType::kBF16: return 2;
  }
  return 0;
}

std::string ValidatePolicies(const Policies& p) {
  auto in = [](auto v, int lo, int hi) {
    const int x = static_cast<int>(v);
    return x >= lo && x <= hi;
  };
  if (!in(p.greedy_tie_break, 0, 2)) return "unknown greedy tie-break policy";
  if (!in(p.tie_rule, 0, 2)) return "unknown tie rule";
  if (p.top_k_tie_rule && !in(*p.top_k_tie_rule, 0, 2)) return "unknown top-k tie rule";
  if (p.top_p_tie_rule && !in(*p.top_p_tie_rule, 0, 2)) return "unknown top-p tie rule";
  // Written so that NaN fails too.
  if (!(p.draw_cost_ns_per_token >= 0 && p.draw_cost_ns_per_token < 1e9)) {
    return "draw cost per token must be finite, >= 0 and below 1 s";
  }
  if (!in(p.order, 0, 1)) return "unknown pipeline order";
  if (!in(p.nan_policy, 0, 1)) return "unknown NaN policy";
  if (!in(p.determinism, 0, 2)) return "unknown determinism level";
  if (!in(p.accuracy, 0, 2)) return "unknown accuracy class";
  std::array<int, 3> steps{};
  for (TruncationStep s : p.truncation_order) {
    if (!in(s, 0, 2)) return "unknown truncation step";
    ++steps[static_cast<int>(s)];
  }
  if (std::any_of(steps.begin(), steps.end(), [](int n) { return n != 1; })) {
    return "truncation order must name top-k, top-p and min-p once each";
  }
  // Written so that NaN fails too.
  if (!(p.greedy_threshold >= 0.0f) || !(p.greedy_threshold < 1e30f)) {
    return "greedy threshold must be a finite number >= 0";
  }
  return {};
}

}  // namespace sampcert

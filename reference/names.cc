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
    case ErrorCode::kInvalidDraft: return "InvalidDraft";
    case ErrorCode::kInvalidPenalty: return "InvalidPenalty";
    case ErrorCode::kInvalidLogitBias: return "InvalidLogitBias";
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
  // The names of the values are adapters/declarations.cc's; here only their range.
  auto bad = [](auto v) {
    const int32_t x = static_cast<int32_t>(v);
    return x < 0 || x >= kValueCount<decltype(v)>;
  };
  auto unknown = [](const char* what, auto v) {
    return std::string("unknown ") + what + " " + std::to_string(static_cast<int32_t>(v));
  };
  if (bad(p.greedy_tie_break)) return unknown("greedy tie-break", p.greedy_tie_break);
  if (bad(p.tie_rule)) return unknown("tie rule", p.tie_rule);
  if (p.top_k_tie_rule && bad(*p.top_k_tie_rule))
    return unknown("top-k tie rule", *p.top_k_tie_rule);
  if (p.top_p_tie_rule && bad(*p.top_p_tie_rule))
    return unknown("top-p tie rule", *p.top_p_tie_rule);
  // Written so that NaN fails too.
  if (!(p.draw_cost_ns_per_token >= 0 && p.draw_cost_ns_per_token < 1e9)) {
    return "draw cost per token must be finite, >= 0 and below 1 s";
  }
  if (bad(p.verify_scheme)) return unknown("verify scheme", p.verify_scheme);
  // Written so that NaN fails too.
  switch (p.verify_scheme) {
    case VerifyScheme::kExact:
      if (p.verify_threshold != 0 || p.verify_alpha != 0) {
        return "verify_threshold and verify_alpha are parameters of a lossy verify scheme: 0 "
               "with the exact scheme";
      }
      break;
    case VerifyScheme::kTypical:
      if (!(p.verify_threshold > 0 && p.verify_threshold <= 1) ||
          !(p.verify_alpha > 0 && p.verify_alpha <= 1)) {
        return "the typical verify scheme needs verify_threshold (epsilon) and verify_alpha "
               "(delta) in (0, 1]";
      }
      break;
    case VerifyScheme::kLenient:
      if (!(p.verify_threshold > 0 && p.verify_threshold < 1) || p.verify_alpha != 0) {
        return "the lenient verify scheme needs verify_threshold (the lenience) in (0, 1) and "
               "verify_alpha 0";
      }
      break;
  }
  if (bad(p.order)) return unknown("pipeline order", p.order);
  if (bad(p.nan_policy)) return unknown("NaN policy", p.nan_policy);
  if (bad(p.determinism)) return unknown("determinism level", p.determinism);
  if (bad(p.accuracy)) return unknown("accuracy class", p.accuracy);
  if (bad(p.repetition_history)) return unknown("repetition history", p.repetition_history);
  if (bad(p.additive_history)) return unknown("presence/frequency history", p.additive_history);
  std::array<int, 3> steps{};
  for (TruncationStep s : p.truncation_order) {
    if (bad(s)) return unknown("truncation step", s);
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

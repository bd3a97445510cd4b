#include "cli/reference_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <Eigen/Core>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sampcert/reference_distribution.h"
#include "sampcert/reference_sampler.h"

namespace sampcert::cli {
namespace {

std::string_view KeepName(KeepClass k) {
  switch (k) {
    case KeepClass::kOutsideSupport: return "outside-support";
    case KeepClass::kMustDrop: return "must-drop";
    case KeepClass::kMayKeep: return "may-keep";
    case KeepClass::kMustKeep: return "must-keep";
  }
  return "?";
}

std::string_view RegimeName(Regime r) {
  switch (r) {
    case Regime::kFinite: return "finite";
    case Regime::kGreedy: return "greedy (T = 0 limit)";
    case Regime::kPositiveInf: return "+inf limit";
  }
  return "?";
}

bool ParseDType(const std::string& s, DType* out) {
  if (s == "f32")
    *out = DType::kF32;
  else if (s == "f16")
    *out = DType::kF16;
  else if (s == "bf16")
    *out = DType::kBF16;
  else
    return false;
  return true;
}

}  // namespace

bool ParseRow(const ReferenceRequest& req, ParsedRow* parsed, std::ostream& err) {
  DType dtype;
  if (!ParseDType(req.dtype, &dtype)) {
    fmt::print(err, "error: --dtype must be f32, f16 or bf16, not '{}'\n", req.dtype);
    return false;
  }
  if (req.logits.empty()) {
    fmt::print(err, "error: --logits needs at least one value\n");
    return false;
  }
  if (!req.mask.empty() && req.mask.size() != req.logits.size()) {
    fmt::print(err, "error: --mask has {} entries for {} logits\n", req.mask.size(),
               req.logits.size());
    return false;
  }
  for (const std::string& text : req.logits) {
    char* end = nullptr;
    const float v = std::strtof(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0') {
      fmt::print(err, "error: logit '{}' is not a number (inf, -inf and nan are accepted)\n", text);
      return false;
    }
    if (dtype == DType::kF32) {
      uint32_t b;
      std::memcpy(&b, &v, 4);
      parsed->bits32.push_back(b);
    } else if (dtype == DType::kF16) {
      parsed->bits16.push_back(Eigen::numext::bit_cast<uint16_t>(Eigen::half(v)));
    } else {
      parsed->bits16.push_back(Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(v)));
    }
  }
  parsed->mask.assign(req.mask.begin(), req.mask.end());
  RowView& row = parsed->view;
  row.dtype = dtype;
  row.logits = dtype == DType::kF32 ? static_cast<const void*>(parsed->bits32.data())
                                    : static_cast<const void*>(parsed->bits16.data());
  row.vocab = req.logits.size();
  row.mask = parsed->mask.empty() ? nullptr : parsed->mask.data();
  row.temperature = req.temperature;
  row.top_k = req.top_k;
  row.top_p = req.top_p;
  row.min_p = req.min_p;
  row.row_id = req.row_id;
  return true;
}

int RunReference(const ReferenceRequest& req, std::ostream& out, std::ostream& err) {
  ParsedRow parsed;
  if (!ParseRow(req, &parsed, err)) return 2;
  const RowView& row = parsed.view;
  const DType dtype = row.dtype;
  const Expected<ReferenceDistribution> ref = ComputeReference(row, req.policies);
  if (!ref) {
    fmt::print(err, "invalid row ({}): {}\n", ErrorCodeName(ref.error().code), ref.error().message);
    return 1;
  }
  fmt::print(
      out, "regime: {}; support {} of {}; kept {}{}\n", RegimeName(ref->regime), ref->support_size,
      ref->vocab, ref->kept_size,
      ref->greedy_threshold_applied ? "; greedy threshold applied (declared deviation)" : "");
  fmt::print(out, "{:>8}  {:>14}  {:>24}  {}\n", "token", "logit", "probability", "class");
  for (std::size_t i = 0; i < ref->vocab; ++i) {
    fmt::print(out, "{:>8}  {:>14}  {:>24.17Lg}  {}\n", i,
               static_cast<double>(DecodeLogit(dtype, row.logits, i)), ref->probs[i],
               KeepName(ref->keep[i]));
  }
  if (req.draws > 0) {
    const ReferenceSampler sampler(ref->probs);
    std::vector<int64_t> tokens(static_cast<std::size_t>(req.draws));
    sampler.Draw(req.seed, req.row_id, 0, tokens);
    fmt::print(out, "draws (seed {}, row id {}):", req.seed, req.row_id);
    for (int64_t t : tokens) fmt::print(out, " {}", t);
    fmt::print(out, "\n");
  }
  return 0;
}

}  // namespace sampcert::cli

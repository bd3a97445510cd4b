#include "cli/reference_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "properties/row_case.h"
#include "results/strict_json.h"
#include "results/text.h"
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

namespace {

// --row FILE: every field of the row from a row file (SPEC section 11), bit-exact.
bool ParseRowFile(const ReferenceRequest& req, ParsedRow* parsed, std::ostream& err) {
  if (req.draws < 0 || req.draws > kMaxDraws) {
    fmt::print(err, "error: --draws must be in [0, {}], not {}\n", kMaxDraws, req.draws);
    return false;
  }
  // A regular file within the row file's size limit: a path to /dev/zero or a FIFO is refused
  // before anything is read.
  std::string text, why;
  if (!results::ReadRegularFile(req.row_file,
                                results::LimitsOf(results::JsonKind::kRowFile).max_bytes,
                                results::Symlinks::kFollow, &text, &why)) {
    fmt::print(err, "error: cannot read the row file: {}\n", results::EscapeForTerminal(why));
    return false;
  }
  Expected<properties::RowCase> row = properties::RowCaseFromRowFile(text);
  if (!row.ok()) {
    fmt::print(err, "error: {}: {}\n", results::EscapeForTerminal(req.row_file),
               results::EscapeForTerminal(row.error().message));
    return false;
  }
  parsed->bits32 = row->bits32;
  parsed->bits16 = row->bits16;
  parsed->mask = row->mask;
  parsed->prompt_tokens = row->prompt_tokens;
  parsed->output_tokens = row->output_tokens;
  parsed->bias_tokens = row->bias_tokens;
  parsed->bias_values = row->bias_values;
  RowView& v = parsed->view;
  v = row->view();  // then every buffer is pointed at parsed's copies, which outlive `row`
  v.logits = row->dtype == DType::kF32 ? static_cast<const void*>(parsed->bits32.data())
                                       : static_cast<const void*>(parsed->bits16.data());
  v.mask = parsed->mask.empty() ? nullptr : parsed->mask.data();
  v.prompt_tokens = parsed->prompt_tokens.empty() ? nullptr : parsed->prompt_tokens.data();
  v.output_tokens = parsed->output_tokens.empty() ? nullptr : parsed->output_tokens.data();
  v.bias_tokens = parsed->bias_tokens.empty() ? nullptr : parsed->bias_tokens.data();
  v.bias_values = parsed->bias_values.empty() ? nullptr : parsed->bias_values.data();
  return true;
}

}  // namespace

bool ParseRow(const ReferenceRequest& req, ParsedRow* parsed, std::ostream& err) {
  if (!req.row_file.empty()) return ParseRowFile(req, parsed, err);
  if (req.logits.empty()) {
    fmt::print(err, "error: give the row with --logits (and its options) or --row FILE\n");
    return false;
  }
  DType dtype;
  if (!ParseDType(req.dtype, &dtype)) {
    fmt::print(err, "error: --dtype must be f32, f16 or bf16, not '{}'\n", req.dtype);
    return false;
  }
  // --logits is split here, not by CLI11, which would drop empty fields: "1,,3" is a typo to
  // report, not the row [1, 3].
  std::vector<std::string> logits;
  for (const std::string& arg : req.logits) {
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = arg.find(',', start);
      logits.push_back(arg.substr(start, comma == std::string::npos ? comma : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (logits.empty()) {
    fmt::print(err, "error: --logits needs at least one value\n");
    return false;
  }
  if (req.draws < 0 || req.draws > kMaxDraws) {
    fmt::print(err, "error: --draws must be in [0, {}], not {}\n", kMaxDraws, req.draws);
    return false;
  }
  if (!req.mask.empty() && req.mask.size() != logits.size()) {
    fmt::print(err, "error: --mask has {} entries for {} logits\n", req.mask.size(), logits.size());
    return false;
  }
  for (int m : req.mask) {
    if (m != 0 && m != 1) {
      fmt::print(err, "error: --mask values must be 0 or 1, not {}\n", m);
      return false;
    }
  }
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const std::string& text = logits[i];
    if (text.empty()) {
      fmt::print(err, "error: --logits field {} is empty\n", i + 1);
      return false;
    }
    char* end = nullptr;
    const float v = std::strtof(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0') {
      fmt::print(err, "error: logit '{}' is not a number (inf, -inf and nan are accepted)\n",
                 results::EscapeForTerminal(text));
      return false;
    }
    // A finite value too large for the dtype would silently become an infinite logit, which
    // means something else entirely (SPEC: the +inf limit): say so instead.
    const bool written_inf =
        std::isinf(std::strtod(text.c_str(), nullptr)) &&
        (text.find("inf") != std::string::npos || text.find("INF") != std::string::npos ||
         text.find("Inf") != std::string::npos);
    const float in_dtype = dtype == DType::kF32   ? v
                           : dtype == DType::kF16 ? static_cast<float>(Eigen::half(v))
                                                  : static_cast<float>(Eigen::bfloat16(v));
    if (std::isinf(in_dtype) && !written_inf) {
      fmt::print(err, "error: logit '{}' overflows {} (write inf or -inf for an infinite logit)\n",
                 text, req.dtype);
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
  row.vocab = logits.size();
  row.mask = parsed->mask.empty() ? nullptr : parsed->mask.data();
  static_cast<RowParams&>(row) = req.params;
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
    // SPEC SEED-1: a row with its own seed draws by it; an unseeded row, by the call's seed.
    const uint64_t seed = DrawSeed(row, req.seed);
    sampler.Draw(seed, row.row_id, 0, tokens);
    fmt::print(out, "draws (seed {}{}, row id {}):", seed,
               row.seed_mode == kSeedOwn ? " (the row's)" : "", row.row_id);
    for (int64_t t : tokens) fmt::print(out, " {}", t);
    fmt::print(out, "\n");
  }
  return 0;
}

}  // namespace sampcert::cli

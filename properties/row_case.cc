#include "properties/row_case.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "adapters/row_fields.h"
#include "results/strict_json.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

RowView RowCase::view() const {
  RowView v;
  static_cast<RowParams&>(v) = *this;
  v.dtype = dtype;
  v.logits = dtype == DType::kF32 ? static_cast<const void*>(bits32.data())
                                  : static_cast<const void*>(bits16.data());
  v.vocab = vocab();
  v.mask = mask.empty() ? nullptr : mask.data();
  v.prompt_tokens = prompt_tokens.empty() ? nullptr : prompt_tokens.data();
  v.num_prompt_tokens = prompt_tokens.size();
  v.output_tokens = output_tokens.empty() ? nullptr : output_tokens.data();
  v.num_output_tokens = output_tokens.size();
  v.bias_tokens = bias_tokens.empty() ? nullptr : bias_tokens.data();
  v.bias_values = bias_values.empty() ? nullptr : bias_values.data();
  v.num_bias = std::min(bias_tokens.size(), bias_values.size());
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
  std::string history;
  if (row.HasHistory() || row.HasPenalties()) {  // the penalties are in RowParamsText
    history = fmt::format(" prompt=[{}] output=[{}]", fmt::join(row.prompt_tokens, ","),
                          fmt::join(row.output_tokens, ","));
  }
  std::vector<std::string> biases;  // "id:value", the row's bias list (SPEC section 18)
  for (std::size_t j = 0; j < row.bias_tokens.size() && j < row.bias_values.size(); ++j) {
    biases.push_back(fmt::format("{}:{}", row.bias_tokens[j], row.bias_values[j]));
  }
  const std::string bias =
      biases.empty() ? "" : fmt::format(" bias={{{}}}", fmt::join(biases, ","));
  return fmt::format("{} V={} {}{} {}{}{} logits=[{}] ({})", DTypeName(row.dtype), row.vocab(),
                     adapters::RowParamsText(row, false), masked,
                     adapters::RowParamsText(row, true), history, bias, logits, row.family);
}

std::string RowFileJson(const RowCase& row) {
  nlohmann::ordered_json j;
  j["format"] = kRowFileFormat;
  j["dtype"] = DTypeName(row.dtype);
  j["vocab"] = row.vocab();
  j["family"] = row.family;
  adapters::RowParamsToRowFile(row, &j);
  if (row.dtype == DType::kF32) {
    j["logit_bits"] = row.bits32;
  } else {
    j["logit_bits"] = row.bits16;
  }
  if (!row.mask.empty()) j["mask"] = row.mask;
  if (!row.prompt_tokens.empty()) j["prompt_tokens"] = row.prompt_tokens;
  if (!row.output_tokens.empty()) j["output_tokens"] = row.output_tokens;
  if (!row.bias_tokens.empty()) {
    j["bias_tokens"] = row.bias_tokens;
    std::vector<uint32_t> bits;
    for (float b : row.bias_values) bits.push_back(std::bit_cast<uint32_t>(b));
    j["bias_bits"] = bits;
  }
  return j.dump();
}

namespace {

using nlohmann::json;

// The fields a row file has besides the row's parameters (adapters/row_fields.h), which
// RowFileJson writes all but "mask" when there is none and the history's lists when they are
// empty; any other key is refused, so a misspelt field is never silently absent.
constexpr const char* kRowFileKeys[] = {"format",      "dtype",    "vocab",         "family",
                                        "logit_bits",  "mask",     "prompt_tokens", "output_tokens",
                                        "bias_tokens", "bias_bits"};

Error Bad(std::string why) { return Error{ErrorCode::kInvalidArgument, "row file: " + why}; }

// An exact unsigned integer field in [0, max]: a float, a boolean, a negative or a larger value
// is an error naming the field, never a truncated or wrapped value.
std::optional<Error> ReadUnsigned(const json& v, const std::string& name, uint64_t max,
                                  uint64_t* out) {
  const std::optional<uint64_t> x = results::ExactUnsigned(v, max);
  if (!x) {
    return Bad(fmt::format("{} must be an integer in [0, {}], not {}", name, max,
                           results::TypeInWords(v)));
  }
  *out = *x;
  return std::nullopt;
}

std::optional<Error> ReadString(const json& j, const char* name, bool required, std::string* out) {
  if (!j.contains(name)) {
    return required ? std::optional<Error>(Bad(fmt::format("{} is missing", name))) : std::nullopt;
  }
  if (!j[name].is_string()) {
    return Bad(fmt::format("{} must be a string, not {}", name, results::TypeInWords(j[name])));
  }
  *out = j[name].get<std::string>();
  return std::nullopt;
}

std::optional<Error> ReadLogits(const json& j, RowCase* row) {
  if (!j.contains("logit_bits") || !j["logit_bits"].is_array()) {
    return Bad("logit_bits must be an array of bit patterns");
  }
  const bool f32 = row->dtype == DType::kF32;
  const uint64_t max = f32 ? UINT32_MAX : UINT16_MAX;
  std::size_t i = 0;
  for (const json& b : j["logit_bits"]) {
    uint64_t v = 0;
    if (auto e = ReadUnsigned(b, fmt::format("logit_bits[{}]", i++), max, &v)) return e;
    if (f32) {
      row->bits32.push_back(static_cast<uint32_t>(v));
    } else {
      row->bits16.push_back(static_cast<uint16_t>(v));
    }
  }
  return std::nullopt;
}

std::optional<Error> ReadMask(const json& j, RowCase* row) {
  if (!j.contains("mask")) return std::nullopt;
  // IN-3: a byte per token, 0 masked and any other value allowed (planned rows use 1..255).
  if (!j["mask"].is_array()) return Bad("mask must be an array of bytes (0 masked, else allowed)");
  std::size_t i = 0;
  for (const json& m : j["mask"]) {
    uint64_t v = 0;
    if (auto e = ReadUnsigned(m, fmt::format("mask[{}]", i++), UINT8_MAX, &v)) return e;
    row->mask.push_back(static_cast<uint8_t>(v));
  }
  if (row->mask.size() != row->vocab()) {
    return Bad(fmt::format("mask has {} entries for {} logits", row->mask.size(), row->vocab()));
  }
  return std::nullopt;
}

// A history list (SPEC section 16): exact 64-bit integers. Whether each is a token id of the
// row is the row's validation (INV-8), which names the list and the index as this does.
std::optional<Error> ReadTokens(const json& j, const char* name, std::vector<int64_t>* out) {
  if (!j.contains(name)) return std::nullopt;
  if (!j[name].is_array()) return Bad(fmt::format("{} must be an array of token ids", name));
  std::size_t i = 0;
  for (const json& t : j[name]) {
    const std::optional<int64_t> v = results::ExactSigned(t);
    if (!v) {
      return Bad(
          fmt::format("{}[{}] must be a 64-bit integer, not {}", name, i, results::TypeInWords(t)));
    }
    out->push_back(*v);
    ++i;
  }
  return std::nullopt;
}

// The logit bias (SPEC section 18): the ids, and the biases as fp32 bit patterns (the bits
// decide, as the row's other floats; +-inf has no JSON number). Whether each id is valid and
// distinct, and each bias not NaN, is the row's validation (INV-9).
std::optional<Error> ReadBias(const json& j, RowCase* row) {
  if (j.contains("bias_tokens") != j.contains("bias_bits")) {
    return Bad("bias_tokens and bias_bits go together");
  }
  if (!j.contains("bias_tokens")) return std::nullopt;
  if (auto e = ReadTokens(j, "bias_tokens", &row->bias_tokens)) return e;
  if (!j["bias_bits"].is_array()) return Bad("bias_bits must be an array of fp32 bit patterns");
  std::size_t i = 0;
  for (const json& b : j["bias_bits"]) {
    uint64_t v = 0;
    if (auto e = ReadUnsigned(b, fmt::format("bias_bits[{}]", i++), UINT32_MAX, &v)) return e;
    row->bias_values.push_back(std::bit_cast<float>(static_cast<uint32_t>(v)));
  }
  if (row->bias_values.size() != row->bias_tokens.size()) {
    return Bad(fmt::format("bias_tokens has {} entries and bias_bits {}", row->bias_tokens.size(),
                           row->bias_values.size()));
  }
  return std::nullopt;
}

}  // namespace

Expected<RowCase> RowCaseFromRowFile(const std::string& text) {
  json j;
  std::string why;
  if (!results::ParseJson(text, results::JsonKind::kRowFile, &j, &why)) {
    return Error{ErrorCode::kInvalidArgument, why};  // says "row file ..." itself
  }
  if (!j.is_object()) return Bad("not a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (std::find(std::begin(kRowFileKeys), std::end(kRowFileKeys), key) ==
            std::end(kRowFileKeys) &&
        !adapters::IsRowFileKey(key)) {
      return Bad(fmt::format("unknown field \"{}\"", key));
    }
  }
  std::string format, dtype;
  if (auto e = ReadString(j, "format", true, &format)) return *e;
  if (format != kRowFileFormat)
    return Bad(fmt::format("\"format\" must be \"{}\"", kRowFileFormat));
  RowCase row;
  if (auto e = ReadString(j, "dtype", true, &dtype)) return *e;
  if (dtype == "f32") {
    row.dtype = DType::kF32;
  } else if (dtype == "f16") {
    row.dtype = DType::kF16;
  } else if (dtype == "bf16") {
    row.dtype = DType::kBF16;
  } else {
    return Bad(fmt::format("dtype must be f32, f16 or bf16, not '{}'", dtype));
  }
  if (auto e = ReadString(j, "family", false, &row.family)) return *e;
  if (auto e = ReadLogits(j, &row)) return *e;
  if (j.contains("vocab")) {
    uint64_t vocab = 0;
    if (auto e = ReadUnsigned(j["vocab"], "vocab", UINT64_MAX, &vocab)) return *e;
    if (vocab != row.vocab()) {
      return Bad(fmt::format("vocab is {} but logit_bits has {} entries", vocab, row.vocab()));
    }
  }
  if (auto e = ReadMask(j, &row)) return *e;
  if (auto e = ReadTokens(j, "prompt_tokens", &row.prompt_tokens)) return *e;
  if (auto e = ReadTokens(j, "output_tokens", &row.output_tokens)) return *e;
  if (auto e = ReadBias(j, &row)) return *e;
  if (auto e = adapters::RowParamsFromRowFile(j, &row)) return *e;
  return row;
}

}  // namespace sampcert::properties

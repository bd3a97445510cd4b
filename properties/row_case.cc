#include "properties/row_case.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

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

std::string RowFileJson(const RowCase& row) {
  nlohmann::ordered_json j;
  j["format"] = kRowFileFormat;
  j["dtype"] = DTypeName(row.dtype);
  j["vocab"] = row.vocab();
  j["family"] = row.family;
  auto scalar = [&](const char* name, float v) {
    j[name] =
        std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(fmt::format("{}", v));
    j[std::string(name) + "_bits"] = std::bit_cast<uint32_t>(v);
  };
  scalar("temperature", row.temperature);
  j["top_k"] = row.top_k;
  scalar("top_p", row.top_p);
  scalar("min_p", row.min_p);
  j["row_id"] = row.row_id;
  if (row.dtype == DType::kF32) {
    j["logit_bits"] = row.bits32;
  } else {
    j["logit_bits"] = row.bits16;
  }
  if (!row.mask.empty()) j["mask"] = row.mask;
  return j.dump();
}

Expected<RowCase> RowCaseFromRowFile(const std::string& text) {
  auto bad = [](std::string why) {
    return Error{ErrorCode::kInvalidArgument, "row file: " + std::move(why)};
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    return bad(fmt::format("not JSON ({})", e.what()));
  }
  if (!j.is_object()) return bad("not a JSON object");
  if (j.value("format", "") != kRowFileFormat) {
    return bad(fmt::format("\"format\" must be \"{}\"", kRowFileFormat));
  }
  RowCase row;
  try {
    const std::string dtype = j.at("dtype").get<std::string>();
    if (dtype == "f32") {
      row.dtype = DType::kF32;
    } else if (dtype == "f16") {
      row.dtype = DType::kF16;
    } else if (dtype == "bf16") {
      row.dtype = DType::kBF16;
    } else {
      return bad(fmt::format("dtype must be f32, f16 or bf16, not '{}'", dtype));
    }
    row.family = j.value("family", "");
    if (row.dtype == DType::kF32) {
      row.bits32 = j.at("logit_bits").get<std::vector<uint32_t>>();
    } else {
      for (const auto& b : j.at("logit_bits")) {
        const uint64_t v = b.get<uint64_t>();
        if (v > 0xffff) return bad(fmt::format("logit_bits value {} is not a 16-bit pattern", v));
        row.bits16.push_back(static_cast<uint16_t>(v));
      }
    }
    if (j.contains("vocab") && j["vocab"].get<uint64_t>() != row.vocab()) {
      return bad(fmt::format("vocab is {} but logit_bits has {} entries",
                             j["vocab"].get<uint64_t>(), row.vocab()));
    }
    if (j.contains("mask")) {
      row.mask = j["mask"].get<std::vector<uint8_t>>();
      if (row.mask.size() != row.vocab()) {
        return bad(fmt::format("mask has {} entries for {} logits", row.mask.size(), row.vocab()));
      }
    }
    auto scalar = [&](const char* name, float* out) -> std::optional<Error> {
      const std::string bits_name = std::string(name) + "_bits";
      if (!j.contains(bits_name)) return bad(fmt::format("{} is missing", bits_name));
      *out = std::bit_cast<float>(j[bits_name].get<uint32_t>());
      if (j.contains(name) && j[name].is_number()) {
        const float said = j[name].get<float>();
        if (said != *out && !(std::isnan(said) && std::isnan(*out))) {
          return bad(fmt::format("{} is {} but {} says {}", name, said, bits_name, *out));
        }
      }
      return std::nullopt;
    };
    for (auto [name, out] : {std::pair{"temperature", &row.temperature},
                             std::pair{"top_p", &row.top_p}, std::pair{"min_p", &row.min_p}}) {
      if (auto e = scalar(name, out)) return *e;
    }
    row.top_k = j.at("top_k").get<int64_t>();
    row.row_id = j.at("row_id").get<uint64_t>();
  } catch (const std::exception& e) {
    return bad(e.what());
  }
  return row;
}

}  // namespace sampcert::properties

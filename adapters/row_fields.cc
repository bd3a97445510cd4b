#include "adapters/row_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "adapters/declarations.h"
#include "results/result_json.h"
#include "results/strict_json.h"

namespace sampcert::adapters {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr double kInf = std::numeric_limits<double>::infinity();

// sampcert_row's member: its name and offset, from one spelling.
#define SAMPCERT_ROW_ABI(m) .abi_member = #m, .abi_offset = offsetof(sampcert_row, m)

// ---- The fields, in RowParams' order. To add one, read row_fields.h's opening. ----
// Each row names every column but those at their defaults (no capability, not a key, MINOR 0).
constexpr RowField kRowFields[] = {
    {.name = "temperature",
     .member = &RowParams::temperature,
     SAMPCERT_ROW_ABI(temperature),
     .wire = "temperature",
     .wire_offset = 0,
     .row_file_key = "temperature",
     .flag = "--temperature,-t",
     .help = "Temperature >= 0",
     .label = "T",
     .range = "[0, inf)",
     .lo = 0,
     .hi = kInf,
     .hi_open = true,
     .invalid = ErrorCode::kInvalidTemperature},
    {.name = "top_k",
     .member = &RowParams::top_k,
     SAMPCERT_ROW_ABI(top_k),
     .wire = "top_k",
     .wire_offset = 16,
     .row_file_key = "top_k",
     .flag = "--top-k",
     .help = "top_k (0 = off)",
     .label = "top_k",
     .range = "[0, 2^63)",
     .lo = 0,
     .hi = 0x1p63,
     .hi_open = true,
     .invalid = ErrorCode::kInvalidTopK,
     .capability = SAMPCERT_CAP_TOP_K},
    {.name = "top_p",
     .member = &RowParams::top_p,
     SAMPCERT_ROW_ABI(top_p),
     .wire = "top_p",
     .wire_offset = 4,
     .row_file_key = "top_p",
     .flag = "--top-p",
     .help = "top_p (1 = off)",
     .label = "top_p",
     .range = "(0, 1]",
     .lo = 0,
     .hi = 1,
     .lo_open = true,
     .invalid = ErrorCode::kInvalidTopP,
     .capability = SAMPCERT_CAP_TOP_P},
    {.name = "min_p",
     .member = &RowParams::min_p,
     SAMPCERT_ROW_ABI(min_p),
     .wire = "min_p",
     .wire_offset = 8,
     .row_file_key = "min_p",
     .flag = "--min-p",
     .help = "min_p (0 = off)",
     .label = "min_p",
     .range = "[0, 1)",
     .lo = 0,
     .hi = 1,
     .hi_open = true,
     .invalid = ErrorCode::kInvalidMinP,
     .capability = SAMPCERT_CAP_MIN_P},
    {.name = "row_id",
     .member = &RowParams::row_id,
     SAMPCERT_ROW_ABI(row_id),
     .wire = "row_id",
     .wire_offset = 24,
     .row_file_key = "row_id",
     .flag = "--row-id",
     .help = "Row id of the draw",
     .label = "row_id",
     .range = "[0, 2^64)",
     .lo = 0,
     .hi = 0x1p64,
     .hi_open = true,
     .key = true},
};

#undef SAMPCERT_ROW_ABI

constexpr std::size_t Bytes(const RowMember& m) {
  return m.index() == 0 ? sizeof(float) : sizeof(int64_t);
}

// The exec protocol's row header: every field inside it, aligned to its size, none overlapping
// another or the flags, and no byte left over (a gap would travel as garbage).
consteval bool RowHeaderTiles() {
  std::size_t used = 4;  // the flags
  for (const RowField& f : kRowFields) {
    const std::size_t n = Bytes(f.member);
    if (f.wire_offset % n != 0 || f.wire_offset + n > kRowHeaderBytes) return false;
    if (f.wire_offset < kRowFlagsOffset + 4 && kRowFlagsOffset < f.wire_offset + n) return false;
    for (const RowField& g : kRowFields) {
      if (&g != &f && f.wire_offset < g.wire_offset + Bytes(g.member) &&
          g.wire_offset < f.wire_offset + n) {
        return false;
      }
    }
    used += n;
  }
  return used == kRowHeaderBytes;
}
static_assert(RowHeaderTiles(), "kRowFields' wire offsets must tile the 32-byte row header");

// The ABI members of the MINOR 0 row: each inside the struct, of its field's size.
consteval bool AbiMembersFit() {
  for (const RowField& f : kRowFields) {
    if (f.abi_offset + Bytes(f.member) > sizeof(sampcert_row)) return false;
  }
  return true;
}
static_assert(AbiMembersFit());

Error Bad(std::string why) { return Error{ErrorCode::kInvalidArgument, "row file: " + why}; }

// A float field: the fp32 bit pattern decides; the decimal beside it, when given, must be that
// value (a number, or the text "inf" / "-inf" / "nan" for a non-finite one).
std::optional<Error> ReadFloat(const json& j, const std::string& name, float* out) {
  const std::string bits_name = name + "_bits";
  if (!j.contains(bits_name)) return Bad(fmt::format("{} is missing", bits_name));
  const std::optional<uint64_t> bits = results::ExactUnsigned(j[bits_name], UINT32_MAX);
  if (!bits) {
    return Bad(fmt::format("{} must be an integer in [0, {}], not {}", bits_name, UINT32_MAX,
                           results::TypeInWords(j[bits_name])));
  }
  *out = std::bit_cast<float>(static_cast<uint32_t>(*bits));
  if (!j.contains(name)) return std::nullopt;
  const json& said = j[name];
  const bool agrees = said.is_number() ? (said.get<float>() == *out ||
                                          (std::isnan(said.get<float>()) && std::isnan(*out)))
                                       : said.is_string() && !std::isfinite(*out) &&
                                             said.get<std::string>() == fmt::format("{}", *out);
  if (!agrees) {
    return Bad(fmt::format("{} is {} but {} says {}", name, said.dump(), bits_name, *out));
  }
  return std::nullopt;
}

std::optional<Error> ReadInt(const json& j, const std::string& name, int64_t* out) {
  if (!j.contains(name)) return Bad(fmt::format("{} is missing", name));
  const std::optional<int64_t> v = results::ExactSigned(j[name]);
  if (!v) {
    return Bad(
        fmt::format("{} must be a 64-bit integer, not {}", name, results::TypeInWords(j[name])));
  }
  *out = *v;
  return std::nullopt;
}

std::optional<Error> ReadUnsigned(const json& j, const std::string& name, uint64_t* out) {
  if (!j.contains(name)) return Bad(fmt::format("{} is missing", name));
  const std::optional<uint64_t> v = results::ExactUnsigned(j[name], UINT64_MAX);
  if (!v) {
    return Bad(fmt::format("{} must be an integer in [0, {}], not {}", name, UINT64_MAX,
                           results::TypeInWords(j[name])));
  }
  *out = *v;
  return std::nullopt;
}

}  // namespace

std::span<const RowField> RowFields() { return kRowFields; }

const RowField* FindRowField(std::string_view name) {
  for (const RowField& f : kRowFields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string_view RowFieldType(const RowField& field) {
  constexpr std::string_view kNames[] = {"f32", "i64", "u64"};
  return kNames[field.member.index()];
}

std::size_t RowFieldBytes(const RowField& field) { return Bytes(field.member); }

RowParams RowParamsFromAbi(const sampcert_row& row) {
  RowParams p;
  const char* base = reinterpret_cast<const char*>(&row);
  for (const RowField& f : kRowFields) {
    VisitRowField(f, p, [&](auto& v) { std::memcpy(&v, base + f.abi_offset, sizeof v); });
  }
  return p;
}

void RowParamsToAbi(const RowParams& params, sampcert_row* row) {
  char* base = reinterpret_cast<char*>(row);
  for (const RowField& f : kRowFields) {
    VisitRowField(f, params, [&](const auto& v) { std::memcpy(base + f.abi_offset, &v, sizeof v); });
  }
}

void WriteRowHeader(const RowParams& params, uint32_t flags, char* out) {
  std::memset(out, 0, kRowHeaderBytes);
  std::memcpy(out + kRowFlagsOffset, &flags, sizeof flags);
  for (const RowField& f : kRowFields) {
    VisitRowField(f, params, [&](const auto& v) { std::memcpy(out + f.wire_offset, &v, sizeof v); });
  }
}

RowParams ReadRowHeader(const char* in, uint32_t* flags) {
  RowParams p;
  std::memcpy(flags, in + kRowFlagsOffset, sizeof *flags);
  for (const RowField& f : kRowFields) {
    VisitRowField(f, p, [&](auto& v) { std::memcpy(&v, in + f.wire_offset, sizeof v); });
  }
  return p;
}

void RowParamsToRowFile(const RowParams& params, ordered_json* out) {
  ordered_json& j = *out;
  for (const RowField& f : kRowFields) {
    const std::string key(f.row_file_key);
    VisitRowField(f, params, [&](const auto& v) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(v)>, float>) {
        j[key] = std::isfinite(v) ? ordered_json(v) : ordered_json(fmt::format("{}", v));
        j[key + "_bits"] = std::bit_cast<uint32_t>(v);
      } else {
        j[key] = v;
      }
    });
  }
}

std::optional<Error> RowParamsFromRowFile(const json& j, RowParams* out) {
  for (const RowField& f : kRowFields) {
    const std::string key(f.row_file_key);
    std::optional<Error> e = VisitRowField(f, *out, [&](auto& v) {
      using T = std::remove_cvref_t<decltype(v)>;
      if constexpr (std::is_same_v<T, float>) {
        return ReadFloat(j, key, &v);
      } else if constexpr (std::is_same_v<T, int64_t>) {
        return ReadInt(j, key, &v);
      } else {
        return ReadUnsigned(j, key, &v);
      }
    });
    if (e) return e;
  }
  return std::nullopt;
}

bool IsRowFileKey(std::string_view key) {
  for (const RowField& f : kRowFields) {
    if (key == f.row_file_key) return true;
    if (f.member.index() == 0 && key.size() == f.row_file_key.size() + 5 &&
        key.starts_with(f.row_file_key) && key.ends_with("_bits")) {
      return true;
    }
  }
  return false;
}

std::string RowParamsText(const RowParams& params, bool keys) {
  std::string out;
  for (const RowField& f : kRowFields) {
    if (f.key != keys) continue;
    VisitRowField(f, params, [&](const auto& v) {
      out += fmt::format("{}{}={}", out.empty() ? "" : " ", f.label, v);
    });
  }
  return out;
}

bool SameDistributionParams(const RowParams& a, const RowParams& b) {
  for (const RowField& f : kRowFields) {
    if (f.key) continue;
    const bool same = VisitRowField(f, a, [&](const auto& va) {
      return VisitRowField(f, b, [&](const auto& vb) { return std::memcmp(&va, &vb, sizeof va) == 0; });
    });
    if (!same) return false;
  }
  return true;
}

json RowFieldsDump() {
  const RowParams defaults;
  json fields = json::array();
  for (const RowField& f : kRowFields) {
    json def = VisitRowField(f, defaults, [](const auto& v) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(v)>, float>) {
        return results::Number(v);
      } else {
        return json(v);
      }
    });
    json capability;
    for (const Capability& c : Capabilities()) {
      if (c.bit == f.capability) capability = c.name;
    }
    fields.push_back({{"name", f.name},
                      {"type", RowFieldType(f)},
                      {"default", def},
                      {"abi_member", f.abi_member},
                      {"abi_offset", f.abi_offset},
                      {"wire", f.wire},
                      {"wire_offset", f.wire_offset},
                      {"row_file_key", f.row_file_key},
                      {"flag", f.flag},
                      {"label", f.label},
                      {"range", f.range},
                      {"capability", capability},
                      {"key", f.key},
                      {"minor", f.minor}});
  }
  return {{"header_bytes", kRowHeaderBytes}, {"flags_offset", kRowFlagsOffset}, {"fields", fields}};
}

}  // namespace sampcert::adapters

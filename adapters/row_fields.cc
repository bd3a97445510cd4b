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

constexpr std::size_t Bytes(const RowMember& m) {
  return m.index() == 0 ? sizeof(float) : sizeof(int64_t);
}

// Whether [a, a + n) and [b, b + m) overlap.
constexpr bool Overlap(std::size_t a, std::size_t n, std::size_t b, std::size_t m) {
  return a < b + m && b < a + n;
}

// The exec protocol's row header: every field inside it, aligned to its size, none overlapping
// another, the flags or the lists' counts (a gap, such as the 4 bytes after the frequency
// penalty at byte 40, travels as zeros); the fields of 1.4 (MINOR <= 3) inside its 32 bytes,
// those of 1.5 (MINOR 4 and 5) inside its 80, the later ones past them (an older child reads
// the first bytes as before).
consteval bool RowHeaderTiles() {
  for (const RowField& f : kRowFields) {
    if (!f.OnWire()) continue;
    const std::size_t n = Bytes(f.member);
    if (f.wire_offset % n != 0 || f.wire_offset + n > kRowHeaderBytes) return false;
    if ((f.minor <= 3) != (f.wire_offset + n <= kRowHeaderBytesMinor4)) return false;
    if ((f.minor <= 5) != (f.wire_offset + n <= kRowHeaderBytesMinor5)) return false;
    if (Overlap(f.wire_offset, n, kRowFlagsOffset, 4) ||
        Overlap(f.wire_offset, n, kRowPromptCountOffset, 8) ||
        Overlap(f.wire_offset, n, kRowOutputCountOffset, 8) ||
        Overlap(f.wire_offset, n, kRowBiasCountOffset, 8)) {
      return false;
    }
    for (const RowField& g : kRowFields) {
      if (&g != &f && g.OnWire() && Overlap(f.wire_offset, n, g.wire_offset, Bytes(g.member))) {
        return false;
      }
    }
  }
  return kRowHeaderBytes % 8 == 0 && kRowHeaderBytesMinor5 % 8 == 0 &&
         kRowHeaderBytesMinor4 % 8 == 0 && kRowOutputCountOffset + 8 <= kRowHeaderBytesMinor5 &&
         kRowPromptCountOffset >= kRowHeaderBytesMinor4 &&
         kRowBiasCountOffset >= kRowHeaderBytesMinor5 && kRowBiasCountOffset + 8 <= kRowHeaderBytes;
}
static_assert(RowHeaderTiles(), "kRowFields' wire offsets must lie in the row header, apart");

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

// Whether the field of a later ABI MINOR is at its default in `p` (then the row file and the
// report text leave it out, and they read as they did before it).
bool LaterAndDefault(const RowField& f, const RowParams& p) {
  if (f.minor == 0) return false;
  const RowParams defaults;
  return VisitRowField(f, p, [&](const auto& v) {
    return VisitRowField(f, defaults,
                         [&](const auto& d) { return std::memcmp(&v, &d, sizeof v) == 0; });
  });
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
    if (f.abi_offset + Bytes(f.member) > row.struct_size) continue;  // an older layout's row
    VisitRowField(f, p, [&](auto& v) { std::memcpy(&v, base + f.abi_offset, sizeof v); });
  }
  return p;
}

void RowParamsToAbi(const RowParams& params, sampcert_row* row) {
  char* base = reinterpret_cast<char*>(row);
  for (const RowField& f : kRowFields) {
    VisitRowField(f, params,
                  [&](const auto& v) { std::memcpy(base + f.abi_offset, &v, sizeof v); });
  }
}

void WriteRowHeader(const RowParams& params, uint32_t flags, std::size_t header_bytes, char* out) {
  std::memset(out, 0, header_bytes);
  std::memcpy(out + kRowFlagsOffset, &flags, sizeof flags);
  for (const RowField& f : kRowFields) {
    if (!f.OnWire() || f.wire_offset + Bytes(f.member) > header_bytes) continue;
    VisitRowField(f, params,
                  [&](const auto& v) { std::memcpy(out + f.wire_offset, &v, sizeof v); });
  }
}

RowParams ReadRowHeader(const char* in, std::size_t header_bytes, uint32_t* flags) {
  RowParams p;
  std::memcpy(flags, in + kRowFlagsOffset, sizeof *flags);
  for (const RowField& f : kRowFields) {
    if (!f.OnWire() || f.wire_offset + Bytes(f.member) > header_bytes) continue;
    VisitRowField(f, p, [&](auto& v) { std::memcpy(&v, in + f.wire_offset, sizeof v); });
  }
  return p;
}

RowParams WireParams(const RowParams& params) {
  RowParams p = params;
  if (p.repetition_penalty == 0.0f) p.repetition_penalty = 1.0f;  // both are off (PEN-2)
  return p;
}

bool RowHeaderCarries(const RowParams& params, std::size_t header_bytes) {
  const RowParams p = WireParams(params);
  const RowParams defaults;
  for (const RowField& f : kRowFields) {
    if (f.OnWire() && f.wire_offset + Bytes(f.member) <= header_bytes) continue;
    const bool at_default = VisitRowField(f, p, [&](const auto& v) {
      return VisitRowField(f, defaults,
                           [&](const auto& d) { return std::memcmp(&v, &d, sizeof v) == 0; });
    });
    if (!at_default) return false;
  }
  return true;
}

void RowParamsToRowFile(const RowParams& params, ordered_json* out) {
  ordered_json& j = *out;
  for (const RowField& f : kRowFields) {
    if (LaterAndDefault(f, params)) continue;
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
    if (f.minor > 0 && !j.contains(key)) continue;  // an older row file: the default
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
    if (f.key != keys || LaterAndDefault(f, params)) continue;
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
      return VisitRowField(f, b,
                           [&](const auto& vb) { return std::memcmp(&va, &vb, sizeof va) == 0; });
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
    const json capability = f.capability.bit != 0 ? json(f.capability.name) : json();
    fields.push_back({{"name", f.name},
                      {"type", RowFieldType(f)},
                      {"default", def},
                      {"abi_member", f.abi_member},
                      {"abi_offset", f.abi_offset},
                      {"wire", f.OnWire() ? json(f.wire) : json()},
                      {"wire_offset", f.OnWire() ? json(f.wire_offset) : json()},
                      {"row_file_key", f.row_file_key},
                      {"flag", f.flag},
                      {"label", f.label},
                      {"range", f.range},
                      {"capability", capability},
                      {"key", f.key},
                      {"minor", f.minor}});
  }
  return {{"header_bytes", kRowHeaderBytes},
          {"header_bytes_minor5", kRowHeaderBytesMinor5},
          {"header_bytes_minor4", kRowHeaderBytesMinor4},
          {"flags_offset", kRowFlagsOffset},
          {"prompt_count_offset", kRowPromptCountOffset},
          {"output_count_offset", kRowOutputCountOffset},
          {"bias_count_offset", kRowBiasCountOffset},
          {"fields", fields}};
}

}  // namespace sampcert::adapters

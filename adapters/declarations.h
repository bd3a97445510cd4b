// What a sampler declares (SPEC section 4, the ABI's sampcert_sampler_info), written once: a
// table per vocabulary (each value's ABI constant, report name and label), a table of the
// capability bits and one list of the declaration's fields. The ABI conversion, the worker's
// wire format, report.json, `sampcert info`, the command line, the exec protocol and the Python
// helper (checked by ctest declarations.in_sync) all read these tables.
#ifndef SAMPCERT_ADAPTERS_DECLARATIONS_H_
#define SAMPCERT_ADAPTERS_DECLARATIONS_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sampcert/error.h"
#include "sampcert/policies.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::adapters {

// What a sampler declared, copied out of the plug-in (so it outlives nothing).
struct SamplerInfo {
  std::string name;
  std::string version;
  uint32_t capabilities = 0;
  Policies policies;
  bool thread_safe = false;
  bool Has(uint32_t capability) const { return (capabilities & capability) != 0; }
};

// ---- Vocabularies ----

// One value of a declared vocabulary.
template <typename E>
struct DeclaredValue {
  E value;
  int32_t abi;               // its SAMPCERT_* constant
  std::string_view name;     // report.json, the command line, the Python helper: "keep-all"
  std::string_view label;    // `sampcert info`: "keep all"
  std::string_view alias{};  // a shorter spelling the command line accepts too, or ""
};

template <typename E>
struct Vocabulary {
  std::string_view id;          // the dump's key and the Python helper's dict ("ties": TIES)
  std::string_view what;        // in errors: "tie rule"
  std::string_view abi_prefix;  // "SAMPCERT_TIES_"
  std::span<const DeclaredValue<E>> values;
};

// The vocabulary of E, called with any value of the type (E{}). declarations.cc defines it and
// instantiates it for each vocabulary in its table (kVocabularies), so a new vocabulary is
// written there alone; any other E fails to link. bool is the draw mode
// (Policies::sequential_draws, SAMPCERT_DRAWS_*).
template <typename E>
const Vocabulary<E>& VocabularyOf(E);

// "unknown tie rule 7 (SAMPCERT_TIES_*: 0 keep-all, 1 exact-lowest-index, 2 exact-any)";
// `value` is already formatted (a number, or a name in quotes).
Error UnknownValue(std::string_view what, std::string_view abi_prefix, const std::string& value,
                   const std::string& known);

template <typename E>
std::string KnownValues(bool with_abi) {
  std::string out;
  for (const DeclaredValue<E>& row : VocabularyOf(E{}).values) {
    if (!out.empty()) out += ", ";
    if (with_abi) out += std::to_string(row.abi) + " ";
    out += row.name;
  }
  return out;
}

// The row of a value, or nullptr when the value has none.
template <typename E>
const DeclaredValue<E>* FindValue(E value) {
  for (const DeclaredValue<E>& row : VocabularyOf(E{}).values) {
    if (row.value == value) return &row;
  }
  return nullptr;
}

template <typename E>
Error UnknownEnumValue(E value) {
  const Vocabulary<E>& v = VocabularyOf(E{});
  return UnknownValue(v.what, v.abi_prefix, std::to_string(static_cast<int64_t>(value)),
                      KnownValues<E>(true));
}

// Value -> report name / `sampcert info` label; an error naming the value when it has no row.
template <typename E>
Expected<std::string_view> NameOf(E value) {
  if (const DeclaredValue<E>* row = FindValue(value)) return row->name;
  return UnknownEnumValue(value);
}
template <typename E>
Expected<std::string_view> LabelOf(E value) {
  if (const DeclaredValue<E>* row = FindValue(value)) return row->label;
  return UnknownEnumValue(value);
}

// NameOf for a value already checked (a SamplerInfo that SamplerInfoFromAbi made): a value
// without a row throws std::invalid_argument naming it.
template <typename E>
std::string_view NameOrThrow(E value) {
  Expected<std::string_view> name = NameOf(value);
  if (!name.ok()) throw std::invalid_argument(name.error().message);
  return *name;
}

// Report name (or its alias) -> value; an error naming the unknown name.
template <typename E>
Expected<E> ValueNamed(std::string_view name) {
  for (const DeclaredValue<E>& row : VocabularyOf(E{}).values) {
    if (row.name == name || (!row.alias.empty() && row.alias == name)) return row.value;
  }
  const Vocabulary<E>& v = VocabularyOf(E{});
  return UnknownValue(v.what, "", "'" + std::string(name) + "'", KnownValues<E>(false));
}

// ABI value -> value; an error naming the unknown value.
template <typename E>
Expected<E> ValueOfAbi(int64_t abi) {
  for (const DeclaredValue<E>& row : VocabularyOf(E{}).values) {
    if (row.abi == abi) return row.value;
  }
  const Vocabulary<E>& v = VocabularyOf(E{});
  return UnknownValue(v.what, v.abi_prefix, std::to_string(abi), KnownValues<E>(true));
}

// ---- Capabilities ----

struct Capability {
  uint32_t bit;            // SAMPCERT_CAP_*
  std::string_view name;   // report.json, `sampcert info`, the Python helper: "temperature-0"
  std::string_view label;  // in words: "temperature 0"
};
std::span<const Capability> Capabilities();

// The declared bits' names, in bit order: "f32", "mask", "top-k", ...
std::vector<std::string> CapabilityNames(uint32_t capabilities);

// ---- Fields ----

class FieldCodec;  // how one field reads and writes each encoding (declarations.cc)

// One field of the declaration. Its ABI member is `count` 4-byte elements at `abi_offset` of
// sampcert_sampler_info; the exec protocol's INFO reply carries them in the struct's order.
struct DeclaredField {
  std::string_view name;    // sampcert_sampler_info's member: "pipeline_order"
  std::string_view wire;    // the worker's JSON key: "order"
  std::string_view report;  // report.json's key: "pipeline_order"
  bool policy;              // a member of Policies (report.json: under sampler.policies)
  std::string_view label;   // `sampcert info`; "" continues the line above, in parentheses
  char abi_type;            // 'i' int32_t, 'I' uint32_t, 'f' float (Python struct codes)
  uint32_t count;           // elements (truncation_order: 3)
  std::size_t abi_offset;
  uint32_t minor;           // the ABI MINOR, and exec protocol MINOR, that appended it
  const FieldCodec* codec;  // how each encoding reads and writes it; knows its vocabulary
};

// Every field, in `sampcert info`'s order.
std::span<const DeclaredField> DeclaredFields();
// The id of the field's vocabulary ("ties"), or "" for a number or a flag.
std::string_view VocabularyIdOf(const DeclaredField& field);
// The same fields in the ABI struct's (and the exec protocol's) order.
const std::vector<const DeclaredField*>& FieldsInAbiOrder();

// ---- The encodings ----

// The longest name or version a sampler may declare, in bytes (SPEC TEXT-1): every report
// format copies them, JUnit into every test case, and a report set must stay within the
// readers' limits (SPEC section 13).
inline constexpr std::size_t kMaxSamplerText = 256;

// The ABI struct -> SamplerInfo. Fields past info.struct_size keep their defaults (a MINOR 0
// plug-in); a value outside its vocabulary, or a name or version over kMaxSamplerText bytes, is
// an error naming the field and the value.
Expected<SamplerInfo> SamplerInfoFromAbi(const sampcert_sampler_info& info);
// The policies (or every field but name and version) into the ABI struct, where
// info->struct_size covers them. Never throws: it runs inside a built-in's get_info.
void PoliciesToInfo(const Policies& policies, sampcert_sampler_info* info);
void SamplerInfoToAbi(const SamplerInfo& in, sampcert_sampler_info* info);

// The worker's wire format: every field under its wire key, enums as their ABI values. A value
// outside its vocabulary throws std::invalid_argument naming it; so does a malformed field.
nlohmann::json InfoToJson(const SamplerInfo& info);
SamplerInfo InfoFromJson(const nlohmann::json& j);

// report.json's sampler.capabilities, sampler.thread_safe and sampler.policies (the ABI
// MINOR 1 fields only where declared). Throws std::invalid_argument on an unknown value.
nlohmann::json DeclarationToReport(const SamplerInfo& info);

// `sampcert info`'s lines after name and version, "capabilities:  f32, mask\n...". Throws
// std::invalid_argument on an unknown value.
std::string DeclarationText(const SamplerInfo& info);

// Every table above as JSON (`sampcert declarations`): what tools/sync_declarations.py writes
// into the Python helper and the report schema, and checks.
nlohmann::json DeclarationsDump();

}  // namespace sampcert::adapters

#endif  // SAMPCERT_ADAPTERS_DECLARATIONS_H_

// The row as one table: every scalar field of a row (sampcert::RowParams) listed once, with its
// type, range, ABI member, wire place, row-file key, command-line flag and report label. The ABI
// conversion (adapters/abi_conversions.cc, adapters/sampler.cc), the exec protocol's row header
// (adapters/exec_protocol.cc), the row file's reader and writer and the report's input text
// (properties/row_case.cc), the command line (cli/row_options.cc) read it; the Python helper's
// ROW_HEADER and Row, and PROTOCOL.md's row header, are generated from `sampcert declarations`
// by tools/sync_declarations.py (ctest declarations.in_sync checks them); row_fields_test checks
// each field's range against ValidateRow and round-trips every field through every encoding.
// (The draw of the row is keyed by the row's own fields, not by RapidCheck's shrinker, which
// reads no field list: the generators choose values per field, by their meaning.)
//
// How to add a scalar field (the worked example: a float `typical_p`, 1 = off). It costs these
// files, and no other:
//   1. include/sampcert/row.h            the RowParams member, with its default;
//   2. include/sampcert/sampler_abi.h    the sampcert_row member (see "ABI" below);
//   3. adapters/row_fields.cc            its row in kRowFields (below the others);
//   4. reference/row_validation.cc       its range check (row_fields_test compares it to `range`);
//   5. python/sampcert/protocol.py       regenerated: cmake --build --preset dev
//   6. adapters/python/PROTOCOL.md         --target sync_declarations
//   7. SPEC.md                           what it means (section 2) and its INV-* error;
//   8. the code that gives it meaning: reference/reference_distribution.cc (and each sampler
//      that implements it, which is that sampler's own change, not the field's).
// The ABI conversion, the exec protocol's row header, the row file, the command line, the
// report text, the Python Row and PROTOCOL.md's layout follow from the table.
//
// ABI: a new member of sampcert_row cannot simply be appended. sampcert_batch.rows is an array,
// so sizeof(sampcert_row) is its stride, and a plug-in built against an older header would read
// the rows of a newer host at the wrong addresses. A new field therefore comes with an ABI MINOR
// that adds either (a) `size_t row_stride` to sampcert_batch (0 or absent: the MINOR 0 size) so
// that rows[r] is at (const char*)rows + r * row_stride, and an appended member is read only
// where the row's struct_size covers it (as sampcert_sampler_info's MINOR fields are); or (b) an
// extension array beside `rows` (`const sampcert_row_ext* row_ext`, one per row, NULL when every
// row has the defaults). The field's `minor` below says which MINOR appended it; the exec
// protocol's row header grows by the same rule (a protocol MINOR, the header's size sent in the
// batch header), and Covers() below decides what an older peer sees.
#ifndef SAMPCERT_ADAPTERS_ROW_FIELDS_H_
#define SAMPCERT_ADAPTERS_ROW_FIELDS_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "sampcert/error.h"
#include "sampcert/row.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::adapters {

// The member of RowParams a field is; its type is the field's type (f32, i64 or u64).
using RowMember = std::variant<float RowParams::*, int64_t RowParams::*, uint64_t RowParams::*>;

// One field of the row. Every column is named in the table (designated initializers).
struct RowField {
  std::string_view name;          // RowParams' member, the Python Row's member: "min_p"
  RowMember member;               // &RowParams::min_p
  std::string_view abi_member;    // sampcert_row's member (SAMPCERT_ROW_ABI fills both)
  std::size_t abi_offset = 0;     //   and its offset
  std::string_view wire;          // its name in PROTOCOL.md's row header and numpy's ROW_HEADER
  std::size_t wire_offset = 0;    // its byte offset in the exec protocol's row header
  std::string_view row_file_key;  // the row file's key (a float has "<key>_bits" beside it)
  std::string_view flag;          // the command line's names, as CLI11 takes them: "--min-p"
  std::string_view help;          // the flag's help
  std::string_view label;         // the report's input text (Describe): "min_p" in "min_p=0.5"
  // Valid values, as SPEC section 5 writes them, and as numbers: lo <(=) v <(=) hi; NaN is
  // never valid. row_fields_test checks ValidateRow against them, with its `invalid` status.
  std::string_view range;
  double lo = 0, hi = 0;
  bool lo_open = false, hi_open = false;
  ErrorCode invalid = ErrorCode::kInvalidArgument;
  uint32_t capability = 0;  // the SAMPCERT_CAP_* a value other than the default needs, or 0
  bool key = false;         // keys the row's random stream, not its distribution (row_id)
  uint32_t minor = 0;       // the ABI MINOR (and exec protocol MINOR) that appended it
};

// Every field, in RowParams' order (the row file's, the report text's and the Python Row's).
std::span<const RowField> RowFields();
// The field named `name`, or nullptr.
const RowField* FindRowField(std::string_view name);

// The field's value in `p`, as a reference of its type, passed to `fn`.
template <typename P, typename F>
decltype(auto) VisitRowField(const RowField& field, P& p, F&& fn) {
  return std::visit([&](auto member) -> decltype(auto) { return fn(p.*member); }, field.member);
}
// "f32", "i64", "u64".
std::string_view RowFieldType(const RowField& field);
std::size_t RowFieldBytes(const RowField& field);

// ---- The encodings ----

// The ABI row's parameters, and back (only the fields; logits, mask and struct_size are the
// caller's).
RowParams RowParamsFromAbi(const sampcert_row& row);
void RowParamsToAbi(const RowParams& params, sampcert_row* row);

// The exec protocol's row header (PROTOCOL.md, "Batch"): the fields at their wire offsets and
// the row's flags (bit 0 logits, bit 1 mask) at kRowFlagsOffset.
inline constexpr std::size_t kRowHeaderBytes = 32;
inline constexpr std::size_t kRowFlagsOffset = 12;
void WriteRowHeader(const RowParams& params, uint32_t flags, char* out);
RowParams ReadRowHeader(const char* in, uint32_t* flags);

// The row file's fields (SPEC section 11): a float as its fp32 bit pattern under "<key>_bits"
// with its decimal value under "<key>" (the text "inf", "-inf" or "nan" when not finite), an
// integer as itself. The reader refuses a missing or malformed field by name; a decimal that
// disagrees with its bits is an error.
void RowParamsToRowFile(const RowParams& params, nlohmann::ordered_json* out);
std::optional<Error> RowParamsFromRowFile(const nlohmann::json& j, RowParams* out);
// Whether `key` is one of the row file's keys for the fields.
bool IsRowFileKey(std::string_view key);

// The report's input text: "T=0.5 top_k=0 top_p=1 min_p=0" (keys false: the fields that shape
// the distribution) or "row_id=7" (keys true).
std::string RowParamsText(const RowParams& params, bool keys);

// Whether the fields of two rows that shape the distribution are equal, bit for bit (keys, such
// as row_id, are not compared): the exec protocol sends such rows of a VERIFY request once.
bool SameDistributionParams(const RowParams& a, const RowParams& b);

// The table as JSON (part of `sampcert declarations`): what tools/sync_declarations.py writes
// into the Python helper and PROTOCOL.md.
nlohmann::json RowFieldsDump();

}  // namespace sampcert::adapters

#endif  // SAMPCERT_ADAPTERS_ROW_FIELDS_H_

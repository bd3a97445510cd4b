// The row's table: its columns are unique and consistent, each field's range is ValidateRow's
// (with its status), and the ABI and exec-protocol encodings round-trip every field.
#include "adapters/row_fields.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "sampcert/row_validation.h"

namespace sampcert::adapters {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

template <typename T>
bool SameBits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

bool SameParams(const RowParams& a, const RowParams& b) {
  for (const RowField& f : RowFields()) {
    const bool same = VisitRowField(f, a, [&](const auto& va) {
      return VisitRowField(f, b,
                           [&](const auto& vb) { return std::memcmp(&va, &vb, sizeof va) == 0; });
    });
    if (!same) return false;
  }
  return true;
}

// Values of each field that are not its default, valid or not, bit patterns included (NaN
// payloads, -0, infinities, the integer extremes): what every encoding must carry unchanged.
std::vector<RowParams> Distinctive(const RowField& f) {
  std::vector<RowParams> out;
  const RowParams defaults;
  VisitRowField(f, defaults, [&](const auto& def) {
    using T = std::remove_cvref_t<decltype(def)>;
    std::vector<T> values;
    if constexpr (std::is_same_v<T, float>) {
      values = {0.25f,
                -0.0f,
                kInf,
                -kInf,
                std::numeric_limits<float>::denorm_min(),
                std::bit_cast<float>(0x7fc00123u),  // a quiet NaN with a payload
                std::bit_cast<float>(0xff800001u),  // a negative signalling NaN
                std::nextafter(1.0f, 0.0f)};
    } else {
      values = {std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), T{1}, T{7}};
    }
    for (T v : values) {
      if (SameBits(v, def)) continue;
      RowParams p;
      VisitRowField(f, p, [&](auto& member) {
        if constexpr (std::is_same_v<std::remove_cvref_t<decltype(member)>, T>) member = v;
      });
      out.push_back(p);
    }
  });
  return out;
}

TEST(RowFields, ColumnsAreUniqueAndNamed) {
  std::set<std::string_view> names, abi, wire, keys, labels, flags;
  std::set<std::size_t> abi_offsets;
  for (const RowField& f : RowFields()) {
    SCOPED_TRACE(std::string(f.name));
    for (std::string_view column :
         {f.name, f.abi_member, f.row_file_key, f.flag, f.help, f.label, f.range}) {
      EXPECT_FALSE(column.empty());
    }
    EXPECT_TRUE(names.insert(f.name).second);
    EXPECT_TRUE(abi.insert(f.abi_member).second);
    // Every field of MINOR 0 is on the exec wire; a later one may not be yet (then no name).
    EXPECT_TRUE(f.OnWire() || f.minor > 0) << "a MINOR 0 field without a wire name";
    if (f.OnWire()) {
      EXPECT_TRUE(wire.insert(f.wire).second);
    }
    EXPECT_TRUE(keys.insert(f.row_file_key).second);
    EXPECT_TRUE(labels.insert(f.label).second);
    EXPECT_TRUE(flags.insert(f.flag).second);
    EXPECT_TRUE(f.flag.starts_with("--")) << f.flag;
    EXPECT_EQ(FindRowField(f.name), &f);
    // The ABI members lie after the buffers (logits, mask) and never overlap.
    EXPECT_GE(f.abi_offset, offsetof(sampcert_row, mask) + sizeof(void*));
    for (std::size_t b = 0; b < RowFieldBytes(f); ++b) {
      EXPECT_TRUE(abi_offsets.insert(f.abi_offset + b).second) << "byte " << f.abi_offset + b;
    }
    EXPECT_LE(f.minor, uint32_t{SAMPCERT_ABI_VERSION_MINOR});
    // A row file key and the "_bits" beside a float's are keys of the row file, nothing else.
    EXPECT_TRUE(IsRowFileKey(f.row_file_key));
    EXPECT_EQ(IsRowFileKey(std::string(f.row_file_key) + "_bits"), RowFieldType(f) == "f32");
  }
  EXPECT_FALSE(IsRowFileKey("logit_bits"));
  EXPECT_FALSE(IsRowFileKey("top_k_bits"));
  EXPECT_EQ(FindRowField("typo"), nullptr);
}

// Each field's range, as the table states it, is exactly what ValidateRowParameters accepts, and
// a value outside it is refused with the field's status and a message naming the field.
TEST(RowFields, RangesAreValidateRows) {
  const uint32_t logits[2] = {0, 0x3f800000u};
  for (const RowField& f : RowFields()) {
    SCOPED_TRACE(std::string(f.name));
    auto check = [&](auto value, bool valid) {
      RowView row;
      row.logits = logits;
      row.vocab = 2;
      VisitRowField(f, row, [&](auto& member) {
        member = static_cast<std::remove_cvref_t<decltype(member)>>(value);
      });
      const Error e = ValidateRowParameters(row, Policies{}, 0);
      if (valid) {
        EXPECT_EQ(e.code, ErrorCode::kOk) << value << ": " << e.message;
      } else {
        EXPECT_EQ(e.code, f.invalid) << value;
        EXPECT_NE(e.message.find(std::string(f.name)), std::string::npos) << e.message;
      }
    };
    const RowParams defaults;
    VisitRowField(f, defaults, [&](const auto& def) {
      using T = std::remove_cvref_t<decltype(def)>;
      check(def, true);  // the default is valid
      if constexpr (std::is_same_v<T, float>) {
        const auto lo = static_cast<float>(f.lo), hi = static_cast<float>(f.hi);
        check(lo, !f.lo_open);
        check(std::nextafter(lo, -kInf), false);
        check(std::nextafter(lo, kInf), true);
        check(hi, !f.hi_open);
        if (std::isfinite(hi)) check(std::nextafter(hi, kInf), false);
        check(std::nextafter(hi, -kInf), true);
        check(std::numeric_limits<float>::quiet_NaN(), false);
      } else if constexpr (std::is_same_v<T, int64_t>) {
        // Integers: the table's range is [lo, 2^63), or [lo, hi] (seed_mode's [0, 2]).
        ASSERT_FALSE(f.lo_open);
        check(static_cast<T>(f.lo), true);
        check(static_cast<T>(f.lo) + 1, true);
        if (std::isinf(f.hi)) {
          check(std::numeric_limits<T>::max(), true);
        } else {
          ASSERT_FALSE(f.hi_open);
          check(static_cast<T>(f.hi), true);
          check(static_cast<T>(f.hi) + 1, false);
          check(std::numeric_limits<T>::max(), false);
        }
        if (f.lo > -0x1p63) check(static_cast<T>(f.lo) - 1, false);
        check(std::numeric_limits<T>::min(), f.lo <= -0x1p63);
      } else {
        ASSERT_EQ(f.lo, 0);
        check(T{0}, true);
        check(std::numeric_limits<T>::max(), true);
      }
    });
  }
}

TEST(RowFields, AbiRoundTripsEveryField) {
  for (const RowField& f : RowFields()) {
    SCOPED_TRACE(std::string(f.name));
    EXPECT_GE(Distinctive(f).size(), 3u);  // row_id: its default is its minimum
    for (const RowParams& p : Distinctive(f)) {
      sampcert_row row{};
      row.struct_size = SAMPCERT_ROW_STRUCT_SIZE;
      RowParamsToAbi(p, &row);
      EXPECT_EQ(row.struct_size, SAMPCERT_ROW_STRUCT_SIZE);  // only the fields were written
      EXPECT_EQ(row.logits, nullptr);
      EXPECT_EQ(row.reserved0, 0);
      EXPECT_TRUE(SameParams(RowParamsFromAbi(row), p));
      EXPECT_FALSE(SameParams(RowParamsFromAbi(row), RowParams{}));
    }
  }
}

// In the 104-byte header of 1.6 every field reads back; in a 1.5 header (80 bytes) a field of
// MINOR 6 is not written (the bytes past 80 are never touched) and reads as its default, in a 1.4
// header (32 bytes) a field of MINOR 4, 5 or 6 likewise, and RowHeaderCarries says the row needs
// the larger header. A field on no wire (mask_layout, MINOR 7) is never written, reads as its
// default, and a row that needs it is carried by no header.
TEST(RowFields, RowHeaderRoundTripsEveryField) {
  for (const RowField& f : RowFields()) {
    SCOPED_TRACE(std::string(f.name));
    EXPECT_EQ(f.OnWire(), f.name != "mask_layout");
    for (const RowParams& p : Distinctive(f)) {
      for (std::size_t bytes : {kRowHeaderBytes, kRowHeaderBytesMinor5, kRowHeaderBytesMinor4}) {
        char header[kRowHeaderBytes + 1];
        std::memset(header, 0x5a, sizeof header);
        WriteRowHeader(p, 3u, bytes, header);
        EXPECT_EQ(header[bytes], 0x5a) << bytes;
        uint32_t flags = 0;
        const bool fits =
            f.OnWire() && (f.minor <= 3 || (f.minor <= 5 && bytes >= kRowHeaderBytesMinor5) ||
                           bytes == kRowHeaderBytes);
        EXPECT_TRUE(SameParams(ReadRowHeader(header, bytes, &flags), fits ? p : RowParams{}));
        EXPECT_EQ(flags, 3u);
        // -0 and 0 are off as 1 is, for the repetition penalty only (PEN-2).
        const bool off = f.name == "repetition_penalty" && p.repetition_penalty == 0.0f;
        EXPECT_EQ(RowHeaderCarries(p, bytes), fits || off) << bytes;
      }
    }
  }
  RowParams zero;
  zero.repetition_penalty = 0.0f;
  EXPECT_TRUE(RowHeaderCarries(zero, kRowHeaderBytesMinor4));
  EXPECT_EQ(RowHeaderBytes(4), kRowHeaderBytesMinor4);
  EXPECT_EQ(RowHeaderBytes(5), kRowHeaderBytesMinor5);
  EXPECT_EQ(RowHeaderBytes(6), kRowHeaderBytes);
}

// A row of an older layout (struct_size short of a later MINOR's member) reads that member as
// its default, whatever the bytes past struct_size hold.
TEST(RowFields, AbiFieldsPastStructSizeReadAsDefaults) {
  for (const RowField& f : RowFields()) {
    if (f.minor == 0) continue;
    SCOPED_TRACE(std::string(f.name));
    for (const RowParams& p : Distinctive(f)) {
      sampcert_row row{};
      RowParamsToAbi(p, &row);
      row.struct_size = f.abi_offset;
      EXPECT_TRUE(SameParams(RowParamsFromAbi(row), RowParams{}));
    }
  }
}

TEST(RowFields, TextNamesEveryFieldOnce) {
  const std::string params = RowParamsText(RowParams{}, false);
  const std::string keys = RowParamsText(RowParams{}, true);
  EXPECT_EQ(params, "T=1 top_k=0 top_p=1 min_p=0");
  EXPECT_EQ(keys, "row_id=0");
  for (const RowField& f : RowFields()) {
    // A field of a later MINOR shows where it is not its default (old reports read the same).
    const std::vector<RowParams> values = Distinctive(f);
    ASSERT_FALSE(values.empty());
    const std::string text = RowParamsText(f.minor == 0 ? RowParams{} : values.front(), f.key);
    const std::string label = std::string(f.label) + "=";
    EXPECT_EQ(text.find(label), text.rfind(label)) << f.name;
    EXPECT_NE(text.find(label), std::string::npos) << f.name;
  }
}

// Rows equal but for a key (row_id) are one distribution; any other field tells them apart.
TEST(RowFields, SameDistributionParamsIgnoresOnlyKeys) {
  for (const RowField& f : RowFields()) {
    SCOPED_TRACE(std::string(f.name));
    for (const RowParams& p : Distinctive(f)) {
      EXPECT_EQ(SameDistributionParams(p, RowParams{}), f.key);
      EXPECT_TRUE(SameDistributionParams(p, p));
    }
  }
}

TEST(RowFields, DumpListsEveryField) {
  const nlohmann::json dump = RowFieldsDump();
  EXPECT_EQ(dump["header_bytes"], kRowHeaderBytes);
  EXPECT_EQ(dump["header_bytes_minor4"], kRowHeaderBytesMinor4);
  EXPECT_EQ(dump["prompt_count_offset"], kRowPromptCountOffset);
  EXPECT_EQ(dump["output_count_offset"], kRowOutputCountOffset);
  EXPECT_EQ(dump["flags_offset"], kRowFlagsOffset);
  ASSERT_EQ(dump["fields"].size(), RowFields().size());
  for (std::size_t i = 0; i < RowFields().size(); ++i) {
    const RowField& f = RowFields()[i];
    const nlohmann::json& d = dump["fields"][i];
    EXPECT_EQ(d["name"], f.name);
    EXPECT_EQ(d["type"], RowFieldType(f));
    if (f.OnWire()) {
      EXPECT_EQ(d["wire"], f.wire);
      EXPECT_EQ(d["wire_offset"], f.wire_offset);
    } else {
      EXPECT_TRUE(d["wire"].is_null());
      EXPECT_TRUE(d["wire_offset"].is_null());
    }
    EXPECT_EQ(d["capability"].is_null(), f.capability.bit == 0) << f.name;
  }
}

}  // namespace
}  // namespace sampcert::adapters

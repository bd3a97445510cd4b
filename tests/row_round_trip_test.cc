// Every field of the row (adapters/row_fields.h), at values that are not its default (NaN
// payloads, -0, infinities, integer extremes), through every encoding a row has, in a chain:
// row file -> RowCase -> the ABI row -> the host's view -> the exec protocol's bytes -> the
// report's input text. A field an encoding drops or garbles fails here by name.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "adapters/abi_conversions.h"
#include "adapters/exec_protocol.h"
#include "adapters/row_fields.h"
#include "properties/row_case.h"
#include "sampcert/packed_mask.h"

namespace sampcert {
namespace {

using adapters::RowField;
using adapters::RowFields;
using adapters::VisitRowField;

constexpr float kInf = std::numeric_limits<float>::infinity();

// The field's value in `p` equals `want`'s, bit for bit.
bool SameField(const RowField& f, const RowParams& p, const RowParams& want) {
  return VisitRowField(f, p, [&](const auto& a) {
    return VisitRowField(f, want, [&](const auto& b) {
      return sizeof a == sizeof b && std::memcmp(&a, &b, sizeof a) == 0;
    });
  });
}

std::vector<RowParams> Distinctive(const RowField& f) {
  std::vector<RowParams> out;
  auto add = [&](auto v) {
    using T = decltype(v);
    RowParams p;
    VisitRowField(f, p, [&](auto& member) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(member)>, T>) {
        member = v;
        out.push_back(p);
      }
    });
  };
  for (float v : {0.375f, -0.0f, kInf, -kInf, std::numeric_limits<float>::denorm_min(),
                  std::bit_cast<float>(0x7fc00123u), std::bit_cast<float>(0xffa00001u)}) {
    add(v);
  }
  for (int64_t v : {int64_t{-1}, int64_t{5}, std::numeric_limits<int64_t>::max(),
                    std::numeric_limits<int64_t>::min()}) {
    add(v);
  }
  for (uint64_t v : {uint64_t{3}, std::numeric_limits<uint64_t>::max()}) add(v);
  return out;
}

// The value after "<label>=" in the report's text, parsed back into a copy of `p`'s field.
RowParams FromText(const RowField& f, const std::string& text) {
  RowParams out;
  const std::string label = " " + std::string(f.label) + "=";
  const std::size_t at = text.find(label);
  EXPECT_NE(at, std::string::npos) << text;
  if (at == std::string::npos) return out;
  const std::string value =
      text.substr(at + label.size(), text.find(' ', at + 1) - at - label.size());
  VisitRowField(f, out, [&](auto& member) {
    using T = std::remove_cvref_t<decltype(member)>;
    if constexpr (std::is_same_v<T, float>) {
      member = std::strtof(value.c_str(), nullptr);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      member = std::strtoll(value.c_str(), nullptr, 10);
    } else {
      member = std::strtoull(value.c_str(), nullptr, 10);
    }
  });
  return out;
}

bool IsNan(const RowField& f, const RowParams& p) {
  return VisitRowField(f, p, [](const auto& v) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(v)>, float>) {
      return std::isnan(v);
    } else {
      return false;
    }
  });
}

TEST(RowRoundTrip, EveryFieldThroughEveryEncoding) {
  std::size_t checked = 0;
  for (const RowField& f : RowFields()) {
    SCOPED_TRACE(std::string(f.name));
    for (const RowParams& want : Distinctive(f)) {
      properties::RowCase row;
      static_cast<RowParams&>(row) = want;
      row.bits32 = {0x3f800000u, 0xbf800000u, 0x7f800000u};
      row.mask = {1, 0, 1};
      row.family = "round_trip";

      // The row file.
      Expected<properties::RowCase> read = properties::RowCaseFromRowFile(RowFileJson(row));
      ASSERT_TRUE(read.ok()) << read.error().message;
      EXPECT_TRUE(SameField(f, *read, want)) << RowFileJson(row);
      EXPECT_EQ(read->bits32, row.bits32);
      EXPECT_EQ(read->mask, row.mask);

      // The ABI row the host hands a plug-in, and the view a built-in reads back from it.
      const RowView view = read->view();
      sampcert_row abi{};
      abi.struct_size = SAMPCERT_ROW_STRUCT_SIZE;
      abi.logits = view.logits;
      abi.mask = view.mask;
      adapters::RowParamsToAbi(view, &abi);
      // A packed row's mask travels as words (SPEC section 19), its bytes left out.
      const std::vector<uint32_t> words = PackMask(view.mask, 3);
      if (view.mask_layout == kMaskPacked) {
        abi.mask = nullptr;
        abi.packed_mask = words.data();
      }
      const sampcert_batch batch = adapters::AbiBatch(SAMPCERT_DTYPE_F32, 3, 1, &abi);
      const RowView back = adapters::ToRowView(batch, 0);
      EXPECT_TRUE(SameField(f, back, want));
      EXPECT_EQ(back.logits, view.logits);
      EXPECT_EQ(back.mask, abi.mask);
      EXPECT_EQ(back.packed_mask, abi.packed_mask);
      for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(back.Allowed(i), view.mask[i] != 0) << i;

      // The exec protocol's SAMPLE request: its row header, after the message header, the
      // seed, first draw and draw count, and the batch header.
      Expected<std::string> message = adapters::exec_protocol::EncodeSampleRequest(
          batch, 1, 0, 1, adapters::kExecProtocolMinor);
      // The one field outside the row header (mask_layout, ABI MINOR 7) travels as the row
      // flag kRowMaskPacked from protocol 1.8, the mask as its words; a 1.7 child is refused the
      // row, which is never sent with the field dropped.
      if (!f.OnWire()) {
        if (want.mask_layout != kMaskBytes && want.mask_layout != kMaskPacked) {
          ASSERT_FALSE(message.ok());  // no layout: refused, never sent as bytes or words
          EXPECT_EQ(message.error().code, ErrorCode::kInvalidArgument);
          EXPECT_NE(message.error().message.find("mask_layout"), std::string::npos);
          ++checked;
          continue;
        }
        ASSERT_TRUE(message.ok()) << message.error().message;
        const std::size_t at = adapters::exec_protocol::kHeaderBytes + 24 + 24;
        uint32_t flags = 0;
        adapters::ReadRowHeader(message->data() + at, adapters::kRowHeaderBytes, &flags);
        const bool packed = want.mask_layout != kMaskBytes;
        EXPECT_EQ(flags, adapters::exec_protocol::kRowHasLogits |
                             adapters::exec_protocol::kRowHasMask |
                             (packed ? adapters::exec_protocol::kRowMaskPacked : 0u));
        // After the row header: the three f32 logits, then the mask (one word, or three bytes).
        const std::size_t mask_at = at + adapters::kRowHeaderBytes + 12;
        if (packed) {
          uint32_t word = 0;
          ASSERT_GE(message->size(), mask_at + 4);
          std::memcpy(&word, message->data() + mask_at, 4);
          EXPECT_EQ(word, words[0]);
        } else {
          EXPECT_EQ(message->substr(mask_at, 3), std::string("\1\0\1", 3));
        }
        Expected<std::string> older =
            adapters::exec_protocol::EncodeSampleRequest(batch, 1, 0, 1, 7);
        EXPECT_EQ(older.ok(), !packed);
        if (packed) {
          EXPECT_EQ(older.error().code, ErrorCode::kUnsupported);
          EXPECT_NE(older.error().message.find("packed mask"), std::string::npos);
        }
        ++checked;
        continue;
      }
      ASSERT_TRUE(message.ok()) << message.error().message;
      const std::size_t at = adapters::exec_protocol::kHeaderBytes + 24 + 24;
      ASSERT_GE(message->size(), at + adapters::kRowHeaderBytes);
      uint32_t flags = 0;
      const RowParams wire =
          adapters::ReadRowHeader(message->data() + at, adapters::kRowHeaderBytes, &flags);
      // Every field of MINOR 5 and before is on the wire (1.5); a repetition penalty of +-0
      // (off) travels as 1 (off).
      RowParams on_wire = want;
      if (on_wire.repetition_penalty == 0.0f) on_wire.repetition_penalty = 1.0f;
      ASSERT_TRUE(f.OnWire());
      EXPECT_TRUE(SameField(f, wire, on_wire));
      EXPECT_EQ(flags,
                adapters::exec_protocol::kRowHasLogits | adapters::exec_protocol::kRowHasMask);

      // The report's input text: the value as written parses back to itself (NaN as a NaN:
      // the text does not keep a payload, which the row file beside it does).
      properties::RowCase described = *read;
      static_cast<RowParams&>(described) = back;
      const RowParams text = FromText(f, properties::Describe(described));
      if (IsNan(f, want)) {
        EXPECT_TRUE(IsNan(f, text)) << properties::Describe(described);
      } else {
        EXPECT_TRUE(SameField(f, text, want)) << properties::Describe(described);
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 2 * RowFields().size());
}

// The token history (SPEC section 16) beside the fields: the row file carries both lists and
// the penalties, the ABI row points at the lists, the report's text shows them.
TEST(RowRoundTrip, HistoryThroughRowFileAbiAndText) {
  properties::RowCase row;
  row.bits32 = {0x3f800000u, 0xbf800000u, 0x40000000u, 0};
  row.family = "pen_round_trip";
  row.prompt_tokens = {3, 0, 3};
  row.output_tokens = {2, std::numeric_limits<int64_t>::max()};  // invalid, yet carried as is
  row.repetition_penalty = 1.25f;
  row.frequency_penalty = -0.5f;
  const std::string text = RowFileJson(row);
  Expected<properties::RowCase> read = properties::RowCaseFromRowFile(text);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->prompt_tokens, row.prompt_tokens);
  EXPECT_EQ(read->output_tokens, row.output_tokens);
  EXPECT_EQ(read->repetition_penalty, 1.25f);
  EXPECT_EQ(read->presence_penalty, 0.0f);
  EXPECT_EQ(read->frequency_penalty, -0.5f);

  const RowView view = read->view();
  sampcert_row abi{};
  abi.struct_size = SAMPCERT_ROW_STRUCT_SIZE;
  abi.logits = view.logits;
  adapters::RowParamsToAbi(view, &abi);
  abi.prompt_tokens = view.prompt_tokens;
  abi.num_prompt_tokens = view.num_prompt_tokens;
  abi.output_tokens = view.output_tokens;
  abi.num_output_tokens = view.num_output_tokens;
  const sampcert_batch batch = adapters::AbiBatch(SAMPCERT_DTYPE_F32, 4, 1, &abi);
  const RowView back = adapters::ToRowView(batch, 0);
  ASSERT_EQ(back.num_prompt_tokens, 3u);
  ASSERT_EQ(back.num_output_tokens, 2u);
  EXPECT_EQ(back.prompt_tokens, read->prompt_tokens.data());
  EXPECT_EQ(back.output_tokens, read->output_tokens.data());
  EXPECT_EQ(back.repetition_penalty, 1.25f);
  EXPECT_EQ(back.frequency_penalty, -0.5f);
  // A MINOR 4 host's row (104 bytes) has the history and the penalties; a MINOR 3 row neither.
  abi.struct_size = SAMPCERT_ROW_MINOR4_STRUCT_SIZE;
  EXPECT_EQ(adapters::ToRowView(batch, 0).num_output_tokens, 2u);
  EXPECT_EQ(adapters::ToRowView(batch, 0).repetition_penalty, 1.25f);
  abi.struct_size = SAMPCERT_ROW_MINOR3_STRUCT_SIZE;
  EXPECT_EQ(adapters::ToRowView(batch, 0).num_output_tokens, 0u);
  EXPECT_EQ(adapters::ToRowView(batch, 0).repetition_penalty, 1.0f);

  // The exec protocol (1.5): the counts in the row header, the ids after the logits.
  abi.struct_size = SAMPCERT_ROW_STRUCT_SIZE;
  Expected<std::string> message =
      adapters::exec_protocol::EncodeSampleRequest(batch, 1, 0, 1, adapters::kExecProtocolMinor);
  ASSERT_TRUE(message.ok()) << message.error().message;
  const std::size_t header_at = adapters::exec_protocol::kHeaderBytes + 24 + 24;
  ASSERT_EQ(message->size(), header_at + adapters::kRowHeaderBytes + 4 * 4 + 5 * 8);
  uint64_t counts[2];
  std::memcpy(counts, message->data() + header_at + adapters::kRowPromptCountOffset, 16);
  EXPECT_EQ(counts[0], 3u);
  EXPECT_EQ(counts[1], 2u);
  std::vector<int64_t> ids(5);
  std::memcpy(ids.data(), message->data() + header_at + adapters::kRowHeaderBytes + 16, 40);
  EXPECT_EQ(ids, (std::vector<int64_t>{3, 0, 3, 2, std::numeric_limits<int64_t>::max()}));

  const std::string described = properties::Describe(*read);
  EXPECT_NE(described.find(" prompt=[3,0,3] output=[2,9223372036854775807]"), std::string::npos)
      << described;
  EXPECT_NE(described.find("repetition_penalty=1.25"), std::string::npos) << described;
  EXPECT_EQ(described.find("presence_penalty="), std::string::npos) << described;  // default

  // A row without a history writes neither list; a malformed list is refused by name.
  properties::RowCase plain = row;
  plain.prompt_tokens.clear();
  plain.output_tokens.clear();
  EXPECT_EQ(RowFileJson(plain).find("_tokens"), std::string::npos);
  const struct {
    const char* from;
    const char* to;
    const char* says;
  } broken[] = {
      {"\"prompt_tokens\":[3,0,3]", "\"prompt_tokens\":[3,0.5,3]", "prompt_tokens[1] must be"},
      {"\"output_tokens\":[2,", "\"output_tokens\":[true,", "output_tokens[0] must be"},
      {"\"prompt_tokens\":[3,0,3]", "\"prompt_tokens\":3", "prompt_tokens must be an array"},
  };
  for (const auto& b : broken) {
    std::string bad = text;
    const std::size_t at = bad.find(b.from);
    ASSERT_NE(at, std::string::npos) << b.from << " in " << text;
    bad.replace(at, std::strlen(b.from), b.to);
    Expected<properties::RowCase> r = properties::RowCaseFromRowFile(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find(b.says), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace sampcert

// ABI MINOR 4 on the host side (SPEC PEN-ABI-1): sampcert_row grew, and rows are an array whose
// stride is a row's size, so a plug-in of MINOR 3 or older gets its rows at the MINOR 3 layout
// (56 bytes, struct_size 56) and never a penalized row; a MINOR 4 plug-in gets the history.
// ABI MINOR 5 (SPEC SEED-ABI-1): the row grew again (seed, seed_mode), so a MINOR 4 plug-in gets
// its rows at the MINOR 4 layout (104 bytes) and never a row with a seed_mode; a MINOR 5 plug-in
// gets them. ABI MINOR 6 (SPEC BIAS-ABI-1): the bias and the minimum length, so a MINOR 5
// plug-in gets its rows at the MINOR 5 layout (120 bytes) and never a row with either. ABI MINOR 7
// (SPEC PMASK-ABI-1): the packed mask, so a MINOR 6 plug-in gets its rows at the MINOR 6 layout
// (160 bytes) and never a packed row; a MINOR 7 plug-in gets the words, padding bits set. Fake
// tables stand in for plug-ins, reading the rows as a plug-in built against each header.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "adapters/sampler.h"
#include "tests/support/test_rows.h"

namespace sampcert::adapters {
namespace {

// What the fake saw: per row, its struct_size and row_id read at the fake's own stride, and
// (MINOR 4) the number of output tokens and the repetition penalty.
struct Seen {
  std::size_t struct_size;
  uint64_t row_id;
  uint64_t outputs;
  float repetition;
  uint64_t seed = 0;
  int64_t seed_mode = 0;
  uint64_t num_bias = 0;
  float first_bias = 0;
  int64_t min_tokens = 0;
  int64_t eos = 0;
  int64_t mask_layout = 0;
  const uint8_t* mask = nullptr;
  std::vector<uint32_t> words{};  // the packed mask's words, as read during the call
};
std::vector<Seen> g_seen;
uint32_t g_minor = 3;

int32_t GetInfo(sampcert_sampler_info* info, sampcert_error*) {
  const size_t size = info->struct_size;
  std::memset(info, 0, size);
  info->struct_size = size;
  info->name = "fake";
  info->version = "1";
  info->capabilities = SAMPCERT_CAP_F32 | SAMPCERT_CAP_BATCH;
  if (g_minor >= 4) info->capabilities |= SAMPCERT_CAP_PENALTIES;
  if (g_minor >= 5) info->capabilities |= SAMPCERT_CAP_SEEDS;
  if (g_minor >= 6) info->capabilities |= SAMPCERT_CAP_LOGIT_BIAS | SAMPCERT_CAP_MIN_TOKENS;
  if (g_minor >= 7) info->capabilities |= SAMPCERT_CAP_MASK | SAMPCERT_CAP_PACKED_MASK;
  info->truncation_order[1] = SAMPCERT_STEP_TOP_P;
  info->truncation_order[2] = SAMPCERT_STEP_MIN_P;
  return SAMPCERT_STATUS_OK;
}
int32_t Create(const char*, sampcert_sampler** out, sampcert_error*) {
  *out = reinterpret_cast<sampcert_sampler*>(new int(0));
  return SAMPCERT_STATUS_OK;
}
void Destroy(sampcert_sampler* s) { delete reinterpret_cast<int*>(s); }
int32_t Sample(sampcert_sampler*, const sampcert_batch* b, uint64_t, uint64_t, uint64_t draws,
               int64_t* out, sampcert_error*) {
  // A MINOR 3 plug-in's sizeof(sampcert_row) is 56: its rows[r] is 56 bytes after rows[r - 1];
  // a MINOR 4 plug-in's is 104.
  const std::size_t stride = g_minor >= 7   ? sizeof(sampcert_row)
                             : g_minor == 6 ? 160
                             : g_minor == 5 ? 120
                             : g_minor == 4 ? 104
                                            : 56;
  for (uint64_t r = 0; r < b->num_rows; ++r) {
    const auto* row =
        reinterpret_cast<const sampcert_row*>(reinterpret_cast<const char*>(b->rows) + r * stride);
    Seen s{row->struct_size, row->row_id, 0, 0};
    if (g_minor >= 4) {
      s.outputs = row->num_output_tokens;
      s.repetition = row->repetition_penalty;
    }
    if (g_minor >= 5) {
      s.seed = row->seed;
      s.seed_mode = row->seed_mode;
    }
    if (g_minor >= 6) {
      s.num_bias = row->num_bias;
      s.first_bias = row->num_bias > 0 ? row->bias_values[0] : 0;
      s.min_tokens = row->min_tokens;
      s.eos = row->eos_token_id;
    }
    if (g_minor >= 7) {
      s.mask_layout = row->mask_layout;
      s.mask = row->mask;
      if (row->packed_mask != nullptr) {
        s.words.assign(row->packed_mask, row->packed_mask + (b->vocab + 31) / 32);
      }
    }
    g_seen.push_back(s);
    for (uint64_t j = 0; j < draws; ++j) out[r * draws + j] = 0;
  }
  return SAMPCERT_STATUS_OK;
}

sampcert_sampler_api Api(uint32_t minor) {
  g_minor = minor;
  return {SAMPCERT_SAMPLER_API_STRUCT_SIZE,
          SAMPCERT_ABI_VERSION_MAJOR,
          minor,
          GetInfo,
          Create,
          Destroy,
          nullptr,
          Sample,
          nullptr};
}

TEST(AbiMinor4, AMinor3PluginGetsRowsAtItsOwnStride) {
  const sampcert_sampler_api api = Api(3);
  auto s = Sampler::Open(&api, nullptr);
  ASSERT_TRUE(s.ok()) << s.error().message;
  testing_support::TestRow a({1, 2}), b({3, 4}), c({5, 6});
  a.RowId(11);
  b.RowId(22).History({0}, {1});  // a history with every penalty off: nothing to pass on
  c.RowId(33);
  g_seen.clear();
  ASSERT_TRUE((*s)->Sample(Batch{DType::kF32, 2, {a.view(), b.view(), c.view()}}, 1, 0, 1).ok());
  ASSERT_EQ(g_seen.size(), 3u);
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(g_seen[r].struct_size, 56u) << r;
    EXPECT_EQ(g_seen[r].row_id, 11u * (r + 1)) << r;
  }
  EXPECT_TRUE((*s)->abi_violations().empty());
  // A penalized row cannot reach it: NotSupported at the host, and no call.
  c.Penalties(1.2f, 0, 0).History({}, {0});
  g_seen.clear();
  auto got = (*s)->Sample(Batch{DType::kF32, 2, {a.view(), c.view()}}, 1, 0, 1);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kUnsupported);
  EXPECT_TRUE(g_seen.empty());
}

TEST(AbiMinor4, AMinor4PluginGetsTheHistory) {
  const sampcert_sampler_api api = Api(4);
  auto s = Sampler::Open(&api, nullptr);
  ASSERT_TRUE(s.ok()) << s.error().message;
  testing_support::TestRow a({1, 2}), b({3, 4});
  a.RowId(11);
  b.RowId(22).History({0}, {1, 1, 0}).Penalties(1.5f, 0.25f, 0);
  g_seen.clear();
  ASSERT_TRUE((*s)->Sample(Batch{DType::kF32, 2, {a.view(), b.view()}}, 1, 0, 1).ok());
  ASSERT_EQ(g_seen.size(), 2u);
  EXPECT_EQ(g_seen[0].struct_size, 104u);
  EXPECT_EQ(g_seen[1].row_id, 22u);
  EXPECT_EQ(g_seen[1].outputs, 3u);
  EXPECT_EQ(g_seen[1].repetition, 1.5f);
  EXPECT_EQ(g_seen[0].repetition, 1.0f);
  // A seeded or unseeded row cannot reach it: NotSupported at the host, and no call.
  for (int64_t mode : {kSeedOwn, kSeedUnseeded}) {
    b.Seed(7, mode);
    g_seen.clear();
    auto got = (*s)->Sample(Batch{DType::kF32, 2, {a.view(), b.view()}}, 1, 0, 1);
    ASSERT_FALSE(got.ok()) << mode;
    EXPECT_EQ(got.error().code, ErrorCode::kUnsupported);
    EXPECT_NE(got.error().message.find("seeds"), std::string::npos) << got.error().message;
    EXPECT_TRUE(g_seen.empty());
  }
}

TEST(AbiMinor5, AMinor5PluginGetsTheSeed) {
  const sampcert_sampler_api api = Api(5);
  auto s = Sampler::Open(&api, nullptr);
  ASSERT_TRUE(s.ok()) << s.error().message;
  testing_support::TestRow a({1, 2}), b({3, 4}), c({5, 6});
  a.RowId(11);
  b.RowId(22).Seed(0xfedcba9876543210u, kSeedOwn);
  c.RowId(33).Seed(0, kSeedUnseeded);
  g_seen.clear();
  ASSERT_TRUE((*s)->Sample(Batch{DType::kF32, 2, {a.view(), b.view(), c.view()}}, 1, 0, 1).ok());
  ASSERT_EQ(g_seen.size(), 3u);
  EXPECT_EQ(g_seen[0].struct_size, 120u);
  EXPECT_EQ(g_seen[0].seed_mode, kSeedCall);
  EXPECT_EQ(g_seen[1].row_id, 22u);
  EXPECT_EQ(g_seen[1].seed, 0xfedcba9876543210u);
  EXPECT_EQ(g_seen[1].seed_mode, kSeedOwn);
  EXPECT_EQ(g_seen[2].row_id, 33u);
  EXPECT_EQ(g_seen[2].seed_mode, kSeedUnseeded);
  EXPECT_TRUE((*s)->abi_violations().empty());
}

TEST(AbiMinor6, AMinor5PluginGetsRowsAtItsOwnStrideAndNoBias) {
  const sampcert_sampler_api api = Api(5);
  auto s = Sampler::Open(&api, nullptr);
  ASSERT_TRUE(s.ok()) << s.error().message;
  testing_support::TestRow a({1, 2}), b({3, 4}), c({5, 6});
  a.RowId(11);
  b.RowId(22).MinTokens(0, 1);  // a minimum length that is off: nothing to pass on
  c.RowId(33);
  g_seen.clear();
  ASSERT_TRUE((*s)->Sample(Batch{DType::kF32, 2, {a.view(), b.view(), c.view()}}, 1, 0, 1).ok());
  ASSERT_EQ(g_seen.size(), 3u);
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(g_seen[r].struct_size, 120u) << r;
    EXPECT_EQ(g_seen[r].row_id, 11u * (r + 1)) << r;
  }
  // A bias or a minimum length cannot reach it: NotSupported at the host, and no call.
  testing_support::TestRow biased({1, 2}), minimum({1, 2});
  biased.Bias({1}, {0.5f});
  minimum.MinTokens(2, 1);
  for (const auto* row : {&biased, &minimum}) {
    g_seen.clear();
    auto got = (*s)->Sample(Batch{DType::kF32, 2, {a.view(), row->view()}}, 1, 0, 1);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code, ErrorCode::kUnsupported);
    EXPECT_NE(got.error().message.find(row == &biased ? "logit-bias" : "min-tokens"),
              std::string::npos)
        << got.error().message;
    EXPECT_TRUE(g_seen.empty());
  }
  EXPECT_TRUE((*s)->abi_violations().empty());
}

TEST(AbiMinor6, AMinor6PluginGetsTheBiasAndTheMinimumLength) {
  const sampcert_sampler_api api = Api(6);
  auto s = Sampler::Open(&api, nullptr);
  ASSERT_TRUE(s.ok()) << s.error().message;
  testing_support::TestRow a({1, 2}), b({3, 4});
  a.RowId(11);
  b.RowId(22).Bias({1, 0}, {-2.5f, 1.0f}).MinTokens(3, 1).History({}, {0});
  g_seen.clear();
  ASSERT_TRUE((*s)->Sample(Batch{DType::kF32, 2, {a.view(), b.view()}}, 1, 0, 1).ok());
  ASSERT_EQ(g_seen.size(), 2u);
  EXPECT_EQ(g_seen[0].struct_size, 160u);
  EXPECT_EQ(g_seen[0].num_bias, 0u);
  EXPECT_EQ(g_seen[1].row_id, 22u);
  EXPECT_EQ(g_seen[1].num_bias, 2u);
  EXPECT_EQ(g_seen[1].first_bias, -2.5f);
  EXPECT_EQ(g_seen[1].min_tokens, 3);
  EXPECT_EQ(g_seen[1].eos, 1);
  EXPECT_TRUE((*s)->abi_violations().empty());
}

TEST(AbiMinor7, AMinor6PluginGetsRowsAtItsOwnStrideAndNoPackedRow) {
  const sampcert_sampler_api api = Api(6);
  auto s = Sampler::Open(&api, nullptr);
  ASSERT_TRUE(s.ok()) << s.error().message;
  testing_support::TestRow a({1, 2}), packed({1, 2});
  a.RowId(11);
  packed.Packed();  // no mask: the layout alone asks for packed-mask
  g_seen.clear();
  auto got = (*s)->Sample(Batch{DType::kF32, 2, {a.view(), packed.view()}}, 1, 0, 1);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(got.error().message.find("packed-mask"), std::string::npos) << got.error().message;
  EXPECT_TRUE(g_seen.empty());
  EXPECT_TRUE((*s)->abi_violations().empty());
}

TEST(AbiMinor7, AMinor7PluginGetsThePackedWords) {
  const sampcert_sampler_api api = Api(7);
  auto s = Sampler::Open(&api, nullptr);
  ASSERT_TRUE(s.ok()) << s.error().message;
  // V = 35: token 0, 5, 31 and 33 allowed; the second word has 3 real bits and 29 padding bits.
  std::vector<float> x(35, 0.5f);
  std::vector<uint8_t> mask(35, 0);
  for (std::size_t t : {0u, 5u, 31u, 33u}) mask[t] = 9;
  testing_support::TestRow bytes(x), packed(x);
  bytes.Mask(mask).RowId(1);
  packed.Mask(mask).Packed().RowId(2);
  g_seen.clear();
  ASSERT_TRUE((*s)->Sample(Batch{DType::kF32, 35, {bytes.view(), packed.view()}}, 1, 0, 1).ok());
  ASSERT_EQ(g_seen.size(), 2u);
  EXPECT_EQ(g_seen[0].struct_size, sizeof(sampcert_row));
  EXPECT_EQ(g_seen[0].mask_layout, SAMPCERT_MASK_BYTES);
  EXPECT_NE(g_seen[0].mask, nullptr);
  EXPECT_TRUE(g_seen[0].words.empty());
  EXPECT_EQ(g_seen[1].mask_layout, SAMPCERT_MASK_PACKED);
  EXPECT_EQ(g_seen[1].mask, nullptr);
  ASSERT_EQ(g_seen[1].words.size(), 2u);
  EXPECT_EQ(g_seen[1].words[0], (1u << 0) | (1u << 5) | (1u << 31));
  EXPECT_EQ(g_seen[1].words[1], (1u << 1) | ~0u << 3);
  EXPECT_TRUE((*s)->abi_violations().empty());
}

}  // namespace
}  // namespace sampcert::adapters

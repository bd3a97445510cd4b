// ABI MINOR 1 on the host side: a MINOR 0 plug-in (whose info struct ends before the new fields)
// reads as "as declared, random access, no cost"; the new fields are read where declared and
// bad values are refused; a sequential sampler (POL-7) is only ever asked for each stream's
// draws in order (0 starting a stream afresh), and the host's replay gives exactly the tokens
// of the stream whatever the runner asks for. Fake tables stand in for plug-ins.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "adapters/sampler.h"

namespace sampcert::adapters {
namespace {

// --- A fake whose get_info is configured per test. ---
size_t g_info_size = SAMPCERT_SAMPLER_INFO_STRUCT_SIZE;  // what the "plug-in" was built with
int32_t g_top_k_ties = 0, g_top_p_ties = 0, g_greedy = 0;
uint32_t g_draw_mode = 0;
float g_cost = 0;

int32_t GetInfo(sampcert_sampler_info* info, sampcert_error*) {
  // A plug-in built against an older header fills only what it knows and says so.
  const size_t size = std::min(info->struct_size, g_info_size);
  std::memset(info, 0, size);
  info->struct_size = size;
  info->name = "fake";
  info->version = "1";
  info->capabilities = SAMPCERT_CAP_F32 | SAMPCERT_CAP_BATCH;
  info->greedy_tie_break = g_greedy;
  info->truncation_order[1] = SAMPCERT_STEP_TOP_P;
  info->truncation_order[2] = SAMPCERT_STEP_MIN_P;
  if (size >= SAMPCERT_SAMPLER_INFO_STRUCT_SIZE) {
    info->top_k_tie_rule = g_top_k_ties;
    info->top_p_tie_rule = g_top_p_ties;
    info->draw_mode = g_draw_mode;
    info->draw_cost_ns_per_token = g_cost;
  }
  return SAMPCERT_STATUS_OK;
}

// A sequential sampler: each (seed, row_id) stream's j-th token is Token(seed, row_id, j),
// produced by a counter the handle keeps. It records every call that asked for anything but the
// stream's next draws, which a correct host never makes.
uint64_t Token(uint64_t seed, uint64_t row_id, uint64_t j) {
  return (seed * 31 + row_id * 7 + j * 13) % 5;
}
struct Handle {
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> next;
};
int g_creates = 0, g_out_of_order = 0, g_multi_row_calls = 0;
int32_t Create(const char*, sampcert_sampler** out, sampcert_error*) {
  ++g_creates;
  *out = reinterpret_cast<sampcert_sampler*>(new Handle);
  return SAMPCERT_STATUS_OK;
}
void Destroy(sampcert_sampler* s) { delete reinterpret_cast<Handle*>(s); }
int32_t Sample(sampcert_sampler* s, const sampcert_batch* b, uint64_t seed, uint64_t first,
               uint64_t draws, int64_t* out, sampcert_error*) {
  auto* h = reinterpret_cast<Handle*>(s);
  if (b->num_rows > 1) ++g_multi_row_calls;
  for (uint64_t r = 0; r < b->num_rows; ++r) {
    uint64_t& next = h->next[{seed, b->rows[r].row_id}];
    if (first == 0) next = 0;  // POL-7: 0 starts the stream afresh
    if (next != first) ++g_out_of_order;
    for (uint64_t j = 0; j < draws; ++j) {
      out[r * draws + j] = static_cast<int64_t>(Token(seed, b->rows[r].row_id, next++));
    }
  }
  return SAMPCERT_STATUS_OK;
}

const sampcert_sampler_api kApi = {SAMPCERT_SAMPLER_API_STRUCT_SIZE,
                                   SAMPCERT_ABI_VERSION_MAJOR,
                                   SAMPCERT_ABI_VERSION_MINOR,
                                   GetInfo,
                                   Create,
                                   Destroy,
                                   nullptr,
                                   Sample,
                                   nullptr};

void Reset() {
  g_info_size = SAMPCERT_SAMPLER_INFO_STRUCT_SIZE;
  g_top_k_ties = g_top_p_ties = g_greedy = 0;
  g_draw_mode = 0;
  g_cost = 0;
  g_creates = g_out_of_order = g_multi_row_calls = 0;
}

TEST(AbiMinor1, InfoStructOfMinor0ReadsAsDefaults) {
  Reset();
  g_info_size = 80;  // LP64: the MINOR 0 struct's sizeof, its tail padding past offset 76
  g_top_k_ties = SAMPCERT_STEP_TIES_EXACT_ANY;  // not written: past its struct
  g_draw_mode = SAMPCERT_DRAWS_SEQUENTIAL;
  auto s = Sampler::Open(&kApi, nullptr);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const Policies& p = (*s)->info().policies;
  EXPECT_FALSE(p.top_k_tie_rule.has_value());
  EXPECT_FALSE(p.top_p_tie_rule.has_value());
  EXPECT_FALSE(p.sequential_draws);
  EXPECT_EQ(p.draw_cost_ns_per_token, 0);
  EXPECT_EQ(p.TopKTies(), p.tie_rule);
}

TEST(AbiMinor1, DeclaredFieldsAreRead) {
  Reset();
  g_top_k_ties = SAMPCERT_STEP_TIES_KEEP_ALL;
  g_top_p_ties = SAMPCERT_STEP_TIES_EXACT_ANY;
  g_greedy = SAMPCERT_GREEDY_ANY;
  g_draw_mode = SAMPCERT_DRAWS_SEQUENTIAL;
  g_cost = 12.5f;
  auto s = Sampler::Open(&kApi, nullptr);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const Policies& p = (*s)->info().policies;
  EXPECT_EQ(p.TopKTies(), TieRule::kKeepAll);
  EXPECT_EQ(p.TopPTies(), TieRule::kExactAny);
  EXPECT_EQ(p.greedy_tie_break, GreedyTieBreak::kAny);
  EXPECT_TRUE(p.sequential_draws);
  EXPECT_DOUBLE_EQ(p.draw_cost_ns_per_token, 12.5);
}

TEST(AbiMinor1, UnknownValuesAreRefusedWithTheirName) {
  struct Case {
    int32_t top_k, top_p;
    uint32_t mode;
    float cost;
    const char* says;
  };
  for (const Case& c : {Case{4, 0, 0, 0, "top-k tie rule"}, Case{0, -1, 0, 0, "top-p tie rule"},
                        Case{0, 0, 2, 0, "draw mode"}, Case{0, 0, 0, -1, "draw cost"},
                        Case{0, 0, 0, NAN, "draw cost"}}) {
    Reset();
    g_top_k_ties = c.top_k;
    g_top_p_ties = c.top_p;
    g_draw_mode = c.mode;
    g_cost = c.cost;
    auto s = Sampler::Open(&kApi, nullptr);
    ASSERT_FALSE(s.ok()) << c.says;
    EXPECT_NE(s.error().message.find(c.says), std::string::npos) << s.error().message;
  }
}

std::vector<int64_t> Expected(uint64_t seed, const std::vector<uint64_t>& row_ids, uint64_t first,
                              uint64_t n) {
  std::vector<int64_t> out;
  for (uint64_t id : row_ids) {
    for (uint64_t j = first; j < first + n; ++j) {
      out.push_back(static_cast<int64_t>(Token(seed, id, j)));
    }
  }
  return out;
}

TEST(AbiMinor1, SequentialSamplerIsAskedInOrderAndReplayedExactly) {
  Reset();
  g_draw_mode = SAMPCERT_DRAWS_SEQUENTIAL;
  auto s = Sampler::Open(&kApi, nullptr);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const float logits[3] = {0, 1, 2};
  auto row = [&](uint64_t id) {
    RowView v;
    v.dtype = DType::kF32;
    v.logits = logits;
    v.vocab = 3;
    v.temperature = 1;
    v.row_id = id;
    return v;
  };
  Batch one{DType::kF32, 3, {row(1)}};
  // Ahead of the stream: the gap is drawn and discarded.
  auto a = (*s)->Sample(one, 9, 5, 4);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, Expected(9, {1}, 5, 4));
  // Continuing: no restart.
  auto b = (*s)->Sample(one, 9, 9, 3);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, Expected(9, {1}, 9, 3));
  EXPECT_EQ(g_creates, 1);
  // From 0: the stream starts afresh, on the same handle.
  auto c = (*s)->Sample(one, 9, 0, 6);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, Expected(9, {1}, 0, 6));
  // Behind it but past 0: the stream is replayed from 0, the replayed draws discarded.
  auto c2 = (*s)->Sample(one, 9, 2, 3);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(*c2, Expected(9, {1}, 2, 3));
  EXPECT_EQ(g_creates, 1);
  EXPECT_EQ((*s)->stream_replays(), 1u);
  // A batch with the same stream twice and another stream: served row by row.
  Batch three{DType::kF32, 3, {row(1), row(2), row(1)}};
  auto d = (*s)->Sample(three, 4, 0, 5);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, Expected(4, {1, 2, 1}, 0, 5));
  EXPECT_EQ(g_out_of_order, 0);
  EXPECT_EQ(g_multi_row_calls, 0);
}

TEST(AbiMinor1, RandomAccessSamplerIsCalledAsAsked) {
  Reset();  // draw_mode 0: the fake's counters show the host passing requests through
  auto s = Sampler::Open(&kApi, nullptr);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const float logits[2] = {0, 1};
  RowView v;
  v.dtype = DType::kF32;
  v.logits = logits;
  v.vocab = 2;
  v.temperature = 1;
  v.row_id = 3;
  Batch one{DType::kF32, 2, {v}};
  ASSERT_TRUE((*s)->Sample(one, 1, 7, 2).ok());
  EXPECT_EQ(g_out_of_order, 1);  // passed through: the fake saw first_draw 7 on a new stream
  EXPECT_EQ(g_creates, 1);
}

}  // namespace
}  // namespace sampcert::adapters

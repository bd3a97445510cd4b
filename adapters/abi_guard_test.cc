// ABI-1 on the host side: a sampler that writes outside its output buffer or into its const
// inputs is recorded (naming the call) without changing the call's result; a failed call's
// error report is checked against SPEC section 5 (NUL-terminated message, a row named).
// Fake tables stand in for plug-ins; each misbehavior is chosen by a global.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "adapters/sampler.h"

namespace sampcert::adapters {
namespace {

enum class Misbehavior {
  kNone,
  kPastOut,
  kBeforeOut,
  kIntoLogits,
  kIntoMask,
  kIntoBatch,
  kUnterminated,
  kNoRow
};
Misbehavior g_mode = Misbehavior::kNone;

int32_t GetInfo(sampcert_sampler_info* info, sampcert_error*) {
  const size_t size = info->struct_size;
  std::memset(info, 0, size);
  info->struct_size = size;
  info->name = "fake";
  info->version = "1";
  info->capabilities = SAMPCERT_CAP_F32 | SAMPCERT_CAP_MASK | SAMPCERT_CAP_PROBABILITIES;
  info->truncation_order[1] = SAMPCERT_STEP_TOP_P;
  info->truncation_order[2] = SAMPCERT_STEP_MIN_P;
  return SAMPCERT_STATUS_OK;
}
int g_handle;
int32_t Create(const char*, sampcert_sampler** out, sampcert_error*) {
  *out = reinterpret_cast<sampcert_sampler*>(&g_handle);
  return SAMPCERT_STATUS_OK;
}
void Destroy(sampcert_sampler*) {}

int32_t Sample(sampcert_sampler*, const sampcert_batch* b, uint64_t, uint64_t, uint64_t draws,
               int64_t* out, sampcert_error* error) {
  switch (g_mode) {
    case Misbehavior::kPastOut: out[draws * b->num_rows] = 7; break;
    case Misbehavior::kBeforeOut: out[-1] = 7; break;
    case Misbehavior::kIntoLogits:
      const_cast<float*>(static_cast<const float*>(b->rows[0].logits))[1] = 9;
      break;
    case Misbehavior::kIntoMask: const_cast<uint8_t*>(b->rows[0].mask)[0] = 0; break;
    case Misbehavior::kIntoBatch: const_cast<sampcert_batch*>(b)->reserved0 = 1; break;
    case Misbehavior::kUnterminated:
      error->code = SAMPCERT_STATUS_INVALID_TEMPERATURE;
      error->row = 0;
      std::memset(error->message, 'x', sizeof error->message);
      return SAMPCERT_STATUS_INVALID_TEMPERATURE;
    case Misbehavior::kNoRow:
      error->code = SAMPCERT_STATUS_INVALID_TEMPERATURE;
      error->row = -1;
      std::strcpy(error->message, "temperature is NaN");
      return SAMPCERT_STATUS_INVALID_TEMPERATURE;
    case Misbehavior::kNone: break;
  }
  for (uint64_t j = 0; j < draws * b->num_rows; ++j) out[j] = 0;
  return SAMPCERT_STATUS_OK;
}

const sampcert_sampler_api kApi = {sizeof(sampcert_sampler_api),
                                   SAMPCERT_ABI_VERSION_MAJOR,
                                   SAMPCERT_ABI_VERSION_MINOR,
                                   GetInfo,
                                   Create,
                                   Destroy,
                                   nullptr,
                                   Sample,
                                   nullptr};

struct Call {
  std::vector<std::string> violations;
  std::string error_problem;
  bool ok = false;
  std::vector<int64_t> tokens;
};

Call CallWith(Misbehavior m) {
  g_mode = m;
  auto s = Sampler::Open(&kApi, nullptr);
  EXPECT_TRUE(s.ok());
  const float logits[3] = {1, 2, 3};
  const uint8_t mask[3] = {1, 1, 1};
  Batch batch{DType::kF32, 3, {RowView{}}};
  batch.rows[0].logits = logits;
  batch.rows[0].mask = mask;
  batch.rows[0].vocab = 3;
  batch.rows[0].temperature = 1;
  auto r = (*s)->Sample(batch, 1, 0, 5);
  Call c;
  c.violations = (*s)->abi_violations();
  c.error_problem = (*s)->last_error_problem();
  c.ok = r.ok();
  if (r.ok()) c.tokens = *r;
  // The caller's inputs are untouched whatever the sampler did: it wrote into copies.
  EXPECT_EQ(logits[1], 2.0f);
  EXPECT_EQ(mask[0], 1);
  EXPECT_EQ((*s)->abi_checked_calls(), 1u);
  return c;
}

TEST(AbiGuard, AWellBehavedCallIsClean) {
  const Call c = CallWith(Misbehavior::kNone);
  EXPECT_TRUE(c.ok);
  EXPECT_TRUE(c.violations.empty());
  EXPECT_EQ(c.tokens, std::vector<int64_t>(5, 0));
}

TEST(AbiGuard, EachViolationIsNamedWithItsCall) {
  const std::pair<Misbehavior, const char*> cases[] = {
      {Misbehavior::kPastOut, "sample() wrote past the end of its output buffer"},
      {Misbehavior::kBeforeOut, "sample() wrote before the start of its output buffer"},
      {Misbehavior::kIntoLogits, "sample() wrote into row 0's logits (a const input)"},
      {Misbehavior::kIntoMask, "sample() wrote into row 0's mask (a const input)"},
      {Misbehavior::kIntoBatch, "sample() wrote into the batch struct (a const input)"}};
  for (const auto& [mode, message] : cases) {
    const Call c = CallWith(mode);
    EXPECT_TRUE(c.ok);  // the call's result stands; ABI-1 reports the violation
    ASSERT_EQ(c.violations.size(), 1u) << message;
    EXPECT_EQ(c.violations[0], message);
  }
}

TEST(AbiGuard, ErrorReportsFollowSection5) {
  const Call unterminated = CallWith(Misbehavior::kUnterminated);
  EXPECT_FALSE(unterminated.ok);
  EXPECT_NE(unterminated.error_problem.find("not NUL-terminated"), std::string::npos)
      << unterminated.error_problem;
  const Call no_row = CallWith(Misbehavior::kNoRow);
  EXPECT_NE(no_row.error_problem.find("names row -1"), std::string::npos) << no_row.error_problem;
  EXPECT_TRUE(CallWith(Misbehavior::kNone).error_problem.empty());
}

}  // namespace
}  // namespace sampcert::adapters

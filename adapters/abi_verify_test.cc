// ABI MINOR 2 and 3 on the host side: Sampler::Verify gives the sampler guarded copies of every
// input (ABI-1: a write into a draft row, the drafted tokens, a target row's logits or outside the
// output buffers is recorded, the caller's buffers stay untouched), checks the accepted counts,
// and a declaration of `verify` without the table's entry is refused when the sampler opens.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "adapters/sampler.h"

namespace sampcert::adapters {
namespace {

enum class Misbehavior {
  kNone,
  kIntoDraft,
  kIntoDrafted,
  kIntoLogits,
  kPastTokens,
  kTooMany,
  kIntoDraftRow,
  kPastAcceptance
};
Misbehavior g_mode = Misbehavior::kNone;
uint32_t g_caps = SAMPCERT_CAP_F32 | SAMPCERT_CAP_VERIFY;
int32_t g_scheme = SAMPCERT_VERIFY_EXACT;
// What the last verify() saw of the MINOR 3 fields.
struct Seen {
  int32_t draft_dtype = -1;
  float draft_temperature = 0;
  bool acceptance = false;
} g_seen;

int32_t GetInfo(sampcert_sampler_info* info, sampcert_error*) {
  const size_t size = info->struct_size;
  std::memset(info, 0, size);
  info->struct_size = size;
  info->name = "fake_verifier";
  info->version = "1";
  info->capabilities = g_caps;
  info->verify_scheme = g_scheme;
  if (g_scheme == SAMPCERT_VERIFY_LENIENT) info->verify_threshold = 0.5f;
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
               int64_t* out, sampcert_error*) {
  for (uint64_t j = 0; j < draws * b->num_rows; ++j) out[j] = 0;
  return SAMPCERT_STATUS_OK;
}
// Accepts every draft and emits token 0 as the bonus, misbehaving as g_mode says; where the
// batch has an acceptance output, a_j = 0.25 j.
int32_t Verify(sampcert_sampler*, const sampcert_chain_batch* b, uint64_t, int64_t* accepted,
               int64_t* tokens, sampcert_error*) {
  const sampcert_chain& ch = b->chains[0];
  g_seen = Seen{};
  if (b->draft_rows != nullptr) {
    g_seen.draft_dtype = b->draft_dtype;
    g_seen.draft_temperature = b->draft_rows[1][1].temperature;
  }
  g_seen.acceptance = b->out_acceptance != nullptr;
  for (uint64_t c = 0; g_seen.acceptance && c < b->num_chains; ++c) {
    for (uint64_t j = 0; j < b->chains[c].num_drafts; ++j) {
      b->out_acceptance[c * b->max_drafts + j] = 0.25 * static_cast<double>(j + 1);
    }
  }
  switch (g_mode) {
    case Misbehavior::kIntoDraftRow:
      const_cast<float*>(static_cast<const float*>(b->draft_rows[0][0].logits))[1] = 7;
      break;
    case Misbehavior::kPastAcceptance: b->out_acceptance[b->num_chains * b->max_drafts] = 1; break;
    case Misbehavior::kIntoDraft: const_cast<double*>(ch.draft_probs)[0] = 0.5; break;
    case Misbehavior::kIntoDrafted: const_cast<int64_t*>(ch.draft_tokens)[0] = 1; break;
    case Misbehavior::kIntoLogits:
      const_cast<float*>(static_cast<const float*>(ch.target_rows[1].logits))[0] = 9;
      break;
    case Misbehavior::kPastTokens: tokens[b->num_chains * (b->max_drafts + 1)] = 3; break;
    case Misbehavior::kTooMany: break;
    case Misbehavior::kNone: break;
  }
  for (uint64_t c = 0; c < b->num_chains; ++c) {
    const uint64_t k = b->chains[c].num_drafts;
    accepted[c] =
        g_mode == Misbehavior::kTooMany ? static_cast<int64_t>(k) + 1 : static_cast<int64_t>(k);
    for (uint64_t j = 0; j < k; ++j)
      tokens[c * (b->max_drafts + 1) + j] = b->chains[c].draft_tokens[j];
    tokens[c * (b->max_drafts + 1) + k] = 0;
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
                                   Verify};

struct Call {
  bool ok = false;
  std::string error;
  std::vector<std::string> violations;
  Verified out;
};

// `draft_logits`: the drafts as rows of logits (ABI MINOR 3), the second at T = 0.5.
Call VerifyWith(Misbehavior m, bool draft_logits = false) {
  g_mode = m;
  auto s = Sampler::Open(&kApi, nullptr);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  const float logits[3] = {1, 2, 3};
  const double q[6] = {0.25, 0.25, 0.5, 0.5, 0.25, 0.25};
  const int64_t drafted[2] = {2, 0};
  std::vector<RowView> rows(3);
  for (RowView& r : rows) {
    r.logits = logits;
    r.vocab = 3;
  }
  const float draft_logits_buf[3] = {3, 2, 1};
  std::vector<RowView> draft_rows(2);
  for (RowView& r : draft_rows) {
    r.logits = draft_logits_buf;
    r.vocab = 3;
  }
  draft_rows[1].temperature = 0.5f;
  // Two chains sharing every buffer, as the verifier family's trials do.
  ChainBatch batch{DType::kF32, 3, {}};
  const double* probs = draft_logits ? nullptr : q;
  const RowView* drows = draft_logits ? draft_rows.data() : nullptr;
  batch.chains.push_back({rows.data(), 2, probs, drafted, 7, 0, drows});
  batch.chains.push_back({rows.data(), 2, probs, drafted, 7, 1, drows});
  auto r = (*s)->Verify(batch, 1);
  Call c;
  c.ok = r.ok();
  if (r.ok()) c.out = *r;
  if (!r.ok()) c.error = r.error().message;
  c.violations = (*s)->abi_violations();
  // The caller's buffers are untouched whatever the sampler did: it wrote into copies.
  EXPECT_EQ(q[0], 0.25);
  EXPECT_EQ(drafted[0], 2);
  EXPECT_EQ(logits[0], 1.0f);
  EXPECT_EQ(draft_logits_buf[1], 2.0f);
  return c;
}

TEST(AbiVerify, AWellBehavedCallIsCleanAndItsTokensComeBack) {
  const Call c = VerifyWith(Misbehavior::kNone);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_TRUE(c.violations.empty());
  ASSERT_EQ(c.out.accepted.size(), 2u);
  EXPECT_EQ(c.out.accepted[1], 2);
  const std::span<const int64_t> emitted = c.out.Emitted(1);
  EXPECT_EQ(std::vector<int64_t>(emitted.begin(), emitted.end()), (std::vector<int64_t>{2, 0, 0}));
}

TEST(AbiVerify, EachViolationIsNamed) {
  const std::pair<Misbehavior, const char*> cases[] = {
      {Misbehavior::kIntoDraft,
       "verify() wrote into a logits, mask or draft buffer (a const input)"},
      {Misbehavior::kIntoLogits,
       "verify() wrote into a logits, mask or draft buffer (a const input)"},
      {Misbehavior::kIntoDrafted, "verify() wrote into the drafted tokens (a const input)"},
      {Misbehavior::kPastTokens, "verify() wrote outside its output buffers"}};
  for (const auto& [mode, message] : cases) {
    const Call c = VerifyWith(mode);
    EXPECT_TRUE(c.ok) << message;  // the call's result stands; ABI-1 reports the violation
    ASSERT_EQ(c.violations.size(), 1u) << message;
    EXPECT_EQ(c.violations[0], message);
  }
}

TEST(AbiVerify, AnAcceptedCountPastKIsAnError) {
  const Call c = VerifyWith(Misbehavior::kTooMany);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.error.find("accepted 3 of its 2 drafted tokens"), std::string::npos) << c.error;
}

TEST(AbiVerify, ADeclarationWithoutTheEntryIsRefused) {
  // A MINOR 1 table: it ends before verify, whatever the info declares.
  sampcert_sampler_api minor1 = kApi;
  minor1.struct_size = SAMPCERT_SAMPLER_API_MINOR0_STRUCT_SIZE;
  minor1.abi_minor = 1;
  auto s = Sampler::Open(&minor1, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("declares verify, but its function table (ABI 1.1"),
            std::string::npos)
      << s.error().message;
  sampcert_sampler_api no_entry = kApi;
  no_entry.verify = nullptr;
  EXPECT_FALSE(Sampler::Open(&no_entry, nullptr).ok());
}

// ABI MINOR 3: the capabilities need verify and a MINOR 3 table.
TEST(AbiVerify, DraftLogitsAndAcceptanceNeedAMinor3Table) {
  g_caps = SAMPCERT_CAP_F32 | SAMPCERT_CAP_VERIFY | SAMPCERT_CAP_VERIFY_ACCEPTANCE;
  sampcert_sampler_api minor2 = kApi;
  minor2.abi_minor = 2;
  auto s = Sampler::Open(&minor2, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("need verify and ABI MINOR 3 (it is 1.2)"), std::string::npos)
      << s.error().message;
  g_caps = SAMPCERT_CAP_F32 | SAMPCERT_CAP_VERIFY_DRAFT_LOGITS;  // without verify
  s = Sampler::Open(&kApi, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("without verify"), std::string::npos) << s.error().message;
  g_caps = SAMPCERT_CAP_F32 | SAMPCERT_CAP_VERIFY;
}

// VER-DEV-1: a lossy scheme is read (ABI MINOR 3) and is a declaration about verify.
TEST(AbiVerify, ALossySchemeIsReadAndNeedsVerify) {
  g_scheme = SAMPCERT_VERIFY_LENIENT;
  auto s = Sampler::Open(&kApi, nullptr);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ((*s)->info().policies.verify_scheme, VerifyScheme::kLenient);
  EXPECT_EQ((*s)->info().policies.verify_threshold, 0.5f);
  g_caps = SAMPCERT_CAP_F32;
  s = Sampler::Open(&kApi, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("declares a lossy verify scheme but not verify"),
            std::string::npos)
      << s.error().message;
  g_caps = SAMPCERT_CAP_F32 | SAMPCERT_CAP_VERIFY;
  g_scheme = SAMPCERT_VERIFY_EXACT;
}

TEST(AbiVerify, DraftRowsAreRefusedWithoutTheirDeclaration) {
  const Call c = VerifyWith(Misbehavior::kNone, /*draft_logits=*/true);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.error.find("does not declare verify-draft-logits"), std::string::npos) << c.error;
}

TEST(AbiVerify, DraftRowsReachTheVerifierAndTheAcceptanceComesBack) {
  g_caps = SAMPCERT_CAP_F32 | SAMPCERT_CAP_VERIFY | SAMPCERT_CAP_VERIFY_DRAFT_LOGITS |
           SAMPCERT_CAP_VERIFY_ACCEPTANCE;
  const Call c = VerifyWith(Misbehavior::kNone, /*draft_logits=*/true);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_TRUE(c.violations.empty());
  EXPECT_EQ(g_seen.draft_dtype, SAMPCERT_DTYPE_F32);
  EXPECT_EQ(g_seen.draft_temperature, 0.5f);
  ASSERT_TRUE(g_seen.acceptance);
  EXPECT_EQ(c.out.acceptance, (std::vector<double>{0.25, 0.5, 0.25, 0.5}));
  // The probabilities form still works for such a sampler, with the acceptance output.
  const Call p = VerifyWith(Misbehavior::kNone);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(g_seen.draft_dtype, -1);
  EXPECT_EQ(p.out.acceptance.size(), 4u);
  // Writes into a draft row or past the acceptance output are ABI-1 violations.
  const Call row = VerifyWith(Misbehavior::kIntoDraftRow, true);
  ASSERT_EQ(row.violations.size(), 1u);
  EXPECT_EQ(row.violations[0],
            "verify() wrote into a logits, mask or draft buffer (a const input)");
  const Call past = VerifyWith(Misbehavior::kPastAcceptance, true);
  ASSERT_EQ(past.violations.size(), 1u);
  EXPECT_EQ(past.violations[0], "verify() wrote outside its output buffers");
  g_caps = SAMPCERT_CAP_F32 | SAMPCERT_CAP_VERIFY;
}

}  // namespace
}  // namespace sampcert::adapters

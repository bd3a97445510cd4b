// The planned packed-mask rows (SPEC section 19, "Planned rows"; packed_mask_rows.cc) through the
// certification path: the quick plan of each sampler, its packed_mask items run by RunItem
// exactly as a worker runs them. stable_cpu and the correct control pass every item at plan
// seeds 1, 2 and 3; each mutant of tests/mutants/packed_mask_mutants.h fails at least one at each
// seed, with its probabilities declared and with its draws alone. Also the host's packing (the
// words and padding a sampler receives), the rows' row files, and the capability gate.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "adapters/sampler.h"
#include "properties/families.h"
#include "properties/plan.h"
#include "properties/rewritten_row.h"
#include "properties/row_case.h"
#include "registry/open_sampler.h"
#include "sampcert/packed_mask.h"
#include "sampcert/reference_distribution.h"
#include "tests/mutants/packed_mask_mutants.h"
#include "tests/support/family_items.h"

namespace sampcert::properties {
namespace {

using PackedRun = testing_support::FamilyRun;

PackedRun RunPackedItems(adapters::Sampler& sampler, const std::string& arg, uint64_t seed) {
  return testing_support::RunFamilyItems(sampler, arg, seed, ItemKind::kPackedMask);
}

std::unique_ptr<adapters::Sampler> Open(const sampcert_sampler_api* api) {
  auto s = adapters::Sampler::Open(api, nullptr);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? std::move(s.value()) : nullptr;
}

// Four rows per dtype, three dtypes.
constexpr int kItems = 12;

TEST(PackedMaskPlan, StableCpuPasses) {
  auto s = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s.value()->info().Has(SAMPCERT_CAP_PACKED_MASK));
  for (uint64_t seed : {1, 2, 3}) {
    const PackedRun r = RunPackedItems(*s.value(), "stable_cpu", seed);
    EXPECT_EQ(r.items, kItems) << "seed " << seed;
    EXPECT_EQ(r.passed, r.items) << "seed " << seed << ": " << r.first_failure;
    std::printf("[stable_cpu] seed %llu: %d packed_mask items, %d passed, %.2f s\n",
                static_cast<unsigned long long>(seed), r.items, r.passed, r.seconds);
  }
}

// Each mutant at seeds 1-3, with its probabilities declared, then with its draws alone.
TEST(PackedMaskPlan, MutantsCaughtAtSeeds1To3) {
  testing_support::ExpectMutantsCaught(mutants::PackedMaskMutantCatalogue(),
                                       mutants::PackedMaskMutantApi, ItemKind::kPackedMask, kItems,
                                       /*draws_only=*/true);
}

// Without packed-mask (or without masks) there is no row; each row's clause, from its content.
TEST(PackedMaskPlan, RowsFollowTheCapabilities) {
  EXPECT_TRUE(PackedMaskRows(DType::kF32, ~0u & ~SAMPCERT_CAP_PACKED_MASK).empty());
  EXPECT_TRUE(PackedMaskRows(DType::kF32, ~0u & ~SAMPCERT_CAP_MASK).empty());
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    const auto rows = PackedMaskRows(d, ~0u);
    ASSERT_EQ(rows.size(), 4u);
    for (const auto& [name, row] : rows) {
      EXPECT_EQ(row.mask_layout, kMaskPacked) << name;
      EXPECT_EQ(row.mask.size(), row.vocab()) << name;
      const std::string_view want = name == "packed_padding_empty_V40" ? "INV-ERR-1"
                                    : name == "packed_identity_V1000"  ? "PMASK-3"
                                                                       : "PMASK-1";
      EXPECT_EQ(PackedMaskProperty(row), want) << name;
      // Every row but the empty one is valid, whatever the policies; the empty one is INV-6's.
      const Error invalid = InvalidRequest(row);
      EXPECT_EQ(invalid.code,
                name == "packed_padding_empty_V40" ? ErrorCode::kEmptySupport : ErrorCode::kOk)
          << name << ": " << invalid.message;
      auto back = RowCaseFromRowFile(RowFileJson(row));
      ASSERT_TRUE(back.ok()) << name << ": " << back.error().message;
      EXPECT_EQ(back->mask_layout, kMaskPacked) << name;
      EXPECT_EQ(back->mask, row.mask) << name;
      EXPECT_EQ(Describe(*back), Describe(row)) << name;
    }
  }
}

// The words a sampler receives: bit t % 32 of word t / 32 for token t, the padding bits set.
TEST(PackedMask, PackMaskLayoutAndPadding) {
  std::vector<uint8_t> bytes(40, 0);
  for (std::size_t t : {0u, 3u, 31u, 32u, 39u}) bytes[t] = 7;  // any nonzero byte allows
  const std::vector<uint32_t> w = PackMask(bytes.data(), bytes.size());
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], (1u << 0) | (1u << 3) | (1u << 31));
  EXPECT_EQ(w[1], 1u | (1u << 7) | 0xffffff00u);  // tokens 32 and 39, then 24 padding bits
  for (std::size_t t = 0; t < bytes.size(); ++t) {
    EXPECT_EQ(PackedAllowed(w.data(), t), bytes[t] != 0) << t;
  }
  EXPECT_EQ(PackMask(bytes.data(), 32).size(), 1u);  // a whole word: no padding
  EXPECT_EQ(PackMask(bytes.data(), 32)[0], w[0]);
  EXPECT_EQ(PackedMaskWords(1), 1u);
  EXPECT_EQ(PackedMaskWords(33), 2u);
}

// The host refuses a packed row to a sampler that does not declare packed-mask, and gives the
// words to one that does: the control's probabilities of a packed row equal the bytes row's.
TEST(PackedMask, HostGatesAndPacks) {
  const RowCase packed = PackedMaskRows(DType::kF32, ~0u).front().second;
  RowCase bytes = packed;
  bytes.mask_layout = kMaskBytes;
  auto stable = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(stable.ok()) << stable.error().message;
  const auto p_packed = stable.value()->Probabilities(OneRow(packed));
  const auto p_bytes = stable.value()->Probabilities(OneRow(bytes));
  ASSERT_TRUE(p_packed.ok()) << p_packed.error().message;
  ASSERT_TRUE(p_bytes.ok()) << p_bytes.error().message;
  EXPECT_EQ(*p_packed, *p_bytes);
  EXPECT_EQ((*p_packed)[28], 0.0);  // a forbidden token that a reversed reading would allow
  static const sampcert_sampler_api* inner =
      mutants::PackedMaskMutantApi(mutants::PackedMaskMutant::kNone);
  sampcert_sampler_api api = *inner;
  api.get_info = [](sampcert_sampler_info* info, sampcert_error* error) {
    const int32_t rc = inner->get_info(info, error);
    info->capabilities &= ~SAMPCERT_CAP_PACKED_MASK;
    return rc;
  };
  auto s = Open(&api);
  ASSERT_NE(s, nullptr);
  const auto refused = s->Probabilities(OneRow(packed));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(refused.error().message.find("packed-mask"), std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(s->Probabilities(OneRow(bytes)).ok());
}

}  // namespace
}  // namespace sampcert::properties

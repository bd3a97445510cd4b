// The generators reach the edge cases they exist for (measured coverage), produce both valid
// and invalid rows, and shrink.
#include "properties/generators.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <set>

#include "sampcert/row_validation.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

constexpr uint32_t kAll = SAMPCERT_CAP_F32 | SAMPCERT_CAP_F16 | SAMPCERT_CAP_BF16 |
                          SAMPCERT_CAP_MASK | SAMPCERT_CAP_TOP_K | SAMPCERT_CAP_TOP_P |
                          SAMPCERT_CAP_MIN_P | SAMPCERT_CAP_TEMPERATURE_ZERO;

TEST(Generators, ReachTheEdgeCases) {
  std::map<std::string, int> seen;
  int valid = 0, invalid = 0;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    GenConfig cfg{d, kAll, 262144, 0.15};
    const auto gen = GenRow(cfg);
    for (int i = 0; i < 400; ++i) {
      const RowCase r = gen(rc::Random(static_cast<uint64_t>(i) * 7919 + 1), 100).value();
      for (const std::string& t : EdgeTags(r)) ++seen[t];
      ++seen["family " + r.family.substr(0, r.family.find('+'))];
      (ValidateRow(r.view(), Policies{}, 0).code == ErrorCode::kOk ? valid : invalid)++;
    }
  }
  for (const char* tag : {"T=0",
                          "T subnormal",
                          "T tiny",
                          "T huge",
                          "T invalid",
                          "V=1",
                          "V not a multiple of 8",
                          "V >= 32k",
                          "+inf logit",
                          "-inf logit",
                          "NaN allowed",
                          "NaN masked",
                          "subnormal logit",
                          "dtype max logit",
                          "x/T overflows dtype",
                          "mask: none allowed",
                          "mask: one allowed",
                          "mask: some allowed",
                          "mask: last tokens",
                          "top_k >= V",
                          "top_k = 1",
                          "top_k invalid",
                          "top_p just below 1",
                          "top_p tiny",
                          "top_p invalid",
                          "min_p",
                          "min_p invalid"}) {
    EXPECT_GT(seen[tag], 0) << "never generated: " << tag;
  }
  for (const std::string& f : RowFamilies()) EXPECT_GT(seen["family " + f], 0) << f;
  EXPECT_GT(invalid, 60);
  EXPECT_GT(valid, 600);
  std::printf("[coverage] %d valid and %d invalid rows;", valid, invalid);
  for (const auto& [tag, n] : seen) std::printf(" %s: %d;", tag.c_str(), n);
  std::printf("\n");
}

TEST(Generators, SpecialBitPatternsAreReached) {
  std::set<uint32_t> seen;
  const auto gen = GenF32Bits();
  for (int i = 0; i < 2000; ++i)
    seen.insert(gen(rc::Random(static_cast<uint64_t>(i)), 100).value());
  for (uint32_t b : {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f7fffffu,
                     0x00000001u}) {
    EXPECT_TRUE(seen.count(b)) << std::hex << b;
  }
}

TEST(Generators, ShrinkToSmallerRows) {
  const auto gen = GenRow(GenConfig{DType::kF32, kAll, 4096, 0.0});
  int shrunk_smaller = 0;
  for (uint64_t s = 1; s < 40; ++s) {
    const auto shrinkable = gen(rc::Random(s), 100);
    const std::size_t v = shrinkable.value().vocab();
    auto shrinks = shrinkable.shrinks();
    while (auto next = shrinks.next()) {
      if (next->value().vocab() < v) {
        ++shrunk_smaller;
        break;
      }
    }
  }
  EXPECT_GT(shrunk_smaller, 10);
}

// RapidCheck's own driver: every generated row's view is well formed and its tags computable.
RC_GTEST_PROP(GeneratorProps, RowsAreWellFormed, ()) {
  const RowCase r = *GenRow(GenConfig{DType::kF16, kAll, 1024, 0.15});
  RC_ASSERT(r.vocab() >= 1u);
  RC_ASSERT(r.mask.empty() || r.mask.size() == r.vocab());
  RC_CLASSIFY(r.temperature == 0.0f, "T=0");
  RC_TAG(r.family);
  (void)EdgeTags(r);
}

}  // namespace
}  // namespace sampcert::properties

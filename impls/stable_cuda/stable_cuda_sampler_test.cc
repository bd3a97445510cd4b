// stable_cuda on the device: the kernels against their host model bit for bit (the model is
// tested against the reference and stable_cpu in row_math_test.cc), probabilities within
// SPEC's tolerances, stable_cpu's tokens, batch independence, the reference's errors. Every
// test that needs the device skips with a message where there is none; the creation tests run
// everywhere (no device: create fails with a clear message, info still works).
#include "impls/stable_cuda/stable_cuda_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "adapters/sampler.h"
#include "impls/stable_cuda/host_model.h"
#include "properties/probability_check.h"
#include "registry/open_sampler.h"
#include "sampcert/canonical_draw.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/row_validation.h"
#include "sampcert/tolerance.h"
#include "tests/support/test_rows.h"

namespace sampcert::impls {
namespace {

using adapters::Batch;
using testing_support::TestRow;
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(StableCudaCreate, InfoNeedsNoDevice) {
  const sampcert_sampler_api* api = StableCudaSamplerApi();
  sampcert_sampler_info info{};
  info.struct_size = sizeof info;
  sampcert_error err{};
  err.struct_size = sizeof err;
  ASSERT_EQ(api->get_info(&info, &err), SAMPCERT_STATUS_OK);
  EXPECT_STREQ(info.name, "stable_cuda");
  EXPECT_EQ(info.capabilities, StableCudaSampler::kCapabilities);
}

TEST(StableCudaCreate, CreateSucceedsOrSaysThereIsNoDevice) {
  auto s = registry::OpenSampler("stable_cuda");
  if (s.ok()) {
    std::printf("[stable_cuda] a CUDA device is present: create succeeded\n");
    return;
  }
  EXPECT_EQ(s.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(s.error().message.rfind("stable_cuda: no CUDA device (", 0), 0u) << s.error().message;
  std::printf("[stable_cuda] create without a device: %s\n", s.error().message.c_str());
}

class StableCuda : public testing::Test {
 protected:
  void SetUp() override {
    auto s = registry::OpenSampler("stable_cuda");
    if (!s.ok()) GTEST_SKIP() << s.error().message << ": the device tests are not run";
    sampler_ = std::move(s.value());
  }
  static Batch One(const TestRow& row) { return Batch{row.dtype(), row.vocab(), {row.view()}}; }
  static cuda_math::HostModelRow Model(const TestRow& row) {
    const RowView v = row.view();
    return cuda_math::HostModelRow(cuda_math::HostRowInput{
        v.logits, static_cast<uint32_t>(v.dtype), v.mask, static_cast<int64_t>(v.vocab),
        v.temperature, v.top_k, v.top_p, v.min_p});
  }
  // Device probabilities and draws equal the host model's, bit for bit. Rows in the double
  // corner (row_math Mode::kDouble) use the device's and the host's exp, which may differ in
  // the last bit: those are compared within 2^-50.
  void ExpectMatchesModel(const TestRow& row, uint64_t draws) {
    const cuda_math::HostModelRow m = Model(row);
    ASSERT_EQ(m.status(), cuda_math::RowStatus::kOk);
    auto probs = sampler_->Probabilities(One(row));
    ASSERT_TRUE(probs.ok()) << probs.error().message;
    const bool exact = m.setup().mode != cuda_math::Mode::kDouble;
    for (std::size_t i = 0; i < row.vocab(); ++i) {
      const double want = m.Probability(static_cast<int64_t>(i));
      if (exact) {
        ASSERT_EQ((*probs)[i], want) << "token " << i << " of V=" << row.vocab();
      } else {
        ASSERT_NEAR((*probs)[i], want, 0x1p-50 + want * 0x1p-20) << "token " << i;
      }
    }
    const uint64_t row_id = row.view().row_id;
    auto tokens = sampler_->Sample(One(row), 99, 5, draws);
    ASSERT_TRUE(tokens.ok()) << tokens.error().message;
    for (uint64_t j = 0; j < draws && exact; ++j) {
      ASSERT_EQ((*tokens)[j], m.Draw(CanonicalUniform(99, row_id, 5 + j))) << "draw " << j;
    }
  }
  std::unique_ptr<adapters::Sampler> sampler_;
};

std::vector<TestRow> Rows() {
  const float fmax = std::numeric_limits<float>::max();
  std::vector<TestRow> rows;
  rows.push_back(TestRow({30000, -5, 20, 100}, DType::kF16).T(0.1f));
  rows.push_back(TestRow({30000, -5, 20, 100}, DType::kBF16).T(0.1f));
  rows.push_back(TestRow({fmax, -fmax, fmax, 0}).T(1e38f));
  rows.push_back(TestRow({1, 2, 3, 4}).T(1e-30f));
  rows.push_back(TestRow({1, 2, 3, 3}).T(0.0f));
  rows.push_back(TestRow({1, kInf, 3, kInf}).T(0.7f).Mask({1, 0, 1, 1}));
  rows.push_back(TestRow({0.0f, 1e-45f, 3e-45f}).T(1e-45f));
  rows.push_back(TestRow({1, 2, 3, 3, 3, 0}).TopK(2));
  rows.push_back(TestRow({0.1f, 2.3f, -1.7f, 0.9f, 1.4f, 2.2f}).TopK(4).TopP(0.8f).MinP(0.1f));
  rows.push_back(TestRow(std::vector<float>(1000, 0.5f)).T(0.3f).TopP(0.5f));
  std::mt19937_64 rng(7);
  for (std::size_t v : {255u, 4097u, 32768u, 131072u, 262144u}) {
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<float> x(v);
    for (float& f : x) f = rng() % 4 == 0 ? std::round(normal(rng)) : normal(rng);
    for (int d = 0; d < 3; ++d) {
      TestRow row = TestRow(x, static_cast<DType>(d)).T(0.8f).RowId(v + d);
      if (d == 1) row.TopK(static_cast<int64_t>(v / 3 + 1)).TopP(0.9f).MinP(0.001f);
      if (d == 2) {
        std::vector<uint8_t> mask(v);
        for (auto& b : mask) b = rng() % 3 != 0;
        row.Mask(mask).TopP(0.5f);
      }
      rows.push_back(row);
    }
  }
  return rows;
}

TEST_F(StableCuda, KernelsMatchTheirHostModelBitForBit) {
  for (const TestRow& row : Rows()) ExpectMatchesModel(row, 2000);
}

TEST_F(StableCuda, ProbabilitiesWithinToleranceOfTheReference) {
  double worst = 0;
  for (const TestRow& row : Rows()) {
    const auto ref = ComputeReference(row.view(), StableCudaSampler::DeclaredPolicies());
    ASSERT_TRUE(ref.ok()) << ref.error().message;
    auto probs = sampler_->Probabilities(One(row));
    ASSERT_TRUE(probs.ok()) << probs.error().message;
    const properties::ProbabilityCheck c =
        properties::CheckProbabilities(*ref, *probs, AccuracyFor(AccuracyClass::kF32));
    EXPECT_TRUE(c.ok) << "V=" << row.vocab() << " " << c.property << ": " << c.failure;
    worst = std::max(worst, c.worst_ratio);
  }
  std::printf("[stable_cuda] worst error / allowed = %.3g\n", worst);
}

TEST_F(StableCuda, SameTokensAsStableCpu) {
  auto cpu = registry::OpenSampler("stable_cpu");
  ASSERT_TRUE(cpu.ok());
  std::size_t draws = 0, differ = 0;
  for (const TestRow& row : Rows()) {
    const uint64_t n = 5000;
    auto want = (*cpu)->Sample(One(row), 42, 0, n);
    auto have = sampler_->Sample(One(row), 42, 0, n);
    ASSERT_TRUE(want.ok() && have.ok());
    for (uint64_t j = 0; j < n; ++j) differ += (*want)[j] != (*have)[j];
    draws += n;
  }
  std::printf("[stable_cuda] %zu of %zu draws differ from stable_cpu\n", differ, draws);
  EXPECT_LE(differ, draws / 1000);
}

TEST_F(StableCuda, RowsAreIndependentOfTheBatch) {
  const std::vector<TestRow> rows = Rows();
  for (const TestRow& row : rows) {
    if (row.dtype() != DType::kF32 || row.vocab() < 1000) continue;
    auto alone = sampler_->Sample(One(row), 3, 0, 300);
    auto alone_p = sampler_->Probabilities(One(row));
    ASSERT_TRUE(alone.ok() && alone_p.ok());
    // The same row among others of the same V, at different positions and batch sizes.
    for (std::size_t copies : {2u, 7u}) {
      Batch batch{DType::kF32, row.vocab(), {}};
      const TestRow other = TestRow(std::vector<float>(row.vocab(), 1.0f)).T(0.0f).RowId(1);
      for (std::size_t k = 0; k < copies; ++k) batch.rows.push_back(other.view());
      batch.rows.push_back(row.view());
      auto together = sampler_->Sample(batch, 3, 0, 300);
      auto together_p = sampler_->Probabilities(batch);
      ASSERT_TRUE(together.ok() && together_p.ok());
      EXPECT_TRUE(std::equal(alone->begin(), alone->end(), together->begin() + copies * 300));
      EXPECT_EQ(std::memcmp(alone_p->data(), together_p->data() + copies * row.vocab(),
                            row.vocab() * sizeof(double)),
                0);
    }
  }
}

// A batch of at least one row per SM takes the one-block-per-row kernel; alone, a row takes the
// multi-block path. Both must give the host model's bits (and so each other's: BATCH-1).
TEST_F(StableCuda, BothKernelPathsGiveTheSameBits) {
  std::mt19937_64 rng(11);
  for (std::size_t v : {4097u, 131072u}) {
    std::vector<TestRow> rows;
    std::normal_distribution<float> normal(0.0f, 3.0f);
    for (int r = 0; r < 300; ++r) {  // more rows than any GPU has SMs
      std::vector<float> x(v);
      for (float& f : x) f = rng() % 4 == 0 ? std::round(normal(rng)) : normal(rng);
      TestRow row =
          TestRow(x).T(r % 7 == 0 ? 0.0f : 0.5f + 0.01f * static_cast<float>(r)).RowId(7000 + r);
      if (r % 3 == 1) row.TopK(1 + r);
      if (r % 4 == 1) row.TopP(0.2f + 0.002f * static_cast<float>(r));
      if (r % 5 == 1) row.MinP(0.01f);
      if (r % 6 == 1) {
        std::vector<uint8_t> mask(v);
        for (auto& b : mask) b = rng() % 3 != 0;
        mask[0] = 1;
        row.Mask(mask);
      }
      rows.push_back(row);
    }
    Batch batch{DType::kF32, v, {}};
    for (const TestRow& row : rows) batch.rows.push_back(row.view());
    const uint64_t draws = 50;
    auto probs = sampler_->Probabilities(batch);
    auto tokens = sampler_->Sample(batch, 5, 0, draws);
    ASSERT_TRUE(probs.ok() && tokens.ok());
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const cuda_math::HostModelRow m = Model(rows[r]);
      for (std::size_t i = 0; i < v; ++i) {
        ASSERT_EQ((*probs)[r * v + i], m.Probability(static_cast<int64_t>(i)))
            << "row " << r << " token " << i << " V " << v;
      }
      for (uint64_t j = 0; j < draws; ++j) {
        ASSERT_EQ((*tokens)[r * draws + j], m.Draw(CanonicalUniform(5, 7000 + r, j)))
            << "row " << r << " draw " << j;
      }
      if (r % 50 == 0) ExpectMatchesModel(rows[r], 50);  // the same row alone
    }
  }
}

TEST_F(StableCuda, NeverDrawsOutsideTheKeptSet) {
  const TestRow row =
      TestRow({5, -kInf, 5, 1, 5, 0}).Mask({1, 1, 0, 1, 1, 1}).T(0.5f).TopK(2).RowId(4);
  auto tokens = sampler_->Sample(One(row), 8, 0, 20000);
  ASSERT_TRUE(tokens.ok());
  for (int64_t t : *tokens) ASSERT_TRUE(t == 0 || t == 4) << t;
}

TEST_F(StableCuda, InvalidInputGivesTheReferenceError) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<TestRow> rows = {
      TestRow({1, 2}).T(nan),   TestRow({1, 2}).T(-1),        TestRow({1, nan}),
      TestRow({1, 2}).TopK(-3), TestRow({1, 2}).Mask({0, 0}), TestRow({nan, 3}, DType::kF16),
  };
  for (const TestRow& row : rows) {
    const Error want = ValidateRow(row.view(), StableCudaSampler::DeclaredPolicies(), 0);
    ASSERT_NE(want.code, ErrorCode::kOk);
    auto got = sampler_->Sample(One(row), 1, 0, 1);
    ASSERT_FALSE(got.ok()) << want.message;
    EXPECT_EQ(got.error().code, want.code) << got.error().message;
    EXPECT_EQ(got.error().message, want.message);
  }
  // In a batch: a NaN row before a bad-parameter row is the first error.
  const TestRow good({1, 2}), nan_row({nan, 2}), bad = TestRow({1, 2}).T(-1);
  Batch batch{DType::kF32, 2, {good.view(), nan_row.view(), bad.view()}};
  auto got = sampler_->Sample(batch, 1, 0, 1);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kNanLogit) << got.error().message;
  EXPECT_NE(got.error().message.find("row 1:"), std::string::npos) << got.error().message;
}

}  // namespace
}  // namespace sampcert::impls

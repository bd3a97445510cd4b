// The ABI's host side: the loader's refusals, version negotiation, the
// minimal C plug-in loaded by path, and errors crossing the boundary as values.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "adapters/builtin_adapter.h"
#include "adapters/plugin_loader.h"
#include "adapters/sampler.h"

namespace sampcert::adapters {
namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(PluginLoader, MissingFile) {
  auto r = LoadPlugin("/nonexistent/libnothing.so");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.error().message, "no such file")) << r.error().message;
  EXPECT_TRUE(Contains(r.error().message, "/nonexistent/libnothing.so")) << r.error().message;
}

TEST(PluginLoader, FileThatIsNotALibrary) {
  // A text file of its own (not __FILE__, which a compiler cache may make relative).
  const std::string path = testing::TempDir() + "sampcert_not_a_library.cc";
  std::ofstream(path) << "int main() { return 0; }\n";
  auto r = LoadPlugin(path);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.error().message, "not a loadable shared library")) << r.error().message;
}

TEST(PluginLoader, LibraryWithoutEntryPoint) {
  auto r = LoadPlugin(NOT_A_PLUGIN_PATH);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.error().message, "not a sampcert plug-in")) << r.error().message;
  EXPECT_TRUE(Contains(r.error().message, "sampcert_get_sampler_api")) << r.error().message;
}

TEST(PluginLoader, OtherMajorIsRefused) {
  auto r = LoadPlugin(WRONG_MAJOR_PLUGIN_PATH);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kVersionMismatch);
  EXPECT_TRUE(Contains(r.error().message,
                       "this sampcert speaks 1." + std::to_string(SAMPCERT_ABI_VERSION_MINOR)))
      << r.error().message;
}

TEST(PluginLoader, MinimalCPluginByPath) {
  auto plugin = LoadPlugin(MINIMAL_PLUGIN_PATH);
  ASSERT_TRUE(plugin.ok()) << plugin.error().message;
  auto s = Sampler::Open(plugin->api, plugin->library);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const SamplerInfo& info = (*s)->info();
  EXPECT_EQ(info.name, "minimal_c");
  EXPECT_TRUE(info.Has(SAMPCERT_CAP_F32));
  EXPECT_FALSE(info.Has(SAMPCERT_CAP_PROBABILITIES));
  EXPECT_EQ(info.policies.greedy_tie_break, GreedyTieBreak::kLowestIndex);

  const float logits[4] = {0.0f, 5.0f, 1.0f, 5.0f};
  Batch batch{DType::kF32, 4, {RowView{}}};
  batch.rows[0].logits = logits;
  batch.rows[0].vocab = 4;
  batch.rows[0].temperature = 0.0f;
  auto tokens = (*s)->Sample(batch, 1, 0, 50);
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  for (int64_t t : *tokens) EXPECT_EQ(t, 1);  // greedy, lowest index of the tie

  auto probs = (*s)->Probabilities(batch);
  ASSERT_FALSE(probs.ok());
  EXPECT_EQ(probs.error().code, ErrorCode::kUnsupported);

  batch.rows[0].temperature = -1.0f;  // an error comes back as a value, naming the row
  auto bad = (*s)->Sample(batch, 1, 0, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidTemperature);
  EXPECT_EQ(bad.error().row, 0);
  EXPECT_TRUE(Contains(bad.error().message, "row 0")) << bad.error().message;
}

// An impl that throws: the adapter must turn it into an error value, never let it cross.
struct Throwing {
  static constexpr uint32_t kCapabilities = SAMPCERT_CAP_F32;
  static void Describe(sampcert_sampler_info* info) { info->name = "throwing"; }
  Error Probabilities(const sampcert_batch&, double*) { return Error{}; }
  Error Sample(const sampcert_batch&, uint64_t, uint64_t, uint64_t, int64_t*) {
    throw std::runtime_error("boom");
  }
};

TEST(BuiltinAdapter, ExceptionsNeverCrossTheBoundary) {
  const sampcert_sampler_api* api = BuiltinApi<Throwing>::Table();
  sampcert_sampler* handle = nullptr;
  sampcert_error err{};
  err.struct_size = sizeof err;
  ASSERT_EQ(api->create(nullptr, &handle, &err), SAMPCERT_STATUS_OK);
  const float logits[1] = {0.0f};
  sampcert_row row{};
  row.struct_size = sizeof row;
  row.logits = logits;
  sampcert_batch batch = AbiBatch(SAMPCERT_DTYPE_F32, 1, 1, &row);
  int64_t out[1];
  EXPECT_EQ(api->sample(handle, &batch, 0, 0, 1, out, &err), SAMPCERT_STATUS_INTERNAL);
  EXPECT_STREQ(err.message, "exception: boom");
  EXPECT_EQ(api->probabilities, nullptr);  // not declared, so not in the table
  api->destroy(handle);
}

TEST(AbiConversions, LongMessagesAreTruncatedAndTerminated) {
  sampcert_error err{};
  err.struct_size = sizeof err;
  const Error e{ErrorCode::kInternal, std::string(5000, 'x'), 3};
  EXPECT_EQ(FillAbiError(e, &err), SAMPCERT_STATUS_INTERNAL);
  EXPECT_EQ(std::strlen(err.message), SAMPCERT_ERROR_MESSAGE_CAPACITY - 1);
  EXPECT_EQ(err.row, 3);
  EXPECT_EQ(FillAbiError(e, nullptr), SAMPCERT_STATUS_INTERNAL);  // no crash without a struct
}

}  // namespace
}  // namespace sampcert::adapters

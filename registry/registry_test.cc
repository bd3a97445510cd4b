// The built-in registry: every built-in opens by name, an unknown name is refused with the list,
// and the built-in adapter turns shape errors into values.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "registry/builtin_samplers.h"
#include "registry/open_sampler.h"

namespace sampcert::registry {
namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(BuiltinSamplers, OpenByNameAndRefuseUnknown) {
  for (const BuiltinSampler& b : BuiltinSamplers()) {
    auto s = OpenSampler(std::string(b.name));
    // stable_cuda is listed wherever it is built; without a device only its create fails.
    if (!s.ok() && b.name == "stable_cuda" && Contains(s.error().message, "no CUDA device")) {
      continue;
    }
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ((*s)->info().name, b.name);
    EXPECT_EQ(b.api()->abi_major, SAMPCERT_ABI_VERSION_MAJOR);
  }
  auto unknown = OpenSampler("nope");
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(Contains(unknown.error().message, "stable_cpu, naive, floor_fix"))
      << unknown.error().message;
}

// --sampler-config reaches a plug-in's create(): absent is NULL, "" is an empty string.
TEST(OpenSampler, PassesTheConfigToCreate) {
  auto refused = OpenSampler(CONFIG_PLUGIN_PATH, std::string("refuse"));
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Contains(refused.error().message, "config 'refuse' refused"))
      << refused.error().message;
  const uint32_t logit = 0;
  RowView row;
  row.logits = &logit;
  row.vocab = 1;
  const adapters::Batch batch{DType::kF32, 1, {row}};
  const std::pair<std::optional<std::string>, std::string> cases[] = {
      {std::nullopt, "created with config NULL"},
      {std::string(""), "created with config ''"},
      {std::string("temperature_scale=2 name='x y'"),
       "created with config 'temperature_scale=2 name='x y''"}};
  for (const auto& [config, want] : cases) {
    auto s = OpenSampler(CONFIG_PLUGIN_PATH, config);
    ASSERT_TRUE(s.ok()) << s.error().message;
    auto tokens = (*s)->Sample(batch, 0, 0, 1);
    ASSERT_FALSE(tokens.ok());
    EXPECT_EQ(tokens.error().message, want);
  }
}

TEST(BuiltinAdapter, ShapeErrorsAreValues) {
  const sampcert_sampler_api* api = FindBuiltinSampler("stable_cpu");
  ASSERT_NE(api, nullptr);
  sampcert_sampler* handle = nullptr;
  sampcert_error err{};
  err.struct_size = sizeof err;
  ASSERT_EQ(api->create(nullptr, &handle, &err), SAMPCERT_STATUS_OK);
  int64_t out[1];
  EXPECT_EQ(api->sample(handle, nullptr, 0, 0, 1, out, &err), SAMPCERT_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "batch is null");
  sampcert_batch bad{};
  bad.struct_size = sizeof bad;
  bad.dtype = 9;
  EXPECT_EQ(api->sample(handle, &bad, 0, 0, 1, out, &err), SAMPCERT_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(err.message, "unknown dtype code 9")) << err.message;
  api->destroy(handle);
}

}  // namespace
}  // namespace sampcert::registry

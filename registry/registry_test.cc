// The built-in registry: every built-in opens by name, an unknown name is refused with the list,
// and the built-in adapter turns shape errors into values.
#include <gtest/gtest.h>

#include <string>

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

#include "adapters/plugin_loader.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>

#include "adapters/sampler.h"

namespace sampcert::adapters {

Expected<LoadedPlugin> LoadPlugin(const std::string& path) {
  auto fail = [&path](ErrorCode code, const std::string& why) {
    return Error{code, fmt::format("cannot load sampler plug-in '{}': {}", path, why)};
  };
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return fail(ErrorCode::kInvalidArgument, "no such file");
  // RTLD_LOCAL: plug-ins do not see each other's symbols; RTLD_NOW: fail here, not mid-run.
  EnterCall("dlopen (the library's constructors)");
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  LeaveCall();
  if (handle == nullptr) {
    const char* why = dlerror();
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("not a loadable shared library ({})", why ? why : "unknown"));
  }
  std::shared_ptr<void> library(handle, [](void* h) { dlclose(h); });
  dlerror();
  void* sym = dlsym(handle, SAMPCERT_ENTRY_POINT);
  if (sym == nullptr) {
    return fail(ErrorCode::kInvalidArgument,
                "not a sampcert plug-in (it does not export " SAMPCERT_ENTRY_POINT ")");
  }
  auto entry = reinterpret_cast<sampcert_get_sampler_api_fn>(sym);
  const sampcert_sampler_api* api = nullptr;
  EnterCall(SAMPCERT_ENTRY_POINT "()");
  const int32_t status = entry(SAMPCERT_ABI_VERSION_MAJOR, SAMPCERT_ABI_VERSION_MINOR, &api);
  LeaveCall();
  if (status == SAMPCERT_STATUS_VERSION_MISMATCH ||
      (api != nullptr && api->struct_size >= offsetof(sampcert_sampler_api, get_info) &&
       api->abi_major != SAMPCERT_ABI_VERSION_MAJOR)) {
    return fail(ErrorCode::kVersionMismatch,
                fmt::format("built for sampler ABI {}.x, this sampcert speaks {}.{}",
                            api != nullptr ? std::to_string(api->abi_major) : "another",
                            SAMPCERT_ABI_VERSION_MAJOR, SAMPCERT_ABI_VERSION_MINOR));
  }
  if (status != SAMPCERT_STATUS_OK || api == nullptr) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("{} returned status {} and no table", SAMPCERT_ENTRY_POINT, status));
  }
  if (api->struct_size < SAMPCERT_SAMPLER_API_MINOR0_STRUCT_SIZE || api->get_info == nullptr ||
      api->create == nullptr || api->destroy == nullptr || api->sample == nullptr) {
    return fail(ErrorCode::kInvalidArgument,
                "malformed function table (too small, or get_info/create/destroy/sample missing)");
  }
  return LoadedPlugin{api, std::move(library)};
}

}  // namespace sampcert::adapters

// Loads a sampler plug-in (.so) by path and negotiates the ABI version.
#ifndef SAMPCERT_ADAPTERS_PLUGIN_LOADER_H_
#define SAMPCERT_ADAPTERS_PLUGIN_LOADER_H_

#include <memory>
#include <string>

#include "sampcert/error.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::adapters {

struct LoadedPlugin {
  const sampcert_sampler_api* api = nullptr;  // owned by the library
  std::shared_ptr<void> library;              // dlclose()s when the last owner goes
};

// Refuses, with a message naming the path and the reason: a missing file, a file dlopen cannot
// load, a library without the entry point (not a sampcert plug-in), a plug-in of another ABI
// MAJOR, or a table that is malformed (too small, required functions missing).
Expected<LoadedPlugin> LoadPlugin(const std::string& path);

}  // namespace sampcert::adapters

#endif  // SAMPCERT_ADAPTERS_PLUGIN_LOADER_H_

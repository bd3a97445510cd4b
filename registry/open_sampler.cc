#include "registry/open_sampler.h"

#include <fmt/format.h>

#include "adapters/exec_sampler.h"
#include "adapters/plugin_loader.h"
#include "registry/builtin_samplers.h"

namespace sampcert::registry {

Expected<std::unique_ptr<adapters::Sampler>> OpenSampler(const std::string& name_or_path,
                                                         const std::optional<std::string>& config) {
  const char* config_c = config ? config->c_str() : nullptr;
  if (name_or_path.starts_with("exec:")) {
    Expected<adapters::LoadedPlugin> program = adapters::OpenExecSampler(name_or_path.substr(5));
    if (!program.ok()) return program.error();
    return adapters::Sampler::Open(program->api, program->library, config_c);
  }
  const bool looks_like_path =
      name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".so");
  if (!looks_like_path) {
    if (const sampcert_sampler_api* api = FindBuiltinSampler(name_or_path)) {
      return adapters::Sampler::Open(api, nullptr, config_c);
    }
    std::string names;
    for (const BuiltinSampler& s : BuiltinSamplers()) {
      names += names.empty() ? "" : ", ";
      names += s.name;
    }
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("no built-in sampler named '{}' (built-in: {}; a plug-in is given "
                             "by path, e.g. ./libmy_sampler.so)",
                             name_or_path, names)};
  }
  Expected<adapters::LoadedPlugin> plugin = adapters::LoadPlugin(name_or_path);
  if (!plugin.ok()) return plugin.error();
  return adapters::Sampler::Open(plugin->api, plugin->library, config_c);
}

}  // namespace sampcert::registry

// Opens a sampler by what the user typed: a built-in name or a plug-in path. This sits above
// adapters/ (the ABI host side) and impls/ (the built-in samplers), so neither includes the other.
#ifndef SAMPCERT_REGISTRY_OPEN_SAMPLER_H_
#define SAMPCERT_REGISTRY_OPEN_SAMPLER_H_

#include <memory>
#include <optional>
#include <string>

#include "adapters/sampler.h"

namespace sampcert::registry {

// A built-in sampler by name, a plug-in by path (anything with a '/' or ending in ".so"), or a
// process-protocol sampler "exec:COMMAND" (adapters/python/PROTOCOL.md). `config` goes to
// create() (--sampler-config; absent = NULL). Errors say which: no such built-in (and the list),
// no such file, not a plug-in, wrong MAJOR, a command that cannot start.
Expected<std::unique_ptr<adapters::Sampler>> OpenSampler(
    const std::string& name_or_path, const std::optional<std::string>& config = std::nullopt);

}  // namespace sampcert::registry

#endif  // SAMPCERT_REGISTRY_OPEN_SAMPLER_H_

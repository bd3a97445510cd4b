// Opens a sampler by what the user typed: a built-in name or a plug-in path. This sits above
// adapters/ (the ABI host side) and impls/ (the built-in samplers), so neither includes the other.
#ifndef SAMPCERT_REGISTRY_OPEN_SAMPLER_H_
#define SAMPCERT_REGISTRY_OPEN_SAMPLER_H_

#include <memory>
#include <string>

#include "adapters/sampler.h"

namespace sampcert::registry {

// A built-in sampler by name, or a plug-in by path (anything with a '/' or ending in ".so").
// Errors say which: no such built-in (and the list), no such file, not a plug-in, wrong MAJOR.
Expected<std::unique_ptr<adapters::Sampler>> OpenSampler(const std::string& name_or_path);

}  // namespace sampcert::registry

#endif  // SAMPCERT_REGISTRY_OPEN_SAMPLER_H_

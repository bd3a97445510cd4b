// The samplers that ship with sampcert (impls/), by name, behind the same function table as
// plug-ins.
#ifndef SAMPCERT_REGISTRY_BUILTIN_SAMPLERS_H_
#define SAMPCERT_REGISTRY_BUILTIN_SAMPLERS_H_

#include <string>
#include <string_view>
#include <vector>

#include "sampcert/sampler_abi.h"

namespace sampcert::registry {

struct BuiltinSampler {
  std::string_view name;
  std::string_view description;
  const sampcert_sampler_api* (*api)();
};

const std::vector<BuiltinSampler>& BuiltinSamplers();

// nullptr when there is no built-in sampler of that name.
const sampcert_sampler_api* FindBuiltinSampler(std::string_view name);

}  // namespace sampcert::registry

#endif  // SAMPCERT_REGISTRY_BUILTIN_SAMPLERS_H_

#include "registry/builtin_samplers.h"

#include "impls/floor_fix/floor_fix_sampler.h"
#include "impls/naive/naive_sampler.h"
#include "impls/stable_cpu/stable_cpu_sampler.h"
#if defined(SAMPCERT_HAVE_CUDA)
#include "impls/stable_cuda/stable_cuda_sampler.h"
#endif

namespace sampcert::registry {

const std::vector<BuiltinSampler>& BuiltinSamplers() {
  static const std::vector<BuiltinSampler> samplers = {
    {"stable_cpu", "correct and fast CPU sampler (f32/f16/bf16, masks, top-k/p, min-p)",
     &impls::StableCpuSamplerApi},
    {"naive", "the textbook bug: scale and softmax in the input dtype", &impls::NaiveSamplerApi},
    {"floor_fix", "the popular fix: fp32, non-finite and masked values floored at -1e4",
     &impls::FloorFixSamplerApi},
#if defined(SAMPCERT_HAVE_CUDA)
    // Listed even without a device: creating it then fails with "no CUDA device".
    {"stable_cuda", "stable_cpu's semantics on an NVIDIA GPU (needs a CUDA device)",
     &impls::StableCudaSamplerApi},
#endif
  };
  return samplers;
}

const sampcert_sampler_api* FindBuiltinSampler(std::string_view name) {
  for (const BuiltinSampler& s : BuiltinSamplers()) {
    if (s.name == name) return s.api();
  }
  return nullptr;
}

}  // namespace sampcert::registry

// stable_cpu as a plug-in whose translation unit impls/stable_cpu/stable_cpu_sampler.cc is
// compiled into the plug-in itself (not linked from sampcert::impls): tools/tool_mutants.py's
// "stable_cpu" profile builds one copy of this plug-in per universalmutator mutant of that file
// (or of vector_kernels.h, which it includes), by the compile and link commands CMake wrote for
// this target with the mutant's path in place of the original's. Not a shipped sampler: a test
// fixture; the name it declares is stable_cpu's.
#include "adapters/builtin_adapter.h"
#include "impls/stable_cpu/stable_cpu_sampler.h"

extern "C" SAMPCERT_EXPORT int32_t sampcert_get_sampler_api(uint32_t host_major,
                                                            uint32_t /*host_minor*/,
                                                            const sampcert_sampler_api** out) {
  return sampcert::adapters::HandOutTable(
      host_major, sampcert::adapters::BuiltinApi<sampcert::impls::StableCpuSampler>::Table(), out);
}

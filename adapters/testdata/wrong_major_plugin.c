/* A plug-in built for a future ABI MAJOR: the loader must refuse it by name. */
#include <sampcert/sampler_abi.h>

SAMPCERT_EXPORT int32_t sampcert_get_sampler_api(uint32_t host_major, uint32_t host_minor,
                                                 const sampcert_sampler_api** out) {
  (void)host_minor;
  *out = 0;
  return host_major == SAMPCERT_ABI_VERSION_MAJOR + 1 ? SAMPCERT_STATUS_OK
                                                      : SAMPCERT_STATUS_VERSION_MISMATCH;
}

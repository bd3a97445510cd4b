/* The correct sampler built for a future ABI MAJOR: the loader must refuse it by name. */
#define PLUGIN_NAME "wrong_major"
#define PLUGIN_ABI_MAJOR (SAMPCERT_ABI_VERSION_MAJOR + 1)
#include "plugin_skeleton.h"

static int32_t sample_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error) {
  return correct_sample_row(s, row, error, NULL);
}

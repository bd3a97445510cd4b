/* A plug-in that crashes and hangs on purpose, for the runner's isolation tests: it segfaults on
 * rows of 6 tokens at temperature 0 and spins forever on rows of 16 tokens. Otherwise it
 * returns token 0 (a wrong but well-formed answer). */
#define PLUGIN_NAME "misbehaving"
#define PLUGIN_PROBE
#define PLUGIN_INFO declare_greedy
#include "plugin_skeleton.h"

static int32_t declare_greedy(sampcert_sampler_info* info, sampcert_error* error) {
  (void)error;
  info->capabilities |= SAMPCERT_CAP_TEMPERATURE_ZERO; /* so that the plan has rows at T = 0 */
  return SAMPCERT_STATUS_OK;
}

static int32_t sample_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error) {
  (void)s;
  (void)error;
  if (row->vocab == 6 && row->in->temperature == 0.0f) {
    volatile int* null_pointer = NULL;
    *null_pointer = 1; /* SIGSEGV */
  }
  if (row->vocab == 16) {
    for (volatile unsigned long spin = 0;; ++spin) {
    }
  }
  for (uint64_t j = 0; j < row->draws; ++j) row->out[j] = 0;
  return SAMPCERT_STATUS_OK;
}

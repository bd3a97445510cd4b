/* The correct sampler with two textbook bugs, so that a standard run has deterministic failures
 * (shrunk) and statistical ones (tests/reproducibility_test.py): it divides by T before
 * subtracting the maximum, in float (a tiny T gives inf - inf = NaN weights), and it keeps its
 * prefix sums in float. */
#define PLUGIN_NAME "flawed_c"
#define PLUGIN_WEIGHT scaled_first
#include "plugin_skeleton.h"

/* The first bug: scale first, in float, then subtract the scaled maximum. */
static double scaled_first(const sampcert_sampler* s, float x, float max, float t) {
  (void)s;
  return (double)expf(x / t - max / t);
}

static int32_t sample_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error) {
  double sum = 0;
  const int32_t status = row_weights(s, row, error, &sum);
  if (status != SAMPCERT_STATUS_OK) return status;
  /* The second bug: the prefix sums are kept in float, and the draws scale to their total. */
  double* cum = s->weights;
  float running = 0;
  for (uint64_t i = 0; i < row->vocab; ++i) {
    running += (float)cum[i];
    cum[i] = running;
  }
  for (uint64_t j = 0; j < row->draws; ++j) {
    const uint64_t token = first_above(cum, row->vocab, draw_target(row, j, cum[row->vocab - 1]));
    row->out[j] = token < row->vocab ? (int64_t)token : (int64_t)row->vocab - 1;
  }
  return SAMPCERT_STATUS_OK;
}

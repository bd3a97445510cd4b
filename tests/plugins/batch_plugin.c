/* A correct batching f32 sampler with one planted batch defect, for BATCH-1 / RANGE-1
 * (tests/hostile_test.sh, cases batch_*): the skeleton's sampler, declaring SAMPCERT_CAP_BATCH
 * and sampling every row of a batch. SAMPCERT_HOSTILE chooses the defect, which shows only in
 * batches of more than one row:
 *
 *   batch_reversed    row r of the output holds the draws of row num_rows - 1 - r
 *   batch_bad_token   the first and last rows' draws are all token -5
 *
 * Anything else (or unset): correct. */
#define PLUGIN_NAME "batch_defect"
#define PLUGIN_BATCH
#include "plugin_skeleton.h"

static int mode(const char* m) {
  const char* e = getenv("SAMPCERT_HOSTILE");
  return e != NULL && strcmp(e, m) == 0;
}

static int32_t sample_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error) {
  const uint64_t n = row->batch->num_rows;
  const uint64_t r = (uint64_t)row->index;
  int64_t* const out = row->out - r * row->draws; /* the whole batch's output */
  plugin_row placed = *row;
  if (n > 1 && mode("batch_reversed")) placed.out = out + (n - 1 - r) * row->draws;
  const int32_t status = correct_sample_row(s, &placed, error, NULL);
  if (status != SAMPCERT_STATUS_OK) return status;
  if (n > 1 && r == n - 1 && mode("batch_bad_token")) { /* once every row is drawn */
    for (uint64_t j = 0; j < row->draws; ++j) {
      out[j] = -5;
      out[(n - 1) * row->draws + j] = -5;
    }
  }
  return SAMPCERT_STATUS_OK;
}

/* Planted invariance defects (SPEC DET-3, BATCH-2, INDEP-1): the correct batching sampler with one
 * defect in how it keys its random stream, chosen by the environment variable SAMPCERT_DEFECT
 * when the sampler is created (as defective_plugin.c). Each is a mechanism from engines' bug
 * threads:
 *   none             the correct sampler (the control: it must pass)
 *   row_id_ignored   the stream is keyed by the seed alone: every row of a request draws the same
 *                    tokens (DET-3)
 *   slot_above_32    batches of more than 32 rows go to a second kernel that keys each row's
 *                    stream by its slot in the batch, not its row id (BATCH-2)
 *   paired_rows      rows 2m and 2m + 1 share one uniform, the odd row's shifted by one half: each
 *                    stream is exact alone, adjacent rows are dependent (INDEP-1)
 *   stale_offset     first_draw is ignored: a call that continues a stream repeats its start
 *                    (INDEP-1; the looks of every distribution test repeat too)
 * tests/CMakeLists.txt runs the standard profile on each and names the property that must catch
 * it, and those it must not blame.
 */
enum defect { kNone, kRowIdIgnored, kSlotAbove32, kPairedRows, kStaleOffset };

#define PLUGIN_NAME "invariance_defect"
#define PLUGIN_BATCH
#define PLUGIN_STATE enum defect
#define PLUGIN_CREATE choose_defect
#define PLUGIN_DRAW_BITS keyed_bits
#include "plugin_skeleton.h"

static enum defect g_defect; /* the draw hook sees the row, not the sampler: set by create */

static int32_t choose_defect(const char* config, sampcert_sampler* s, sampcert_error* error) {
  static const char* const kNames[] = {"none", "row_id_ignored", "slot_above_32", "paired_rows",
                                       "stale_offset"};
  (void)config;
  const int found = chosen_defect(kNames, (int)(sizeof kNames / sizeof kNames[0]), error);
  if (found < 0) return SAMPCERT_STATUS_INVALID_ARGUMENT;
  s->state = (enum defect)found;
  g_defect = s->state;
  return SAMPCERT_STATUS_OK;
}

static uint64_t keyed_bits(const plugin_row* row, uint64_t j) {
  const uint64_t id = row->in->row_id;
  switch (g_defect) {
    case kRowIdIgnored: return stream_bits(row->seed, 0, row->first_draw + j);
    case kSlotAbove32:
      if (row->batch->num_rows > 32) {
        return stream_bits(row->seed, (uint64_t)row->index, row->first_draw + j);
      }
      break;
    case kPairedRows:
      return stream_bits(row->seed, id & ~(uint64_t)1, row->first_draw + j) + ((id & 1) << 63);
    case kStaleOffset: return stream_bits(row->seed, id, j);
    default: break;
  }
  return correct_draw_bits(row, j);
}

static int32_t sample_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error) {
  return correct_sample_row(s, row, error, NULL);
}

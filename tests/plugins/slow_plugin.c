/* A deliberately slow sampler: correct, but each draw costs O(V), as llama.cpp's `dist` does (it
 * recomputes the softmax of the whole row for every token it draws). It declares that cost
 * (draw_cost_ns_per_token, ABI MINOR 1), so the plan caps each statistical test's draws at the
 * profile's draw-time target divided by (cost x V): the standard profile then completes without
 * a Timeout, and the tests on large rows that the capped draws cannot power are Inconclusive
 * (tests/slow_sampler_test.py checks both).
 * The declared cost is an upper bound of the work below on a 2020s x86 core (one exp and a few
 * additions per token, 1.5 passes per draw: 12 ns measured on the loaded 2-core development
 * machine), so the declared time over-states the real one.
 */
#define PLUGIN_NAME "slow_c"
#define PLUGIN_INFO declare_cost
#include "plugin_skeleton.h"

/* Declared nanoseconds per draw per vocabulary token. */
#define SLOW_DRAW_COST_NS_PER_TOKEN 16.0f

static int32_t declare_cost(sampcert_sampler_info* info, sampcert_error* error) {
  (void)error;
#if SAMPCERT_ABI_VERSION_MINOR >= 1
  info->draw_mode = SAMPCERT_DRAWS_RANDOM_ACCESS;
  info->draw_cost_ns_per_token = SLOW_DRAW_COST_NS_PER_TOKEN;
#else
  (void)info;
#endif
  return SAMPCERT_STATUS_OK;
}

static int32_t sample_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error) {
  float max = 0;
  uint64_t argmax = 0;
  const int32_t status = check_row(row, error, &max, &argmax);
  if (status != SAMPCERT_STATUS_OK) return status;
  for (uint64_t j = 0; j < row->draws; ++j) {
    /* O(V) per draw on purpose: the whole softmax again, then a linear scan. */
    double sum = 0;
    for (uint64_t i = 0; i < row->vocab; ++i) sum += token_weight(s, row, i, max, argmax);
    const double target = draw_target(row, j, sum);
    double cum = 0;
    uint64_t chosen = row->vocab;
    uint64_t last_positive = 0;
    for (uint64_t i = 0; i < row->vocab; ++i) {
      const double w = token_weight(s, row, i, max, argmax);
      if (w <= 0) continue;
      last_positive = i;
      cum += w;
      if (cum > target) {
        chosen = i;
        break;
      }
    }
    /* The target rounded up to the total: the last token of positive weight. */
    row->out[j] = (int64_t)(chosen < row->vocab ? chosen : last_positive);
  }
  return SAMPCERT_STATUS_OK;
}

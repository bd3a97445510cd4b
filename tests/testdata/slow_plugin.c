/* A deliberately slow sampler (issue 10): correct, but each draw costs O(V), as llama.cpp's
 * `dist` does (it recomputes the softmax of the whole row for every token it draws). It
 * declares that cost (draw_cost_ns_per_token, ABI MINOR 1), so the plan caps each statistical
 * test's draws at the profile's draw-time target divided by (cost x V): the standard profile
 * then completes without a Timeout, and the tests on large rows that the capped draws cannot
 * power are Inconclusive (tests/slow_sampler_test.py checks both).
 * The declared cost is an upper bound of the work below on a 2020s x86 core (one exp and a few
 * additions per token, 1.5 passes per draw: 12 ns measured on the loaded 2-core development
 * machine), so the declared time over-states the real one.
 */
#include <math.h>
#include <sampcert/sampler_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Declared nanoseconds per draw per vocabulary token. */
#define SLOW_DRAW_COST_NS_PER_TOKEN 16.0f

static int32_t fail(sampcert_error* error, int32_t code, int64_t row, const char* what) {
  if (error != NULL && error->struct_size >= sizeof(sampcert_error)) {
    error->code = code;
    error->row = row;
    if (row >= 0) {
      snprintf(error->message, sizeof error->message, "row %lld: %s", (long long)row, what);
    } else {
      snprintf(error->message, sizeof error->message, "%s", what);
    }
  }
  return code;
}

static int32_t get_info(sampcert_sampler_info* info, sampcert_error* error) {
  if (info == NULL || info->struct_size < sizeof(sampcert_sampler_info)) {
    return fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "info struct too small");
  }
  size_t size = info->struct_size;
  memset(info, 0, size);
  info->struct_size = size;
  info->name = "slow_c";
  info->version = "1.0";
  info->capabilities = SAMPCERT_CAP_F32 | SAMPCERT_CAP_TEMPERATURE_ZERO;
  info->greedy_tie_break = SAMPCERT_GREEDY_LOWEST_INDEX;
  info->tie_rule = SAMPCERT_TIES_KEEP_ALL;
  info->pipeline_order = SAMPCERT_ORDER_TEMPERATURE_FIRST;
  info->truncation_order[0] = SAMPCERT_STEP_TOP_K;
  info->truncation_order[1] = SAMPCERT_STEP_TOP_P;
  info->truncation_order[2] = SAMPCERT_STEP_MIN_P;
  info->nan_policy = SAMPCERT_NAN_ERROR;
  info->determinism = SAMPCERT_DETERMINISM_SAME_SEED;
  info->accuracy = SAMPCERT_ACCURACY_F32;
  info->thread_safe = 1;
#if SAMPCERT_ABI_VERSION_MINOR >= 1
  info->draw_mode = SAMPCERT_DRAWS_RANDOM_ACCESS;
  info->draw_cost_ns_per_token = SLOW_DRAW_COST_NS_PER_TOKEN;
#endif
  return SAMPCERT_STATUS_OK;
}

struct sampcert_sampler {
  int unused;
};

static int32_t create(const char* config, sampcert_sampler** out, sampcert_error* error) {
  (void)config;
  *out = calloc(1, sizeof(sampcert_sampler));
  if (*out == NULL) return fail(error, SAMPCERT_STATUS_OUT_OF_MEMORY, -1, "out of memory");
  return SAMPCERT_STATUS_OK;
}

static void destroy(sampcert_sampler* s) { free(s); }

static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* The weight of token i (relative to the maximum m), the limits T = 0 and +inf included. */
static double weight(const float* x, uint64_t i, float t, float m, uint64_t first_max) {
  if (t == 0.0f) return i == first_max ? 1.0 : 0.0; /* lowest-index greedy tie-break */
  if (isinf(m)) return x[i] == m ? 1.0 : 0.0;
  return exp(((double)x[i] - (double)m) / (double)t);
}

static int32_t sample(sampcert_sampler* s, const sampcert_batch* b, uint64_t seed,
                      uint64_t first_draw, uint64_t draws_per_row, int64_t* out,
                      sampcert_error* error) {
  (void)s;
  if (b == NULL || b->struct_size < sizeof(sampcert_batch) || b->dtype != SAMPCERT_DTYPE_F32 ||
      b->num_rows != 1 || b->vocab == 0) {
    return fail(error, SAMPCERT_STATUS_UNSUPPORTED, -1, "one f32 row of V >= 1 only");
  }
  const sampcert_row* row = &b->rows[0];
  const float* x = (const float*)row->logits;
  const float t = row->temperature;
  if (isnan(t) || t < 0.0f || isinf(t)) {
    return fail(error, SAMPCERT_STATUS_INVALID_TEMPERATURE, 0,
                "temperature must be a finite number >= 0");
  }
  if (row->top_k != 0 || row->top_p != 1.0f || row->min_p != 0.0f || row->mask != NULL) {
    return fail(error, SAMPCERT_STATUS_UNSUPPORTED, 0, "truncation and masks are not supported");
  }
  float m = -INFINITY;
  uint64_t first_max = 0;
  for (uint64_t i = 0; i < b->vocab; ++i) {
    if (isnan(x[i])) return fail(error, SAMPCERT_STATUS_NAN_LOGIT, 0, "NaN logit");
    if (x[i] > m) {
      m = x[i];
      first_max = i;
    }
  }
  if (m == -INFINITY) return fail(error, SAMPCERT_STATUS_EMPTY_SUPPORT, 0, "every logit is -inf");
  for (uint64_t j = 0; j < draws_per_row; ++j) {
    /* O(V) per draw on purpose: the whole softmax again, then a linear scan. */
    double sum = 0;
    for (uint64_t i = 0; i < b->vocab; ++i) sum += weight(x, i, t, m, first_max);
    const uint64_t bits = splitmix64(seed ^ splitmix64(row->row_id ^ splitmix64(first_draw + j)));
    const double target = ((double)(bits >> 11) + 0.5) * 0x1p-53 * sum;
    double cum = 0;
    uint64_t chosen = b->vocab;
    uint64_t last_positive = 0;
    for (uint64_t i = 0; i < b->vocab; ++i) {
      const double w = weight(x, i, t, m, first_max);
      if (w <= 0) continue;
      last_positive = i;
      cum += w;
      if (cum > target) {
        chosen = i;
        break;
      }
    }
    /* The target rounded up to the total: the last token of positive weight. */
    out[j] = (int64_t)(chosen < b->vocab ? chosen : last_positive);
  }
  return SAMPCERT_STATUS_OK;
}

static const sampcert_sampler_api kApi = {
    sizeof(sampcert_sampler_api),
    SAMPCERT_ABI_VERSION_MAJOR,
    SAMPCERT_ABI_VERSION_MINOR,
    get_info,
    create,
    destroy,
    NULL /* no probabilities */,
    sample,
};

SAMPCERT_EXPORT int32_t sampcert_get_sampler_api(uint32_t host_major, uint32_t host_minor,
                                                 const sampcert_sampler_api** out) {
  (void)host_minor; /* any MINOR of our MAJOR works: fields are only ever appended */
  *out = NULL;
  if (host_major != SAMPCERT_ABI_VERSION_MAJOR) return SAMPCERT_STATUS_VERSION_MISMATCH;
  *out = &kApi;
  return SAMPCERT_STATUS_OK;
}

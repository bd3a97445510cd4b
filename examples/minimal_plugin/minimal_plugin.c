/* A complete minimal sampcert plug-in, in C, built against the installed header only:
 *
 *   cc -std=c11 -O2 -shared -fPIC -fvisibility=hidden -I<prefix>/include \
 *      minimal_plugin.c -o libminimal_plugin.so -lm
 *   sampcert info --sampler ./libminimal_plugin.so
 *
 * It samples f32 rows exactly as SPEC.md says for temperature > 0 and = 0 (no masks, no
 * truncation: it declares only what it does), computing the softmax in double after
 * subtracting the maximum. Its random numbers come from SplitMix64 keyed by (seed, row id,
 * draw index), so it promises same-seed determinism, not the canonical draw.
 */
#include <math.h>
#include <sampcert/sampler_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  info->name = "minimal_c";
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
  return SAMPCERT_STATUS_OK;
}

struct sampcert_sampler {
  double* weights; /* scratch, grown as needed */
  uint64_t capacity;
};

static int32_t create(const char* config, sampcert_sampler** out, sampcert_error* error) {
  (void)config;
  *out = calloc(1, sizeof(sampcert_sampler));
  return *out != NULL ? SAMPCERT_STATUS_OK
                      : fail(error, SAMPCERT_STATUS_OUT_OF_MEMORY, -1, "out of memory");
}

static void destroy(sampcert_sampler* s) {
  if (s != NULL) free(s->weights);
  free(s);
}

static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* Fills s->weights for one row (relative to the maximum); returns their sum, or < 0 on error. */
static double row_weights(sampcert_sampler* s, const sampcert_batch* b, uint64_t r,
                          sampcert_error* error, int32_t* status) {
  const sampcert_row* row = &b->rows[r];
  const float* x = (const float*)row->logits;
  const float t = row->temperature;
  if (isnan(t) || t < 0.0f || isinf(t)) {
    *status = fail(error, SAMPCERT_STATUS_INVALID_TEMPERATURE, (int64_t)r,
                   "temperature must be a finite number >= 0");
    return -1;
  }
  if (row->top_k != 0 || row->top_p != 1.0f || row->min_p != 0.0f || row->mask != NULL) {
    *status = fail(error, SAMPCERT_STATUS_UNSUPPORTED, (int64_t)r,
                   "truncation and masks are "
                   "not supported");
    return -1;
  }
  if (s->capacity < b->vocab) {
    double* grown = realloc(s->weights, b->vocab * sizeof(double));
    if (grown == NULL) {
      *status = fail(error, SAMPCERT_STATUS_OUT_OF_MEMORY, (int64_t)r, "out of memory");
      return -1;
    }
    s->weights = grown;
    s->capacity = b->vocab;
  }
  double m = -INFINITY;
  for (uint64_t i = 0; i < b->vocab; ++i) {
    if (isnan(x[i])) {
      *status = fail(error, SAMPCERT_STATUS_NAN_LOGIT, (int64_t)r, "NaN logit");
      return -1;
    }
    if (x[i] > m) m = x[i];
  }
  if (m == -INFINITY) {
    *status = fail(error, SAMPCERT_STATUS_EMPTY_SUPPORT, (int64_t)r, "every logit is -inf");
    return -1;
  }
  double sum = 0;
  int winner_taken = 0;
  for (uint64_t i = 0; i < b->vocab; ++i) {
    double w;
    if (t == 0.0f || isinf(m)) { /* the limits: the maximum (or +inf) tokens win */
      w = (x[i] == m && !(t == 0.0f && winner_taken)) ? 1.0 : 0.0;
      if (w > 0) winner_taken = 1; /* lowest-index greedy tie-break */
    } else {
      w = exp(((double)x[i] - m) / (double)t);
    }
    s->weights[i] = w;
    sum += w;
  }
  return sum;
}

static int32_t sample(sampcert_sampler* s, const sampcert_batch* b, uint64_t seed,
                      uint64_t first_draw, uint64_t draws_per_row, int64_t* out,
                      sampcert_error* error) {
  if (b == NULL || b->struct_size < sizeof(sampcert_batch) || b->dtype != SAMPCERT_DTYPE_F32 ||
      b->num_rows != 1 || b->vocab == 0) {
    return fail(error, SAMPCERT_STATUS_UNSUPPORTED, -1, "one f32 row of V >= 1 only");
  }
  int32_t status = SAMPCERT_STATUS_OK;
  const double sum = row_weights(s, b, 0, error, &status);
  if (sum < 0) return status;
  /* Prefix sums in place (the same order as the total, so the last one is `sum` exactly), then
   * each draw is a binary search: O(V) per call, O(log V) per draw. */
  double* cum = s->weights;
  for (uint64_t i = 1; i < b->vocab; ++i) cum[i] += cum[i - 1];
  for (uint64_t j = 0; j < draws_per_row; ++j) {
    const uint64_t bits =
        splitmix64(seed ^ splitmix64(b->rows[0].row_id ^ splitmix64(first_draw + j)));
    const double target = ((double)(bits >> 11) + 0.5) * 0x1p-53 * sum;
    /* The first token whose prefix sum exceeds the target: its own weight is > 0. */
    uint64_t lo = 0, hi = b->vocab;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      if (cum[mid] > target) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    if (lo == b->vocab) { /* target rounded up to the total: the last token of positive weight */
      lo = b->vocab - 1;
      while (lo > 0 && cum[lo] == cum[lo - 1]) --lo;
    }
    out[j] = (int64_t)lo;
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
    NULL /* no verify (ABI MINOR 2) */,
};

SAMPCERT_EXPORT int32_t sampcert_get_sampler_api(uint32_t host_major, uint32_t host_minor,
                                                 const sampcert_sampler_api** out) {
  (void)host_minor; /* any MINOR of our MAJOR works: fields are only ever appended */
  *out = NULL;
  if (host_major != SAMPCERT_ABI_VERSION_MAJOR) return SAMPCERT_STATUS_VERSION_MISMATCH;
  *out = &kApi;
  return SAMPCERT_STATUS_OK;
}

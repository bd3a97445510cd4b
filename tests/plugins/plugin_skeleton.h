/* The skeleton of the C plug-ins the tests load: a correct f32 sampler, cut into the pieces that
 * a test plug-in changes, so that each plug-in file holds only its defect or its behaviour.
 * (The plug-in of docs/plugins.md, examples/minimal_plugin/minimal_plugin.c, is the same sampler
 * written out in one file: users copy it, so it includes nothing but the ABI header.)
 *
 * A plug-in includes this header once, from its one source file, and defines sample_row:
 *
 *   #define PLUGIN_NAME "flawed_c"
 *   #include "plugin_skeleton.h"
 *   static int32_t sample_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error) {
 *     ...
 *   }
 *
 * The skeleton supplies the entry point with its version negotiation, get_info (the correct
 * sampler's declaration), create and destroy, the sample() batch loop that calls the plug-in's
 * sample_row once per row, and the error plumbing (fail). For sample_row it offers the correct
 * sampler's parts: check_row, token_weight, row_weights, stream_bits, draw_target, first_above,
 * draw_by_prefix_sums and correct_sample_row (defined below in that order); for a PLUGIN_CREATE
 * that plants a defect, chosen_defect. Optional hooks, defined before the include:
 *
 *   PLUGIN_STATE T           the sampler has a member `T state`, zeroed by create
 *   PLUGIN_CREATE f          int32_t f(const char* config, sampcert_sampler* s, sampcert_error* e):
 *                            runs in create; an error status fails create
 *   PLUGIN_INFO f            int32_t f(sampcert_sampler_info* info, sampcert_error* e): runs
 *                            after get_info filled in the declaration, to change it or fail
 *   PLUGIN_WEIGHT f          double f(const sampcert_sampler* s, float x, float max, float t):
 *                            a token's weight at a finite maximum and temperature > 0
 *   PLUGIN_ON_ERROR f        void f(sampcert_error* e): runs on every error report once written
 *   PLUGIN_DRAW_BITS f       uint64_t f(const plugin_row* row, uint64_t j): the 64 random bits of
 *                            the row's draw number first_draw + j (default correct_draw_bits:
 *                            stream_bits keyed by seed, row id and draw number)
 *   PLUGIN_PROBE             the plug-in probes the host instead of sampling: it declares little
 *                            (version "1", f32 only, uniform greedy ties, not thread-safe), and
 *                            sample() hands it every batch unchecked
 *   PLUGIN_BATCH             the plug-in samples batches: it declares SAMPCERT_CAP_BATCH, and
 *                            sample() takes any number of rows >= 1
 *   PLUGIN_ABI_MAJOR         the ABI MAJOR the plug-in says it is built for
 */
#ifndef SAMPCERT_TESTS_PLUGINS_PLUGIN_SKELETON_H_
#define SAMPCERT_TESTS_PLUGINS_PLUGIN_SKELETON_H_

#include <math.h>
#include <sampcert/sampler_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PLUGIN_NAME
#error "define PLUGIN_NAME before including plugin_skeleton.h"
#endif
#ifndef PLUGIN_ABI_MAJOR
#define PLUGIN_ABI_MAJOR SAMPCERT_ABI_VERSION_MAJOR
#endif
/* The batches sample() takes, unless PLUGIN_PROBE (which takes every one unchecked). */
#ifdef PLUGIN_BATCH
#define PLUGIN_TAKES_ROWS(n) ((n) >= 1)
#define PLUGIN_TAKES "f32 rows of V >= 1 only"
#else
#define PLUGIN_TAKES_ROWS(n) ((n) == 1)
#define PLUGIN_TAKES "one f32 row of V >= 1 only"
#endif

struct sampcert_sampler {
  double* weights; /* row_weights' scratch, grown as needed */
  uint64_t capacity;
#ifdef PLUGIN_STATE
  PLUGIN_STATE state;
#endif
};

/* One row of a sample() call, as the batch loop hands it to sample_row. */
typedef struct plugin_row {
  const sampcert_batch* batch; /* the whole call's batch (num_rows, for one) */
  const sampcert_row* in;      /* the caller's row: temperature, truncation, mask, row_id */
  int64_t index;               /* its index in the batch, for error->row */
  const float* logits;         /* in->logits as f32, the one dtype the skeleton declares */
  uint64_t vocab;
  uint64_t seed; /* sample()'s arguments */
  uint64_t first_draw;
  uint64_t draws;
  int64_t* out; /* this row's `draws` tokens */
} plugin_row;

static int32_t sample_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error);
#ifdef PLUGIN_CREATE
static int32_t PLUGIN_CREATE(const char* config, sampcert_sampler* s, sampcert_error* error);
#endif
#ifdef PLUGIN_INFO
static int32_t PLUGIN_INFO(sampcert_sampler_info* info, sampcert_error* error);
#endif
#ifdef PLUGIN_ON_ERROR
static void PLUGIN_ON_ERROR(sampcert_error* error);
#endif
#ifdef PLUGIN_WEIGHT
static double PLUGIN_WEIGHT(const sampcert_sampler* s, float x, float max, float t);
#else
#define PLUGIN_WEIGHT correct_weight
/* In double after subtracting the maximum: no overflow, and exact to about 1e-16. */
static inline double correct_weight(const sampcert_sampler* s, float x, float max, float t) {
  (void)s;
  return exp(((double)x - (double)max) / (double)t);
}
#endif

/* Reports an error (row >= 0: "row N: what") and returns its code. */
static int32_t fail(sampcert_error* error, int32_t code, int64_t row, const char* what) {
  if (error != NULL && error->struct_size >= sizeof(sampcert_error)) {
    error->code = code;
    error->row = row;
    if (row >= 0) {
      snprintf(error->message, sizeof error->message, "row %lld: %s", (long long)row, what);
    } else {
      snprintf(error->message, sizeof error->message, "%s", what);
    }
#ifdef PLUGIN_ON_ERROR
    PLUGIN_ON_ERROR(error);
#endif
  }
  return code;
}

/* For plug-ins with planted defects: the index in names[0..n) of the environment variable
 * SAMPCERT_DEFECT (names[0], "none", when unset), or -1 after reporting it unknown. Read when
 * the sampler is created (the runner passes no config string; forked workers inherit the
 * environment). */
static inline int chosen_defect(const char* const* names, int n, sampcert_error* error) {
  const char* name = getenv("SAMPCERT_DEFECT");
  if (name == NULL) name = names[0];
  for (int i = 0; i < n; ++i) {
    if (strcmp(name, names[i]) == 0) return i;
  }
  fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "unknown SAMPCERT_DEFECT");
  return -1;
}

/* The correct sampler's declaration: it samples f32 rows for T >= 0, no masks, no truncation. */
static int32_t get_info(sampcert_sampler_info* info, sampcert_error* error) {
  if (info == NULL || info->struct_size < sizeof(sampcert_sampler_info)) {
    return fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "info struct too small");
  }
  size_t size = info->struct_size;
  memset(info, 0, size);
  info->struct_size = size;
  info->name = PLUGIN_NAME;
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
#ifdef PLUGIN_PROBE
  info->version = "1";
  info->capabilities = SAMPCERT_CAP_F32;
  info->greedy_tie_break = SAMPCERT_GREEDY_UNIFORM;
  info->thread_safe = 0;
#endif
#ifdef PLUGIN_BATCH
  info->capabilities |= SAMPCERT_CAP_BATCH;
#endif
#ifdef PLUGIN_INFO
  return PLUGIN_INFO(info, error);
#else
  return SAMPCERT_STATUS_OK;
#endif
}

static int32_t create(const char* config, sampcert_sampler** out, sampcert_error* error) {
  sampcert_sampler* s = calloc(1, sizeof(sampcert_sampler));
  if (s == NULL) return fail(error, SAMPCERT_STATUS_OUT_OF_MEMORY, -1, "out of memory");
#ifdef PLUGIN_CREATE
  const int32_t status = PLUGIN_CREATE(config, s, error);
  if (status != SAMPCERT_STATUS_OK) {
    free(s);
    return status;
  }
#else
  (void)config;
#endif
  *out = s;
  return SAMPCERT_STATUS_OK;
}

static void destroy(sampcert_sampler* s) {
  if (s != NULL) free(s->weights);
  free(s);
}

static int32_t sample(sampcert_sampler* s, const sampcert_batch* b, uint64_t seed,
                      uint64_t first_draw, uint64_t draws_per_row, int64_t* out,
                      sampcert_error* error) {
#ifndef PLUGIN_PROBE
  if (b == NULL || b->struct_size < sizeof(sampcert_batch) || b->dtype != SAMPCERT_DTYPE_F32 ||
      !PLUGIN_TAKES_ROWS(b->num_rows) || b->vocab == 0) {
    return fail(error, SAMPCERT_STATUS_UNSUPPORTED, -1, PLUGIN_TAKES);
  }
#endif
  for (uint64_t r = 0; r < b->num_rows; ++r) {
    const plugin_row row = {
        b,    &b->rows[r], (int64_t)r,    (const float*)b->rows[r].logits, b->vocab,
        seed, first_draw,  draws_per_row, out + r * draws_per_row};
    const int32_t status = sample_row(s, &row, error);
    if (status != SAMPCERT_STATUS_OK) return status;
  }
  return SAMPCERT_STATUS_OK;
}

/* ---- The correct sampler's parts, for sample_row (inline: a plug-in uses what it needs). ---- */

/* The checks of a correct sampler that supports nothing but temperature, in the order it makes
 * them; on success, the largest logit and the lowest index that holds it. */
static inline int32_t check_row(const plugin_row* row, sampcert_error* error, float* max,
                                uint64_t* argmax) {
  const sampcert_row* in = row->in;
  const float t = in->temperature;
  if (isnan(t) || t < 0.0f || isinf(t)) {
    return fail(error, SAMPCERT_STATUS_INVALID_TEMPERATURE, row->index,
                "temperature must be a finite number >= 0");
  }
  if (in->top_k != 0 || in->top_p != 1.0f || in->min_p != 0.0f || in->mask != NULL) {
    return fail(error, SAMPCERT_STATUS_UNSUPPORTED, row->index,
                "truncation and masks are not supported");
  }
  float m = -INFINITY;
  uint64_t at = 0;
  for (uint64_t i = 0; i < row->vocab; ++i) {
    if (isnan(row->logits[i])) {
      return fail(error, SAMPCERT_STATUS_NAN_LOGIT, row->index, "NaN logit");
    }
    if (row->logits[i] > m) {
      m = row->logits[i];
      at = i;
    }
  }
  if (m == -INFINITY) {
    return fail(error, SAMPCERT_STATUS_EMPTY_SUPPORT, row->index, "every logit is -inf");
  }
  *max = m;
  *argmax = at;
  return SAMPCERT_STATUS_OK;
}

/* Token i's weight relative to the maximum, the limits included: at T = 0 the lowest-index
 * maximum takes all (greedy), and an infinite maximum shares all among the infinite tokens. */
static inline double token_weight(const sampcert_sampler* s, const plugin_row* row, uint64_t i,
                                  float max, uint64_t argmax) {
  const float t = row->in->temperature;
  if (t == 0.0f) return i == argmax ? 1.0 : 0.0;
  if (isinf(max)) return row->logits[i] == max ? 1.0 : 0.0;
  return PLUGIN_WEIGHT(s, row->logits[i], max, t);
}

/* Checks the row, then fills s->weights with its weights and *sum with their total. */
static inline int32_t row_weights(sampcert_sampler* s, const plugin_row* row, sampcert_error* error,
                                  double* sum) {
  float max = 0;
  uint64_t argmax = 0;
  const int32_t status = check_row(row, error, &max, &argmax);
  if (status != SAMPCERT_STATUS_OK) return status;
  if (s->capacity < row->vocab) {
    double* grown = realloc(s->weights, row->vocab * sizeof(double));
    if (grown == NULL) {
      return fail(error, SAMPCERT_STATUS_OUT_OF_MEMORY, row->index, "out of memory");
    }
    s->weights = grown;
    s->capacity = row->vocab;
  }
  double total = 0;
  for (uint64_t i = 0; i < row->vocab; ++i) {
    s->weights[i] = token_weight(s, row, i, max, argmax);
    total += s->weights[i];
  }
  *sum = total;
  return SAMPCERT_STATUS_OK;
}

static inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* A stream's 64 random bits: SplitMix64 keyed by (seed, row id, draw number), so the sampler
 * promises same-seed determinism, not the canonical draw. */
static inline uint64_t stream_bits(uint64_t seed, uint64_t row_id, uint64_t draw) {
  return splitmix64(seed ^ splitmix64(row_id ^ splitmix64(draw)));
}

#ifdef PLUGIN_DRAW_BITS
static uint64_t PLUGIN_DRAW_BITS(const plugin_row* row, uint64_t j);
#else
#define PLUGIN_DRAW_BITS correct_draw_bits
#endif
static inline uint64_t correct_draw_bits(const plugin_row* row, uint64_t j) {
  return stream_bits(row->seed, row->in->row_id, row->first_draw + j);
}

/* Draw j's target, uniform on (0, total). */
static inline double draw_target(const plugin_row* row, uint64_t j, double total) {
  const uint64_t bits = PLUGIN_DRAW_BITS(row, j);
  return ((double)(bits >> 11) + 0.5) * 0x1p-53 * total;
}

/* The first index whose prefix sum exceeds target (v if none): its own weight is > 0. */
static inline uint64_t first_above(const double* cum, uint64_t v, double target) {
  uint64_t lo = 0, hi = v;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (cum[mid] > target) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

/* Draws from s->weights (of total `sum`): prefix sums in place, in the order of the total so the
 * last one is `sum` exactly, then a binary search per draw: O(V) per call, O(log V) per draw. */
static inline void draw_by_prefix_sums(sampcert_sampler* s, const plugin_row* row, double sum) {
  double* cum = s->weights;
  for (uint64_t i = 1; i < row->vocab; ++i) cum[i] += cum[i - 1];
  for (uint64_t j = 0; j < row->draws; ++j) {
    uint64_t token = first_above(cum, row->vocab, draw_target(row, j, sum));
    if (token == row->vocab) { /* the target rounded up to the total: the last positive weight */
      token = row->vocab - 1;
      while (token > 0 && cum[token] == cum[token - 1]) --token;
    }
    row->out[j] = (int64_t)token;
  }
}

/* Reshapes a row's weights w[0..v) of total `sum` before the draws; returns their new total. */
typedef double (*plugin_reshape)(const sampcert_sampler* s, double* w, uint64_t v, double sum);

/* The correct sampler's sample_row, the weights passed through `reshape` (if not NULL). */
static inline int32_t correct_sample_row(sampcert_sampler* s, const plugin_row* row,
                                         sampcert_error* error, plugin_reshape reshape) {
  double sum = 0;
  const int32_t status = row_weights(s, row, error, &sum);
  if (status != SAMPCERT_STATUS_OK) return status;
  if (reshape != NULL) sum = reshape(s, s->weights, row->vocab, sum);
  draw_by_prefix_sums(s, row, sum);
  return SAMPCERT_STATUS_OK;
}

static const sampcert_sampler_api kApi = {
    sizeof(sampcert_sampler_api),
    PLUGIN_ABI_MAJOR,
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
  if (host_major != PLUGIN_ABI_MAJOR) return SAMPCERT_STATUS_VERSION_MISMATCH;
  *out = &kApi;
  return SAMPCERT_STATUS_OK;
}

#endif /* SAMPCERT_TESTS_PLUGINS_PLUGIN_SKELETON_H_ */

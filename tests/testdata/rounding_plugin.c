/* A sampler that rounds its probabilities to a half type before drawing (issue 10, point 4):
 * it computes the softmax in double (exact to ~1e-16), rounds each probability to fp16 or bf16
 * (round to nearest even; fp16 with its subnormals, multiples of 2^-24 below 2^-14), and draws
 * in proportion to the rounded values, renormalizing as a real half-precision softmax followed
 * by a draw would. It declares the accuracy class it is told to, so the statistics can be
 * checked against the declared tolerance (TOL-7):
 *   round=none|fp16|bf16 declare=fp32|bf16|fp16
 * read from the environment variable SAMPCERT_ROUNDING, because get_info() (where the class is
 * declared) runs before create() and takes no config; create() also takes the same string as
 * its --sampler-config and refuses one that differs, so the report records what was run.
 * tests/rounding_class_test.py runs the standard profile on it.
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

enum half { kNone, kFp16, kBf16 };

struct settings {
  enum half round;
  int32_t declare; /* SAMPCERT_ACCURACY_* */
};

/* Parses "round=X declare=Y" (either order, both required); 0 on success. */
static int parse(const char* text, struct settings* out) {
  char round[16] = {0}, declare[16] = {0};
  if (text == NULL) return -1;
  const char* r = strstr(text, "round=");
  const char* d = strstr(text, "declare=");
  if (r == NULL || d == NULL) return -1;
  if (sscanf(r, "round=%15[a-z0-9]", round) != 1) return -1;
  if (sscanf(d, "declare=%15[a-z0-9]", declare) != 1) return -1;
  if (strcmp(round, "none") == 0) {
    out->round = kNone;
  } else if (strcmp(round, "fp16") == 0) {
    out->round = kFp16;
  } else if (strcmp(round, "bf16") == 0) {
    out->round = kBf16;
  } else {
    return -1;
  }
  if (strcmp(declare, "fp32") == 0) {
    out->declare = SAMPCERT_ACCURACY_F32;
  } else if (strcmp(declare, "bf16") == 0) {
    out->declare = SAMPCERT_ACCURACY_BF16;
  } else if (strcmp(declare, "fp16") == 0) {
    out->declare = SAMPCERT_ACCURACY_F16;
  } else {
    return -1;
  }
  return 0;
}

static const char* settings_text(void) {
  const char* text = getenv("SAMPCERT_ROUNDING");
  return text != NULL ? text : "round=none declare=fp32";
}

static int32_t get_info(sampcert_sampler_info* info, sampcert_error* error) {
  if (info == NULL || info->struct_size < sizeof(sampcert_sampler_info)) {
    return fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "info struct too small");
  }
  struct settings s;
  if (parse(settings_text(), &s) != 0) {
    return fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1,
                "SAMPCERT_ROUNDING must be \"round=none|fp16|bf16 declare=fp32|bf16|fp16\"");
  }
  size_t size = info->struct_size;
  memset(info, 0, size);
  info->struct_size = size;
  info->name = "rounding_c";
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
  info->accuracy = s.declare;
  info->thread_safe = 1;
  return SAMPCERT_STATUS_OK;
}

struct sampcert_sampler {
  double* weights; /* scratch, grown as needed */
  uint64_t capacity;
  enum half round;
};

static int32_t create(const char* config, sampcert_sampler** out, sampcert_error* error) {
  struct settings s, c;
  if (parse(settings_text(), &s) != 0) {
    return fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "bad SAMPCERT_ROUNDING");
  }
  if (config != NULL && (parse(config, &c) != 0 || c.round != s.round || c.declare != s.declare)) {
    return fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1,
                "the config must repeat SAMPCERT_ROUNDING (get_info cannot see the config)");
  }
  *out = calloc(1, sizeof(sampcert_sampler));
  if (*out == NULL) return fail(error, SAMPCERT_STATUS_OUT_OF_MEMORY, -1, "out of memory");
  (*out)->round = s.round;
  return SAMPCERT_STATUS_OK;
}

/* Round to nearest even with `bits` significant bits and quantum at least 2^min_exp: fp16 is
 * (11, -24) (subnormals below 2^-14 are multiples of 2^-24), bf16 (8, -133). For p in [0, 1]. */
static double round_half(double p, int bits, int min_exp) {
  if (!(p > 0)) return 0;
  int e = 0;
  frexp(p, &e); /* p = m 2^e, m in [0.5, 1) */
  int q = e - bits;
  if (q < min_exp) q = min_exp;
  return ldexp(nearbyint(ldexp(p, -q)), q); /* default rounding mode: ties to even */
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
  if (s->round == kNone) return sum;
  /* The probabilities in double, rounded to the half type; the draw then renormalizes over
   * their sum, as drawing from a half softmax's output does. */
  double rounded = 0;
  for (uint64_t i = 0; i < b->vocab; ++i) {
    const double p = s->weights[i] / sum;
    s->weights[i] = s->round == kFp16 ? round_half(p, 11, -24) : round_half(p, 8, -133);
    rounded += s->weights[i];
  }
  return rounded;
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
};

SAMPCERT_EXPORT int32_t sampcert_get_sampler_api(uint32_t host_major, uint32_t host_minor,
                                                 const sampcert_sampler_api** out) {
  (void)host_minor; /* any MINOR of our MAJOR works: fields are only ever appended */
  *out = NULL;
  if (host_major != SAMPCERT_ABI_VERSION_MAJOR) return SAMPCERT_STATUS_VERSION_MISMATCH;
  *out = &kApi;
  return SAMPCERT_STATUS_OK;
}

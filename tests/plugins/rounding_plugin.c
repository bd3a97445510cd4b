/* A sampler that rounds its probabilities to a half type before drawing: it computes the softmax
 * in double (exact to ~1e-16), rounds each probability to fp16 or bf16 (round to nearest even;
 * fp16 with its subnormals, multiples of 2^-24 below 2^-14), and draws in proportion to the
 * rounded values, renormalizing as a real half-precision softmax followed by a draw would. It
 * declares the accuracy class it is told to, so the statistics can be checked against the
 * declared tolerance (TOL-7):
 *   round=none|fp16|bf16 declare=fp32|bf16|fp16
 * read from the environment variable SAMPCERT_ROUNDING, because get_info() (where the class is
 * declared) runs before create() and takes no config; create() also takes the same string as
 * its --sampler-config and refuses one that differs, so the report records what was run.
 * tests/rounding_class_test.py runs the standard profile on it.
 */
enum half { kNone, kFp16, kBf16 };

#define PLUGIN_NAME "rounding_c"
#define PLUGIN_STATE enum half
#define PLUGIN_INFO declare_accuracy
#define PLUGIN_CREATE check_config
#include "plugin_skeleton.h"

struct settings {
  enum half round;
  int32_t declare; /* SAMPCERT_ACCURACY_* */
};

/* The index of `word` in names[0..n), or -1. */
static int index_of(const char* word, const char* const* names, int n) {
  for (int i = 0; i < n; ++i) {
    if (strcmp(word, names[i]) == 0) return i;
  }
  return -1;
}

/* Parses "round=X declare=Y" (either order, both required); 0 on success. */
static int parse(const char* text, struct settings* out) {
  static const char* const kRounds[] = {"none", "fp16", "bf16"}; /* enum half */
  static const char* const kDeclares[] = {"fp32", "bf16", "fp16"};
  static const int32_t kAccuracies[] = {SAMPCERT_ACCURACY_F32, SAMPCERT_ACCURACY_BF16,
                                        SAMPCERT_ACCURACY_F16};
  char round[16] = {0}, declare[16] = {0};
  if (text == NULL) return -1;
  const char* r = strstr(text, "round=");
  const char* d = strstr(text, "declare=");
  if (r == NULL || d == NULL) return -1;
  if (sscanf(r, "round=%15[a-z0-9]", round) != 1) return -1;
  if (sscanf(d, "declare=%15[a-z0-9]", declare) != 1) return -1;
  const int round_index = index_of(round, kRounds, 3);
  const int declare_index = index_of(declare, kDeclares, 3);
  if (round_index < 0 || declare_index < 0) return -1;
  out->round = (enum half)round_index;
  out->declare = kAccuracies[declare_index];
  return 0;
}

static const char* settings_text(void) {
  const char* text = getenv("SAMPCERT_ROUNDING");
  return text != NULL ? text : "round=none declare=fp32";
}

static int32_t declare_accuracy(sampcert_sampler_info* info, sampcert_error* error) {
  struct settings s;
  if (parse(settings_text(), &s) != 0) {
    return fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1,
                "SAMPCERT_ROUNDING must be \"round=none|fp16|bf16 declare=fp32|bf16|fp16\"");
  }
  info->accuracy = s.declare;
  return SAMPCERT_STATUS_OK;
}

static int32_t check_config(const char* config, sampcert_sampler* sampler, sampcert_error* error) {
  struct settings s, c;
  if (parse(settings_text(), &s) != 0) {
    return fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1, "bad SAMPCERT_ROUNDING");
  }
  if (config != NULL && (parse(config, &c) != 0 || c.round != s.round || c.declare != s.declare)) {
    return fail(error, SAMPCERT_STATUS_INVALID_ARGUMENT, -1,
                "the config must repeat SAMPCERT_ROUNDING (get_info cannot see the config)");
  }
  sampler->state = s.round;
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

/* The probabilities in double, rounded to the half type; the draw then renormalizes over their
 * sum, as drawing from a half softmax's output does. Returns that sum. */
static double round_probabilities(const sampcert_sampler* s, double* w, uint64_t v, double sum) {
  const enum half round = s->state;
  if (round == kNone) return sum;
  double rounded = 0;
  for (uint64_t i = 0; i < v; ++i) {
    const double p = w[i] / sum;
    w[i] = round == kFp16 ? round_half(p, 11, -24) : round_half(p, 8, -133);
    rounded += w[i];
  }
  return rounded;
}

static int32_t sample_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error) {
  return correct_sample_row(s, row, error, round_probabilities);
}

/* Planted defects for the statistics: the correct sampler with one generic defect, chosen by the
 * environment variable SAMPCERT_DEFECT when the sampler is created (the runner passes no config
 * string; forked workers inherit the environment). Every defect applies to every row it can
 * apply to; none is tuned to a planned row:
 *   none                 the correct sampler (the control: it must pass)
 *   temperature_1pct     divides by 1.01 T
 *   drop_below_1e-7      never draws a token of probability below 1e-7
 *   drop_below_2^-24     never draws a token below 2^-24 of the most probable one
 *   even_bands           evens out the probabilities inside each power-of-two band
 *   top_to_second        moves 0.02 of the mass from the most probable token to the second
 *   bias_v_not_64        on rows whose V is not a multiple of 64, weighs even token ids 1.1x
 *   bf16_probs           rounds its probabilities to bf16 before drawing (declaring fp32)
 *   highest_inf          on a row with kept +inf logits, always draws the highest-index one
 *                        (llama.cpp's dist on such rows: its inf - inf = NaN fallback)
 * tests/defect_caught_test.py runs the standard profile on each and names the test that must
 * catch it.
 */
enum defect {
  kNone,
  kTemperature1Pct,
  kDropBelow1e7,
  kDropBelow2m24,
  kEvenBands,
  kTopToSecond,
  kBiasVNot64,
  kBf16Probs,
  kHighestInf
};

#define PLUGIN_NAME "defective_c"
#define PLUGIN_STATE enum defect
#define PLUGIN_CREATE choose_defect
#define PLUGIN_WEIGHT weight_at_temperature
#include "plugin_skeleton.h"

static int32_t choose_defect(const char* config, sampcert_sampler* s, sampcert_error* error) {
  static const char* const kNames[] = {
      "none",          "temperature_1pct", "drop_below_1e-7", "drop_below_2^-24", "even_bands",
      "top_to_second", "bias_v_not_64",    "bf16_probs",      "highest_inf"};
  (void)config;
  const int found = chosen_defect(kNames, (int)(sizeof kNames / sizeof kNames[0]), error);
  if (found < 0) return SAMPCERT_STATUS_INVALID_ARGUMENT;
  s->state = (enum defect)found;
  return SAMPCERT_STATUS_OK;
}

static double weight_at_temperature(const sampcert_sampler* s, float x, float max, float t) {
  const double tt = s->state == kTemperature1Pct ? 1.01 * (double)t : (double)t;
  return exp(((double)x - (double)max) / tt);
}

/* bf16 round-to-nearest-even of a positive finite float. */
static double round_bf16(double p) {
  float f = (float)p;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* The planted defect, applied to the weights w[0..v) of sum `sum`; returns the new sum. */
static double plant(const sampcert_sampler* s, double* w, uint64_t v, double sum) {
  const enum defect defect = s->state;
  switch (defect) {
    case kDropBelow1e7:
    case kDropBelow2m24: {
      double max = 0;
      for (uint64_t i = 0; i < v; ++i) max = w[i] > max ? w[i] : max;
      const double below = defect == kDropBelow1e7 ? 1e-7 * sum : 0x1p-24 * max;
      for (uint64_t i = 0; i < v; ++i) {
        if (w[i] < below) w[i] = 0;
      }
      break;
    }
    case kEvenBands: {
      /* band = floor(-log2 p), from the exponent; the band's mass spread evenly over it */
      double mass[2200] = {0};
      double count[2200] = {0};
      for (uint64_t i = 0; i < v; ++i) {
        if (w[i] <= 0) continue;
        int e = 0;
        frexp(w[i] / sum, &e);
        mass[1100 - e] += w[i];
        count[1100 - e] += 1;
      }
      for (uint64_t i = 0; i < v; ++i) {
        if (w[i] <= 0) continue;
        int e = 0;
        frexp(w[i] / sum, &e);
        w[i] = mass[1100 - e] / count[1100 - e];
      }
      break;
    }
    case kTopToSecond: {
      uint64_t top = 0, second = v;
      for (uint64_t i = 1; i < v; ++i) {
        if (w[i] > w[top]) top = i;
      }
      for (uint64_t i = 0; i < v; ++i) {
        if (i != top && w[i] > 0 && (second == v || w[i] > w[second])) second = i;
      }
      if (second < v && w[top] >= 0.02 * sum) {
        w[top] -= 0.02 * sum;
        w[second] += 0.02 * sum;
      }
      break;
    }
    case kBiasVNot64:
      if (v % 64 != 0) {
        for (uint64_t i = 0; i < v; i += 2) w[i] *= 1.1;
      }
      break;
    case kBf16Probs:
      for (uint64_t i = 0; i < v; ++i) {
        if (w[i] > 0) w[i] = round_bf16(w[i] / sum);
      }
      break;
    default: return sum;
  }
  double total = 0;
  for (uint64_t i = 0; i < v; ++i) total += w[i];
  return total;
}

/* highest_inf: the kept +inf logits (those row_weights gave a weight) tie; all of the mass goes
 * to the last of them. */
static int32_t highest_inf_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error) {
  double sum = 0;
  const int32_t status = row_weights(s, row, error, &sum);
  if (status != SAMPCERT_STATUS_OK) return status;
  uint64_t last = row->vocab;
  for (uint64_t i = 0; i < row->vocab; ++i) {
    if (isinf(row->logits[i]) && row->logits[i] > 0 && s->weights[i] > 0) last = i;
  }
  if (last < row->vocab) {
    for (uint64_t i = 0; i < row->vocab; ++i) s->weights[i] = i == last ? 1.0 : 0.0;
    sum = 1.0;
  }
  draw_by_prefix_sums(s, row, sum);
  return SAMPCERT_STATUS_OK;
}

static int32_t sample_row(sampcert_sampler* s, const plugin_row* row, sampcert_error* error) {
  if (s->state == kHighestInf) return highest_inf_row(s, row, error);
  return correct_sample_row(s, row, error, plant);
}

// The planned rows of DIST-1 and DIST-2 (SPEC.md section 12): LLM-like, flat, near-tie,
// overflow-shaped, truncated, boundary, greedy, +inf and masked rows, each fixed bit for bit
// (plan_test pins them).
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "properties/families.h"
#include "properties/plan.h"
#include "properties/portable_random.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

// A boundary (SPEC section 7): the (k+1)-th logit one step of the dtype below the k-th, inside
// the rounding band (BAND-1), so the (k+1)-th token is may-keep and DIST-2 tests the null
// conditioned on what the sampler kept. f32: k = 10 at T = 0.8. A half-precision step is far
// wider than fp32's band except next to the maximum at a huge T (log-weights near 0, step / T =
// 6e-8 for bf16 against a band of 3.6e-7): k = 1, the top two one step apart.
RowCase TopKNearTie(DType dtype) {
  RowCase r = MakeRow(dtype, LlmLike(200, 8), 0.8f, 115);
  const bool half = dtype != DType::kF32;
  r.top_k = half ? 1 : 10;
  if (half) r.temperature = 0x1p20f;
  std::vector<std::size_t> order(r.vocab());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return r.Logit(a) > r.Logit(b) || (r.Logit(a) == r.Logit(b) && a < b);
  });
  const std::size_t kth = order[static_cast<std::size_t>(r.top_k - 1)];
  const std::size_t next = order[static_cast<std::size_t>(r.top_k)];
  // The next value below the k-th: one step of the bit pattern toward -inf.
  const bool positive = r.Logit(kth) > 0;
  if (dtype == DType::kF32) {
    r.bits32[next] = positive ? r.bits32[kth] - 1 : r.bits32[kth] + 1;
  } else {
    r.bits16[next] = static_cast<uint16_t>(positive ? r.bits16[kth] - 1 : r.bits16[kth] + 1);
  }
  return r;
}

// A boundary: top_p within fp32's epsilon of the cumulative sum of the two most probable tokens
// (the sum in double from the dtype's logits, portable exp; the reference's own sum differs by
// ~1e-16, far inside the band), so the third token is may-keep.
RowCase TopPOnCumsum(DType dtype) {
  RowCase r = MakeRow(dtype, {0, 0, 0, 0, 0, 0, 0, 0}, 1.0f, 116);
  const double w[] = {16, 8, 4, 2, 1.5, 1.25, 1.1, 1.05};
  for (std::size_t i = 0; i < 8; ++i) r.SetLogit(i, static_cast<float>(PortableLog(w[i])));
  double z = 0, top2 = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    const double e = PortableExp(static_cast<double>(r.Logit(i)));
    z += e;
    if (i < 2) top2 += e;
  }
  r.top_p = static_cast<float>(top2 / z);
  return r;
}

RowCase Masked(DType dtype) {
  RowCase r = MakeRow(dtype, LlmLike(300, 6), 0.9f, 111);
  r.mask.assign(300, 1);
  std::mt19937_64 rng(7);
  // IN-3: nonzero = allowed, so the allowed tokens carry every byte 1..255, not only 1.
  for (std::size_t i = 0; i < 300; ++i) {
    r.mask[i] = (rng() % 10) >= 3 ? static_cast<uint8_t>(1 + (i * 37) % 255) : 0;
  }
  for (std::size_t i = 0; i < 300; ++i) {
    if (r.Logit(i) >= 6.0f) r.mask[i] = 0;  // the spikes are masked: the floor bug shows
  }
  return r;
}

RowCase Truncated(DType dtype, uint64_t seed, uint64_t row_id, int64_t top_k, float top_p,
                  float min_p) {
  RowCase r = MakeRow(dtype, LlmLike(200, seed), 0.8f, row_id);
  r.top_k = top_k;
  r.top_p = top_p;
  r.min_p = min_p;
  return r;
}

// A +0 / -0 tie exactly at the k-th value (SEM-6: +0 and -0 tie): logits 2, 1, then +0, -0,
// -0, +0, then -1, -2, with top_k = 3 at T = 1. Under keep-all ties the four zeros are kept, a
// sampler ranking -0 below +0 drops the two -0 tokens, 14% of the mass.
RowCase SignedZeroTie(DType dtype) {
  RowCase r = MakeRow(dtype, {2.0f, 1.0f, 0.0f, -0.0f, -0.0f, 0.0f, -1.0f, -2.0f}, 1.0f, 130);
  r.top_k = 3;
  return r;
}

// top_k = 2000 on V = 4096 with real mass past rank 1024: logits -0.002 j in a
// scrambled order, T = 1 (ranks 1024..1999 hold 11% of the kept mass), so a top-k capped at
// 1024 is far from the reference.
RowCase TopKPast1024(DType dtype) {
  std::vector<float> x(4096);
  for (std::size_t j = 0; j < x.size(); ++j) x[(j * 1237) % 4096] = -0.002f * static_cast<float>(j);
  RowCase r = MakeRow(dtype, x, 1.0f, 131);
  r.top_k = 2000;
  return r;
}

// min_p = 5e-6, inside (0, 1e-5] where engines skip min-p: the maximum at token 2048, the odd
// tokens at -10.8125 (2.0e-5 of it: kept), the other even ones at -12.5625 (3.5e-6: dropped,
// 0.7% of the mass). Both levels are exact in every dtype; a sampler that skips the step draws
// a must-drop token about once in 150 draws.
RowCase MinPTiny(DType dtype) {
  std::vector<float> x(4096);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 2 == 1 ? -10.8125f : -12.5625f;
  x[2048] = 0.0f;
  RowCase r = MakeRow(dtype, x, 1.0f, 132);
  r.min_p = 5e-6f;
  return r;
}

// top_p = 0.8 (0.80078125 in bf16) with the mass before the fourth token 0.8004: the reference
// drops it (0.8004 >= 0.8, 4e-4 from the cut, far outside the band), a sampler that rounds top_p
// to bf16 keeps it (12% of the kept mass). f32 logits: a half-precision logit's rounding moves
// the mass by more than the window.
RowCase TopPRounding(DType dtype) {
  RowCase r = MakeRow(dtype, {0.0f, -0.1f, -0.2f, -1.0f, 0, 0, 0, 0}, 1.0f, 133);
  double head = 0;
  for (std::size_t i = 0; i < 3; ++i) head += PortableExp(static_cast<double>(r.Logit(i)));
  const double z = head / 0.8004;
  const double tail = (z - head - PortableExp(static_cast<double>(r.Logit(3)))) / 4;
  for (std::size_t i = 4; i < 8; ++i) r.SetLogit(i, static_cast<float>(PortableLog(tail)));
  r.top_p = 0.8f;
  return r;
}

// min_p = 0.7 (0.69921875 in bf16) with the second token at e^-0.357421875 = 0.69949 of the
// maximum (the logit exact in every dtype): the reference drops it, a sampler that rounds min_p
// to bf16 keeps it (41% of the kept mass).
RowCase MinPRounding(DType dtype) {
  RowCase r =
      MakeRow(dtype, {0.0f, -0.357421875f, -2.0f, -2.5f, -3.0f, -3.5f, -4.0f, -4.5f}, 1.0f, 134);
  r.min_p = 0.7f;
  return r;
}

}  // namespace

std::vector<std::pair<std::string, RowCase>> DistributionRows(DType dtype, uint32_t caps) {
  std::vector<std::pair<std::string, RowCase>> rows;
  rows.emplace_back("llm_like_V1000", MakeRow(dtype, LlmLike(1000, 1), 0.7f, 101));
  {
    // A flat, irregular row: 64 values in [-1, 1) in a fixed scrambled order.
    std::vector<float> flat(64);
    for (std::size_t i = 0; i < flat.size(); ++i) {
      flat[i] = static_cast<float>((i * 37) % 64) / 32.0f - 1.0f;
    }
    rows.emplace_back("flat_V64", MakeRow(dtype, flat, 1.0f, 102));
  }
  {
    // Near-ties closer than T: consecutive representable values above 4 at T = 2 ulps.
    const float ulp = dtype == DType::kF32 ? 0x1p-21f : dtype == DType::kF16 ? 0x1p-8f : 0x1p-5f;
    std::vector<float> x(16);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 4.0f + ulp * static_cast<float>(i % 5);
    rows.emplace_back("near_ties_V16", MakeRow(dtype, x, 2 * ulp, 103));
  }
  rows.emplace_back("wide_V32768", MakeRow(dtype, LlmLike(32768, 2), 1.0f, 104));
  rows.emplace_back("overflow_shape",
                    MakeRow(dtype, {30000, -5, 20, 100, 29990, 29995}, 0.4f, 105));
  if (caps & SAMPCERT_CAP_TOP_K) {
    rows.emplace_back("top_k_V200", Truncated(dtype, 3, 106, 20, 1.0f, 0.0f));
  }
  if (caps & SAMPCERT_CAP_TOP_P) {
    rows.emplace_back("top_p_V200", Truncated(dtype, 4, 107, 0, 0.8f, 0.0f));
  }
  if ((caps & SAMPCERT_CAP_TOP_K) && (caps & SAMPCERT_CAP_TOP_P)) {
    // Two truncation steps on one row, each cutting (issue 19): logits -0.05 j in a scrambled
    // order, T = 1. top-k keeps the 16 most probable, 0.574 of the mass; top-p 0.5 measured on
    // what top-k kept keeps 7 (cumulative 0.471, then 0.536), measured on the mass before top-k
    // (no renormalization between the steps) it keeps 14: no cut is near a rounding band.
    std::vector<float> x(64);
    for (std::size_t j = 0; j < x.size(); ++j) x[(j * 37) % 64] = -0.05f * static_cast<float>(j);
    RowCase r = MakeRow(dtype, x, 1.0f, 112);
    r.top_k = 16;
    r.top_p = 0.5f;
    rows.emplace_back("top_k_top_p_V64", std::move(r));
  }
  if (caps & SAMPCERT_CAP_TOP_K) rows.emplace_back("top_k_near_tie_V200", TopKNearTie(dtype));
  if (caps & SAMPCERT_CAP_TOP_P) rows.emplace_back("top_p_on_cumsum_V8", TopPOnCumsum(dtype));
  if (caps & SAMPCERT_CAP_MIN_P) {
    rows.emplace_back("min_p_V200", Truncated(dtype, 5, 108, 0, 1.0f, 0.05f));
  }
  if (caps & SAMPCERT_CAP_TEMPERATURE_ZERO) {
    rows.emplace_back("greedy_ties", MakeRow(dtype, {1, 5, 5, 2, 5, 0}, 0.0f, 109));
  }
  const float inf = std::numeric_limits<float>::infinity();
  rows.emplace_back("pos_inf_ties", MakeRow(dtype, {1, inf, 3, inf, inf}, 1.0f, 110));
  if (caps & SAMPCERT_CAP_MASK) rows.emplace_back("masked_V300", Masked(dtype));
  // Truncation at its extremes and at a parameter's rounding (issue 33's plan gaps).
  if (caps & SAMPCERT_CAP_TOP_K) {
    rows.emplace_back("signed_zero_tie_V8", SignedZeroTie(dtype));
    rows.emplace_back("top_k_2000_V4096", TopKPast1024(dtype));
  }
  if (caps & SAMPCERT_CAP_MIN_P) {
    rows.emplace_back("min_p_tiny_V4096", MinPTiny(dtype));
    rows.emplace_back("min_p_rounding_V8", MinPRounding(dtype));
  }
  if ((caps & SAMPCERT_CAP_TOP_P) && dtype == DType::kF32) {
    rows.emplace_back("top_p_rounding_V8", TopPRounding(dtype));
  }
  return rows;
}

// A row of the limits is reported under the limit's property: T = 0 tests LIM-1's tie-break
// (SEM-3, uniform over the arg-max set under POL-1 `uniform`), a row with +inf logits LIM-2's
// "uniformly" (SEM-4: the +inf tokens tie, every finite token gets 0). A sampler that favours
// one tied token fails the property that names its defect, not a generic DIST-1.
std::string_view DistributionProperty(const RowCase& row) {
  if (row.temperature == 0.0f) return "LIM-1";
  for (std::size_t i = 0; i < row.vocab(); ++i) {
    if (std::isinf(row.Logit(i)) && row.Logit(i) > 0) return "LIM-2";
  }
  const bool truncated = row.top_k != 0 || row.top_p != 1.0f || row.min_p != 0.0f;
  return truncated ? "DIST-2" : "DIST-1";
}

}  // namespace sampcert::properties

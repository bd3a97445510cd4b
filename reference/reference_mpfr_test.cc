// Proof that the reference is right: an independent implementation in MPFR at 256 bits
// (decoding, support, limits, truncation, softmax), compared token by token on extreme and
// random rows. The worst relative error on probabilities >= 1e-300 must be <= 2^-48 (24 bits
// beyond fp32, the rule OpenCL-CTS sets for its references); the measured value is printed and
// recorded as a test property.
#include <gtest/gtest.h>
#include <mpreal.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "sampcert/reference_distribution.h"

namespace sampcert {
namespace {

using mpfr::mpreal;

constexpr int kBits = 256;
constexpr double kMaxRelError = 0x1p-48;
constexpr double kAccuracyFloor = 1e-300;  // SPEC REF-2: relative accuracy asked above this

// ---------------------------------------------------------------------------------------------
// Independent decoding: from the IEEE fields, not through float or Eigen.

struct Decoded {
  bool nan = false;
  int inf = 0;  // +1, -1 or 0
  mpreal value;
};

Decoded FromFields(bool negative, uint32_t exponent, uint32_t mantissa, int mant_bits, int bias,
                   uint32_t max_exponent) {
  Decoded d;
  d.value.set_prec(kBits);
  if (exponent == max_exponent) {
    if (mantissa != 0) {
      d.nan = true;
    } else {
      d.inf = negative ? -1 : 1;
    }
    return d;
  }
  mpreal m(static_cast<unsigned long>(mantissa), kBits);
  int e;
  if (exponent == 0) {
    e = 1 - bias - mant_bits;  // subnormal: 0.mantissa * 2^(1 - bias)
  } else {
    m += mpreal(1UL << mant_bits, kBits);
    e = static_cast<int>(exponent) - bias - mant_bits;
  }
  d.value = mpfr::ldexp(m, e);
  if (negative) d.value = -d.value;
  return d;
}

Decoded DecodeIndependently(DType dtype, const void* logits, std::size_t i) {
  if (dtype == DType::kF32) {
    uint32_t b;
    std::memcpy(&b, static_cast<const char*>(logits) + 4 * i, 4);
    return FromFields(b >> 31, (b >> 23) & 0xff, b & 0x7fffff, 23, 127, 0xff);
  }
  uint16_t b;
  std::memcpy(&b, static_cast<const char*>(logits) + 2 * i, 2);
  if (dtype == DType::kF16) return FromFields(b >> 15, (b >> 10) & 0x1f, b & 0x3ff, 10, 15, 0x1f);
  return FromFields(b >> 15, (b >> 7) & 0xff, b & 0x7f, 7, 127, 0xff);
}

// ---------------------------------------------------------------------------------------------
// The independent distribution: temperature first, keep-all ties, NaN policy error or masked.

struct MpResult {
  std::vector<mpreal> probs;
  std::vector<uint8_t> kept;
};

MpResult MpfrDistribution(const RowView& row, NanPolicy nan_policy) {
  const std::size_t v = row.vocab;
  std::vector<Decoded> x(v);
  std::vector<uint8_t> in(v, 0);
  for (std::size_t i = 0; i < v; ++i) {
    x[i] = DecodeIndependently(row.dtype, row.logits, i);
    const bool allowed = row.mask == nullptr || row.mask[i] != 0;
    in[i] = allowed && !x[i].nan && x[i].inf != -1;
    (void)nan_policy;  // rows given here never hold an allowed NaN under the strict policy
  }
  bool any_pos_inf = false;
  for (std::size_t i = 0; i < v; ++i) any_pos_inf |= in[i] && x[i].inf == 1;

  // Weights relative to the maximum.
  std::vector<mpreal> w(v, mpreal(0, kBits));
  std::vector<mpreal> key(v, mpreal(0, kBits));  // ordering key; +inf ranks as a huge value
  mpreal big = mpfr::ldexp(mpreal(1, kBits), 100000);
  mpreal max = -big;
  for (std::size_t i = 0; i < v; ++i) {
    if (!in[i]) continue;
    key[i] = x[i].inf == 1 ? big : x[i].value;
    if (key[i] > max) max = key[i];
  }
  const mpreal t(row.temperature, kBits);
  for (std::size_t i = 0; i < v; ++i) {
    if (!in[i]) continue;
    if (row.temperature == 0.0f || any_pos_inf) {
      w[i] = key[i] == max ? mpreal(1, kBits) : mpreal(0, kBits);
    } else {
      w[i] = mpfr::exp((x[i].value - max) / t);
    }
  }
  std::vector<uint8_t> kept(v, 0);
  for (std::size_t i = 0; i < v; ++i) kept[i] = in[i] && w[i] > 0;

  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < v; ++i) {
    if (kept[i]) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return key[a] != key[b] ? key[a] > key[b] : a < b;
  });

  if (row.top_k > 0 && static_cast<std::size_t>(row.top_k) < order.size()) {
    const mpreal kth = key[order[static_cast<std::size_t>(row.top_k) - 1]];
    for (std::size_t i : order) kept[i] = key[i] >= kth;
  }
  if (row.top_p < 1.0f) {
    mpreal total(0, kBits);
    for (std::size_t i : order) {
      if (kept[i]) total += w[i];
    }
    const mpreal p(row.top_p, kBits);
    mpreal before(0, kBits);
    std::size_t r = 0;
    while (r < order.size()) {
      std::size_t e = r;
      mpreal group(0, kBits);
      while (e < order.size() && key[order[e]] == key[order[r]]) {
        if (kept[order[e]]) group += w[order[e]];
        ++e;
      }
      const bool keep_group = before / total < p;
      for (std::size_t q = r; q < e; ++q) kept[order[q]] = kept[order[q]] && keep_group;
      before += group;
      r = e;
    }
  }
  if (row.min_p > 0.0f) {
    const mpreal mp(row.min_p, kBits);
    for (std::size_t i : order) kept[i] = kept[i] && w[i] >= mp;  // w is relative to the max
  }
  MpResult out;
  mpreal z(0, kBits);
  for (std::size_t i = 0; i < v; ++i) {
    if (kept[i]) z += w[i];
  }
  out.probs.assign(v, mpreal(0, kBits));
  for (std::size_t i = 0; i < v; ++i) {
    if (kept[i]) out.probs[i] = w[i] / z;
  }
  out.kept = kept;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Rows.

struct TestRow {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<uint32_t> bits32;
  std::vector<uint16_t> bits16;
  std::vector<uint8_t> mask;
  float temperature = 1.0f;
  int64_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;

  RowView view() const {
    RowView r;
    r.dtype = dtype;
    r.logits = dtype == DType::kF32 ? static_cast<const void*>(bits32.data())
                                    : static_cast<const void*>(bits16.data());
    r.vocab = dtype == DType::kF32 ? bits32.size() : bits16.size();
    r.mask = mask.empty() ? nullptr : mask.data();
    r.temperature = temperature;
    r.top_k = top_k;
    r.top_p = top_p;
    r.min_p = min_p;
    return r;
  }
};

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

TestRow F32(std::string name, const std::vector<float>& v, float t) {
  TestRow r;
  r.name = std::move(name);
  for (float f : v) r.bits32.push_back(Bits(f));
  r.temperature = t;
  return r;
}

TestRow Half(std::string name, DType dtype, const std::vector<uint16_t>& bits, float t) {
  TestRow r;
  r.name = std::move(name);
  r.dtype = dtype;
  r.bits16 = bits;
  r.temperature = t;
  return r;
}

std::vector<TestRow> ExtremeRows() {
  const float fmax = std::numeric_limits<float>::max();
  const float inf = std::numeric_limits<float>::infinity();
  const float den = std::numeric_limits<float>::denorm_min();
  const float one_up = std::nextafter(1.0f, 2.0f);
  std::vector<TestRow> rows;
  // fp16: max (0x7bff = 65504), -max, its neighbour, zero, smallest subnormal.
  for (float t : {1.0f, 1e-3f, 1e4f, 7.0f}) {
    rows.push_back(Half("f16_max_T" + std::to_string(t), DType::kF16,
                        {0x7bff, 0xfbff, 0x7bfe, 0x0000, 0x0001, 0x8001, 0x3c00}, t));
  }
  rows.push_back(Half("f16_brief_reproducer", DType::kF16, {0x7530, 0xc500, 0x4d00, 0x5640},
                      0.1f));  // 30000, -5, 20, 100
  rows.push_back(
      Half("f16_subnormal_logits_tiny_T", DType::kF16, {0x0001, 0x0002, 0x0003, 0x0000}, 6e-8f));
  // bf16: near its max (0x7f7f), near inf, tiny.
  for (float t : {1.0f, 1e38f, 3e-39f}) {
    rows.push_back(Half("bf16_extremes_T" + std::to_string(t), DType::kBF16,
                        {0x7f7f, 0x7f7e, 0xff7f, 0x0001, 0x3f80, 0x3f81}, t));
  }
  // fp32 near +-inf, at several temperatures, huge ones included.
  for (float t : {1.0f, 1e30f, 1e38f, fmax}) {
    rows.push_back(
        F32("f32_near_inf_T" + std::to_string(t),
            {fmax, std::nextafter(fmax, 0.0f), -fmax, 1e31f, 0.0f, fmax - 3e31f, fmax - 1e32f}, t));
  }
  // Subnormal temperatures resolving subnormal logits; near-ties closer than T.
  rows.push_back(F32("subnormal_T", {0.0f, den, 2 * den, 7 * den, -den}, den));
  rows.push_back(F32("subnormal_T_1e-45", {1e-45f, 3e-45f, 0.0f}, 1e-45f));
  rows.push_back(
      F32("near_ties_closer_than_T", {1.0f, one_up, std::nextafter(one_up, 2.0f), 1.0f}, 1e-6f));
  rows.push_back(F32("near_ties_huge_offset", {1e30f, std::nextafter(1e30f, 2e30f), 1e30f}, 1e23f));
  // Limits and special values.
  rows.push_back(F32("greedy_ties", {3, 5, 5, -inf, 5}, 0.0f));
  rows.push_back(F32("pos_inf_ties", {inf, 3, inf, fmax}, 2.0f));
  rows.push_back(F32("pos_inf_greedy", {inf, 3, inf, fmax}, 0.0f));
  rows.push_back(F32("all_equal", std::vector<float>(1000, 0.25f), 0.3f));
  TestRow single = F32("single_allowed", {9, -3, 100, inf}, 1e-30f);
  single.mask = {0, 1, 0, 0};
  rows.push_back(single);
  rows.push_back(F32("vocab_1", {-7.5f}, 3.0f));
  rows.push_back(F32("wide_range", {30000, -30000, 0, 29999.998f}, 1e-3f));
  rows.push_back(F32("huge_T_flat", {1, 2, 3, -1e5f}, 1e30f));
  // Truncation with exact semantics on generic values.
  TestRow tk = F32("top_k_ties", {2, 3, 2, 2, 1, 0.5f, 3}, 0.7f);
  tk.top_k = 3;
  rows.push_back(tk);
  TestRow tp = F32("top_p_generic", {0.1f, 2.3f, -1.7f, 0.9f, 1.4f, -0.2f}, 0.9f);
  tp.top_p = 0.83f;
  rows.push_back(tp);
  TestRow mp = F32("min_p_generic", {0.1f, 2.3f, -1.7f, 0.9f, 1.4f, -0.2f}, 1.3f);
  mp.min_p = 0.21f;
  rows.push_back(mp);
  TestRow all3 = F32("all_three", {0.1f, 2.3f, -1.7f, 0.9f, 1.4f, -0.2f, 2.2f, 1.9f}, 0.6f);
  all3.top_k = 6;
  all3.top_p = 0.9f;
  all3.min_p = 0.01f;
  rows.push_back(all3);
  return rows;
}

// Random rows with a fixed seed: dtypes, sizes biased small and to odd sizes, temperatures from
// subnormal to huge, masks, special values, and truncation parameters.
std::vector<TestRow> RandomRows(int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> coin(0, 99);
  std::vector<TestRow> rows;
  const std::vector<std::size_t> sizes = {1, 2, 3, 5, 17, 31, 100, 257, 1000, 4099};
  for (int n = 0; n < count; ++n) {
    TestRow r;
    r.name = "random_" + std::to_string(n);
    r.dtype = static_cast<DType>(coin(rng) % 3);
    const std::size_t v = sizes[static_cast<std::size_t>(coin(rng)) % sizes.size()];
    const double scale = std::pow(10.0, std::uniform_real_distribution<double>(-3, 4)(rng));
    std::normal_distribution<double> normal(0.0, scale);
    for (std::size_t i = 0; i < v; ++i) {
      const float f = static_cast<float>(normal(rng));
      const int c = coin(rng);
      const bool tie = c == 1 && i > 0;  // an exact tie with the previous token
      const bool neg_inf = c == 0;
      if (r.dtype == DType::kF32) {
        r.bits32.push_back(tie ? r.bits32.back() : neg_inf ? 0xff800000u : Bits(f));
      } else if (tie) {
        r.bits16.push_back(r.bits16.back());
      } else if (neg_inf) {
        r.bits16.push_back(r.dtype == DType::kBF16 ? 0xff80 : 0xfc00);
      } else if (r.dtype == DType::kBF16) {
        const uint32_t b = Bits(f);  // round to nearest even into the upper half
        r.bits16.push_back(static_cast<uint16_t>((b + 0x7fff + ((b >> 16) & 1)) >> 16));
      } else {
        // A random finite fp16 pattern of about the row's magnitude (subnormals included).
        const int e =
            std::clamp(static_cast<int>(std::log2(scale + 1e-9)) + 15 + coin(rng) % 5 - 2, 0, 30);
        r.bits16.push_back(
            static_cast<uint16_t>(((coin(rng) & 1) << 15) | (e << 10) | (rng() & 0x3ff)));
      }
    }
    if (coin(rng) < 30) {
      r.mask.resize(v);
      for (std::size_t i = 0; i < v; ++i) r.mask[i] = coin(rng) < 80;
      r.mask[static_cast<std::size_t>(rng() % v)] = 1;
    }
    const int tc = coin(rng);
    r.temperature =
        tc < 5    ? 0.0f
        : tc < 10 ? std::numeric_limits<float>::denorm_min() * static_cast<float>(1 + rng() % 1000)
                  : static_cast<float>(
                        std::pow(10.0, std::uniform_real_distribution<double>(-8, 30)(rng)));
    if (coin(rng) < 25) r.top_k = static_cast<int64_t>(1 + rng() % (v + 2));
    if (coin(rng) < 25) r.top_p = std::uniform_real_distribution<float>(0.01f, 0.999f)(rng);
    if (coin(rng) < 25) r.min_p = std::uniform_real_distribution<float>(0.0f, 0.5f)(rng);
    rows.push_back(std::move(r));
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// The comparison.

struct Worst {
  double rel = 0;       // over probabilities >= 1e-300
  double rel_tiny = 0;  // over probabilities in [1e-4900, 1e-300), reported only
  std::string where;
  std::size_t compared = 0;
};

void Compare(const TestRow& t, Worst* worst) {
  SCOPED_TRACE(t.name);
  const RowView row = t.view();
  Expected<ReferenceDistribution> ref = ComputeReference(row, Policies{});
  if (!ref.ok()) {
    // Only rows whose support is empty may be refused; MPFR agrees on that.
    const MpResult mp = MpfrDistribution(row, NanPolicy::kError);
    EXPECT_EQ(ref.error().code, ErrorCode::kEmptySupport) << ref.error().message;
    EXPECT_TRUE(std::none_of(mp.kept.begin(), mp.kept.end(), [](uint8_t k) { return k; }));
    return;
  }
  const MpResult mp = MpfrDistribution(row, NanPolicy::kError);
  // The kept sets agree wherever the reference is definite (must-keep / must-drop).
  bool has_may = false;
  for (std::size_t i = 0; i < row.vocab; ++i) {
    const KeepClass k = ref->keep[i];
    has_may |= k == KeepClass::kMayKeep;
    if (mp.kept[i]) {
      EXPECT_TRUE(k == KeepClass::kMustKeep || k == KeepClass::kMayKeep)
          << "token " << i << " kept by MPFR, class " << static_cast<int>(k);
    } else if (k == KeepClass::kMustKeep) {
      // MPFR drops zero-weight tokens of the limits; the reference marks those must-drop, so a
      // must-keep token here must have a weight that underflows even at 256 bits.
      EXPECT_EQ(mp.probs[i], 0) << "token " << i << " dropped by MPFR but must-keep";
    }
  }
  std::vector<long double> probs = ref->probs;
  if (has_may) {
    std::vector<uint8_t> kept = mp.kept;
    for (std::size_t i = 0; i < row.vocab; ++i) {
      if (ref->keep[i] == KeepClass::kMustKeep) kept[i] = 1;
    }
    auto renorm = ref->RenormalizedOver(kept);
    ASSERT_TRUE(renorm.ok()) << renorm.error().message;
    probs = renorm.value();
  }
  mpreal total(0, kBits);
  for (std::size_t i = 0; i < row.vocab; ++i) {
    const mpreal exact = mp.probs[i];
    const mpreal got(probs[i], kBits);  // long double -> exact in 256 bits
    total += got;
    if (exact == 0) {
      EXPECT_LE(static_cast<double>(probs[i]), kAccuracyFloor) << "token " << i;
      continue;
    }
    const double rel = static_cast<double>(mpfr::abs(got - exact) / exact);
    if (exact >= kAccuracyFloor) {
      ++worst->compared;
      if (rel > worst->rel) {
        worst->rel = rel;
        worst->where = t.name + " token " + std::to_string(i);
      }
      EXPECT_LE(rel, kMaxRelError) << "token " << i << " exact " << exact.toString("%.20Re")
                                   << " reference " << static_cast<double>(probs[i]);
    } else if (exact >= mpreal("1e-4900", kBits)) {
      worst->rel_tiny = std::max(worst->rel_tiny, rel);
    }
  }
  EXPECT_LE(static_cast<double>(mpfr::abs(total - 1)), 1e-17);
}

class ReferenceVsMpfr : public testing::Test {
 protected:
  static void SetUpTestSuite() { mpreal::set_default_prec(kBits); }
  static void TearDownTestSuite() {
    std::printf(
        "[reference accuracy] worst relative error %.3e (= 2^%.2f) over %zu "
        "probabilities >= 1e-300, at %s; below 1e-300: %.3e\n",
        worst_.rel, worst_.rel > 0 ? std::log2(worst_.rel) : -INFINITY, worst_.compared,
        worst_.where.c_str(), worst_.rel_tiny);
  }
  static Worst worst_;
};
Worst ReferenceVsMpfr::worst_;

TEST_F(ReferenceVsMpfr, ExtremeRows) {
  for (const TestRow& r : ExtremeRows()) Compare(r, &worst_);
  RecordProperty("worst_relative_error", std::to_string(worst_.rel));
  EXPECT_LE(worst_.rel, kMaxRelError);
}

TEST_F(ReferenceVsMpfr, RandomRows) {
  for (const TestRow& r : RandomRows(400, 20261129)) Compare(r, &worst_);
  RecordProperty("worst_relative_error", std::to_string(worst_.rel));
  EXPECT_LE(worst_.rel, kMaxRelError);
}

TEST_F(ReferenceVsMpfr, LargeVocabularies) {
  // V up to 2^18 with a wide spread: the long sums are where compensated summation matters.
  std::mt19937_64 rng(77);
  for (std::size_t v : {32768u, 131071u, 262144u}) {
    std::normal_distribution<float> normal(0.0f, 4.0f);
    std::vector<float> logits(v);
    for (float& f : logits) f = normal(rng);
    Compare(F32("V" + std::to_string(v), logits, 0.8f), &worst_);
  }
  // All equal at V = 2^18: every probability is exactly 2^-18.
  Compare(F32("V262144_flat", std::vector<float>(262144, -1.5f), 1.0f), &worst_);
  EXPECT_GT(worst_.compared, 400000u);
  RecordProperty("worst_relative_error", std::to_string(worst_.rel));
  EXPECT_LE(worst_.rel, kMaxRelError);
}

TEST(MpfrDecoding, AgreesWithTheReferenceDecoder) {
  // Exhaustive over fp16 and bf16, a sweep over fp32: the two decoders are independent.
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    for (DType dt : {DType::kF16, DType::kBF16}) {
      const Decoded d = DecodeIndependently(dt, &h, 0);
      const long double r = DecodeLogit(dt, &h, 0);
      if (d.nan) {
        ASSERT_TRUE(std::isnan(r)) << b;
      } else if (d.inf != 0) {
        ASSERT_EQ(r, d.inf * std::numeric_limits<long double>::infinity()) << b;
      } else {
        ASSERT_EQ(mpreal(r, kBits), d.value) << b;
      }
    }
  }
  for (uint64_t b = 0; b < (1ULL << 32); b += 65521) {
    const uint32_t w = static_cast<uint32_t>(b);
    const Decoded d = DecodeIndependently(DType::kF32, &w, 0);
    const long double r = DecodeLogit(DType::kF32, &w, 0);
    if (d.nan) {
      ASSERT_TRUE(std::isnan(r)) << w;
    } else if (d.inf == 0) {
      ASSERT_EQ(mpreal(r, kBits), d.value) << w;
    }
  }
}

}  // namespace
}  // namespace sampcert

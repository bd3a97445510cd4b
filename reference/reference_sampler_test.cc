// The canonical draw and the reference sampler: known answers, the open interval, index-order
// inverse CDF, reproducibility, stream independence, and goodness of fit.
#include "sampcert/reference_sampler.h"

#include <gtest/gtest.h>

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "sampcert/canonical_draw.h"
#include "sampcert/reference_distribution.h"

namespace sampcert {
namespace {

TEST(CanonicalDraw, PhiloxKnownAnswers) {
  // Random123's tests/kat_vectors, the three "philox4x32 10" lines.
  struct Kat {
    philox4x32_ctr_t ctr;
    philox4x32_key_t key;
    uint32_t expect[4];
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, {{0, 0}}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       {{0xffffffff, 0xffffffff}},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       {{0xa4093822, 0x299f31d0}},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    const philox4x32_ctr_t r = philox4x32_R(10, k.ctr, k.key);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(r.v[i], k.expect[i]);
  }
  // The canonical layout: key (seed lo, seed hi), counter (row lo, row hi, draw lo, draw hi).
  EXPECT_EQ(CanonicalBits(0, 0, 0), ((uint64_t{0x6627e8d5} << 32) | 0xe169c58d) >> 12);
  EXPECT_EQ(CanonicalBits(~0ULL, ~0ULL, ~0ULL), ((uint64_t{0x408f276d} << 32) | 0x41c83b0e) >> 12);
  EXPECT_EQ(CanonicalBits(0x299f31d0a4093822ULL, 0x85a308d3243f6a88ULL, 0x0370734413198a2eULL),
            ((uint64_t{0xd16cfe09} << 32) | 0x94fdcceb) >> 12);
}

TEST(CanonicalDraw, UniformIsStrictlyInsideTheUnitInterval) {
  double lo = 1, hi = 0;
  for (uint64_t i = 0; i < 200000; ++i) {
    const double u = CanonicalUniform(42, i % 7, i);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    // u * 2^53 is an odd integer: 2m + 1.
    const double scaled = u * 0x1p53;
    ASSERT_EQ(std::fmod(scaled, 2.0), 1.0);
  }
  EXPECT_LT(lo, 1e-4);
  EXPECT_GT(hi, 1 - 1e-4);
  // The extremes of the map are exact and inside (0, 1).
  EXPECT_EQ(static_cast<double>(2 * 0 + 1) * 0x1p-53, 0x1p-53);
  EXPECT_EQ(static_cast<double>(2 * ((1ULL << 52) - 1) + 1) * 0x1p-53, 1.0 - 0x1p-53);
}

TEST(ReferenceSampler, InverseCdfInIndexOrder) {
  const std::vector<long double> p = {0.0L, 0.25L, 0.0L, 0.5L, 0.25L, 0.0L};
  const ReferenceSampler s(p);
  EXPECT_EQ(s.TokenFor(0x1p-53L), 1);  // the smallest u: first positive token, never token 0
  EXPECT_EQ(s.TokenFor(0.2499L), 1);
  EXPECT_EQ(s.TokenFor(0.25L), 3);  // u < C_i is strict: C_1 = 0.25 does not take u = 0.25
  EXPECT_EQ(s.TokenFor(0.7499L), 3);
  EXPECT_EQ(s.TokenFor(0.75L), 4);
  EXPECT_EQ(s.TokenFor(1.0L - 0x1p-53L), 4);  // the largest u: last positive, never token 5
  EXPECT_EQ(s.TokenFor(1.0L), 4);             // past the end (rounding): last positive token
}

Expected<ReferenceDistribution> Dist(const std::vector<float>& logits, float t) {
  static std::vector<uint32_t> bits;
  bits.resize(logits.size());
  std::memcpy(bits.data(), logits.data(), 4 * logits.size());
  RowView row;
  row.logits = bits.data();
  row.vocab = bits.size();
  row.temperature = t;
  return ComputeReference(row, Policies{});
}

TEST(ReferenceSampler, ReproducibleAndKeyedByRowId) {
  const auto d = Dist({0, 0.5f, 1, 1.5f, 2, -1, 0.25f, 3}, 1.0f);
  ASSERT_TRUE(d.ok());
  const ReferenceSampler s(d->probs);
  std::vector<int64_t> a(500), b(500), c(500), tail(100);
  s.Draw(7, 11, 0, a);
  s.Draw(7, 11, 0, b);
  s.Draw(7, 12, 0, c);
  s.Draw(7, 11, 400, tail);
  EXPECT_EQ(a, b);  // same seed and row id, same tokens
  EXPECT_NE(a, c);  // another row id, another stream
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), a.begin() + 400));  // random access
  std::vector<int64_t> other_seed(500);
  s.Draw(8, 11, 0, other_seed);
  EXPECT_NE(a, other_seed);
}

TEST(ReferenceSampler, NeverDrawsOutsideTheKeptSet) {
  const float inf = std::numeric_limits<float>::infinity();
  const auto d = Dist({-inf, 1, -inf, 1, -inf}, 1.0f);
  ASSERT_TRUE(d.ok());
  const ReferenceSampler s(d->probs);
  std::set<int64_t> seen;
  for (uint64_t i = 0; i < 20000; ++i) seen.insert(s.Draw(1, 2, i));
  EXPECT_EQ(seen, (std::set<int64_t>{1, 3}));
}

// G-test of the reference sampler's counts against its own probabilities, at a fixed seed.
// False-alarm budget: this test's level is 1e-6 (fixed seed: it either passes forever or
// flags a real change of the draw). Cells all have expected counts >= 50.
TEST(ReferenceSampler, GoodnessOfFit) {
  const auto d = Dist({0, 0.5f, 1, 1.5f, 2, -1, 0.25f, 3, 2.5f, 1.25f}, 0.9f);
  ASSERT_TRUE(d.ok());
  const ReferenceSampler s(d->probs);
  const uint64_t n = 200000;
  std::vector<double> counts(d->vocab, 0);
  for (uint64_t i = 0; i < n; ++i) counts[static_cast<std::size_t>(s.Draw(2026, 5, i))] += 1;
  double g = 0;
  for (std::size_t i = 0; i < d->vocab; ++i) {
    const double e = static_cast<double>(d->probs[i]) * static_cast<double>(n);
    ASSERT_GE(e, 50.0);
    if (counts[i] > 0) g += 2 * counts[i] * std::log(counts[i] / e);
  }
  const double k = static_cast<double>(d->vocab);
  const double williams = 1 + (k * k - 1) / (6 * static_cast<double>(n) * (k - 1));
  const boost::math::chi_squared chi(k - 1);
  const double p_value = boost::math::cdf(boost::math::complement(chi, g / williams));
  EXPECT_GT(p_value, 1e-6) << "G = " << g;
  // And the same test must reject a sampler off by a temperature of 1%: draws from T = 0.891.
  const auto wrong = Dist({0, 0.5f, 1, 1.5f, 2, -1, 0.25f, 3, 2.5f, 1.25f}, 0.891f);
  ASSERT_TRUE(wrong.ok());
  const ReferenceSampler ws(wrong->probs);
  std::vector<double> wc(d->vocab, 0);
  for (uint64_t i = 0; i < 4 * n; ++i) wc[static_cast<std::size_t>(ws.Draw(2026, 5, i))] += 1;
  double gw = 0;
  for (std::size_t i = 0; i < d->vocab; ++i) {
    const double e = static_cast<double>(d->probs[i]) * static_cast<double>(4 * n);
    if (wc[i] > 0) gw += 2 * wc[i] * std::log(wc[i] / e);
  }
  EXPECT_LT(boost::math::cdf(boost::math::complement(chi, gw / williams)), 1e-6) << "G = " << gw;
}

// The token for the smallest u is the first kept token even with a huge leading mass of
// zeros (a sampler whose uniform can be 0 would pick token 0 here).
TEST(ReferenceSampler, BinomialCheckOfASmallCell) {
  const auto d = Dist({0, -4.6051702f, 0, 0}, 1.0f);  // token 1 has mass 0.01/3.01
  ASSERT_TRUE(d.ok());
  const ReferenceSampler s(d->probs);
  const uint64_t n = 100000;
  uint64_t hits = 0;
  for (uint64_t i = 0; i < n; ++i) hits += s.Draw(99, 0, i) == 1;
  const boost::math::binomial bin(static_cast<double>(n), static_cast<double>(d->probs[1]));
  // Two-sided exact binomial tail at level 1e-6.
  const double lo = boost::math::cdf(bin, static_cast<double>(hits));
  const double hi = boost::math::cdf(boost::math::complement(bin, static_cast<double>(hits) - 1));
  EXPECT_GT(2 * std::min(lo, hi), 1e-6) << hits;
}

}  // namespace
}  // namespace sampcert

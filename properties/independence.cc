// INDEP-1 (SPEC.md sections 10 and 12): the draws of one stream, of a later call of the same
// stream, of the adjacent row id and of the adjacent seed are independent. On a planned row of
// four equally likely tokens, four G-tests of independence on pairs of draws (each a 4 x 4
// contingency table), each at a quarter of the item's level, with the sequential looks and the
// re-run of every planned test (sequential_rule.h). A later call that repeats the stream (an
// offset that never advances between calls) fails exactly; a stream identical to the adjacent row
// id's or seed's is DET-3's or DET-2's failure, and its sub-test is left out.
#include "properties/statistics/independence.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "properties/case_check.h"
#include "properties/coverage.h"
#include "properties/distribution.h"
#include "properties/draw_planning.h"
#include "properties/families.h"
#include "properties/plan.h"
#include "properties/sequential_rule.h"
#include "properties/statistics/chi_square.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

using results::TestResult;

namespace {

// The four sub-tests, each at a quarter of the level: which draws make a pair.
constexpr int kIndependenceSubtests = 4;
constexpr std::array<const char*, kIndependenceSubtests> kPairNames = {
    "draws 2i and 2i+1 of one stream", "draw i and draw 2N+i (a later call) of one stream",
    "draw i of row ids r and r+1", "draw i of seeds s and s+1"};
// A cell of the 4 x 4 table expects at least this many pairs at the first look (STAT-2's floor).
constexpr uint64_t kMinExpectedPerCell = 50;

// The degrees of freedom of a table over the row's tokens of positive probability.
double IndependenceDf(const ReferenceDistribution& ref) {
  double k = 0;
  for (long double p : ref.probs) k += p > 0;
  return (k - 1) * (k - 1);
}

}  // namespace

std::vector<std::pair<std::string, RowCase>> IndependenceRows(DType dtype, uint32_t) {
  // Four equally likely tokens (exact in every dtype): every cell of a pair's table expects a
  // sixteenth of the pairs. The row id is even, so row ids r and r+1 share everything but their
  // last bit (a kernel pairing rows by id / 2 is seen).
  return {{"independence_V4", MakeRow(dtype, {0, 0, 0, 0}, 1.0f, 120)}};
}

std::string_view IndependenceProperty(const RowCase&) { return "INDEP-1"; }

void PlanIndependence(const PlanContext& ctx, PlanItem* it) {
  it->subtests = kIndependenceSubtests;
  it->required_draws = ctx.profile.max_draws;
  if (!ctx.ref) return;
  const double df = IndependenceDf(*ctx.ref);
  double smallest = 1;
  for (long double p : ctx.ref->probs) {
    if (p > 0) smallest = std::min(smallest, static_cast<double>(p));
  }
  // Pairs (not draws: each pair costs 5 draws over the four streams) for the profile's TV at
  // the last look's level, and enough that every cell expects kMinExpectedPerCell pairs at the
  // first look (1/64 of them).
  const double level = kLookShare[kLooks - 1] * it->level / it->subtests;
  const uint64_t for_tv = DrawsForTv(df, level, kSlack * ctx.profile.required_tv);
  const auto for_cells = static_cast<uint64_t>(std::ceil(
      static_cast<double>(kLookDivisor[0] * kMinExpectedPerCell) / (smallest * smallest)));
  it->required_draws = std::max(for_tv, for_cells);
}

namespace {

struct IndependenceLook {
  double p_value = 1;  // Bonferroni-adjusted over the sub-tests
  uint64_t pairs = 0;
  int worst = 0;
  std::array<IndependenceResult, kIndependenceSubtests> tests;
  std::array<const char*, kIndependenceSubtests> left_out = {};  // why, where a test is left out
};
using IndependenceRun = SequentialRun<IndependenceLook>;

// The four streams of one run: `stream` (2n draws), `later` (n draws from 2 x the run's last
// look), the adjacent row id's and the adjacent seed's (n draws each); and, for a random-access
// sampler, `wrapped`: kDrawsPerCase draws from first_draw 2^32 (DRAW-1's counter past 32 bits;
// a sequential sampler would draw the whole gap, POL-7).
struct Streams {
  std::vector<int64_t> stream, later, next_row, next_seed, wrapped;
  uint64_t drawn() const {
    return stream.size() + later.size() + next_row.size() + next_seed.size() + wrapped.size();
  }
};

constexpr uint64_t kWrapDraw = uint64_t{1} << 32;

std::optional<std::string> DrawStreams(const ItemRun& ctx, uint64_t seed, uint64_t n, uint64_t last,
                                       Streams* s) {
  RowCase next = *ctx.row;
  next.row_id += 1;
  std::optional<Error> err = DrawMore(ctx.sampler, *ctx.row, seed, 2 * n, &s->stream);
  if (!err) err = DrawMore(ctx.sampler, *ctx.row, seed, n, &s->later, 2 * last);
  if (!err) err = DrawMore(ctx.sampler, next, seed, n, &s->next_row);
  if (!err) err = DrawMore(ctx.sampler, *ctx.row, seed + 1, n, &s->next_seed);
  if (!err && !ctx.sampler.info().policies.sequential_draws) {
    err = DrawMore(ctx.sampler, *ctx.row, seed, kDrawsPerCase, &s->wrapped, kWrapDraw);
  }
  if (err) return "sampler error: " + err->message;
  const std::size_t v = ctx.row->vocab();
  for (const auto* tokens : {&s->stream, &s->later, &s->next_row, &s->next_seed, &s->wrapped}) {
    for (int64_t t : *tokens) {
      if (t < 0 || static_cast<std::size_t>(t) >= v) {
        return fmt::format("RANGE-1: drew token id {} outside [0, {})", t, v);
      }
    }
  }
  return std::nullopt;
}

// Whether two streams agree on their first kDrawsPerCase draws while the first varies: a
// repeated stream (four equally likely tokens: chance 4^-64 for independent streams).
bool Repeats(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (a.size() < kDrawsPerCase || b.size() < kDrawsPerCase) return false;
  const auto end = a.begin() + kDrawsPerCase;
  if (std::all_of(a.begin(), end, [&](int64_t t) { return t == a.front(); })) return false;
  return std::equal(a.begin(), end, b.begin());
}

// Whether b's first kDrawsPerCase draws are a's shifted by one draw (b[i] = a[i + 1]).
bool RepeatsLagged(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  return a.size() > kDrawsPerCase && Repeats(std::vector<int64_t>(a.begin() + 1, a.end()), b);
}

// DRAW-1's exact promises on the streams a look drew: distinct (seed, row id) pairs, neighbour
// row ids not overlapping at a lag of one draw, the draw index past 32 bits. A message, or none.
std::optional<std::string> StreamKeyFailure(const Streams& s) {
  if (Repeats(s.next_row, s.next_seed)) {
    return fmt::format(
        "DRAW-1: the streams of (seed s + 1, row id r) and (seed s, row id r + 1) are equal on "
        "their first {} draws: the stream's key mixes the seed and the row id",
        kDrawsPerCase);
  }
  if (RepeatsLagged(s.stream, s.next_row) || RepeatsLagged(s.next_row, s.stream)) {
    return fmt::format(
        "DRAW-1: row id r + 1's stream is row id r's shifted by one draw (first {} draws): "
        "neighbouring rows' streams overlap",
        kDrawsPerCase);
  }
  if (Repeats(s.stream, s.wrapped)) {
    return fmt::format(
        "DRAW-1: draws 2^32..2^32 + {} repeat draws 0..{}: the draw index is kept in 32 bits",
        kDrawsPerCase - 1, kDrawsPerCase - 1);
  }
  return std::nullopt;
}

// One look at the first n pairs of every sub-test; an exact failure as a message.
std::optional<std::string> EvaluateLook(const Streams& s, uint64_t n, uint64_t last,
                                        std::size_t vocab, IndependenceLook* l) {
  if (Repeats(s.stream, s.later)) {
    return fmt::format(
        "draws {}.. of the stream (a later call, first_draw {}) repeat its draws 0..{}: the "
        "stream's offset does not advance between calls",
        2 * last, 2 * last, kDrawsPerCase - 1);
  }
  if (auto key = StreamKeyFailure(s)) return key;
  std::vector<int64_t> even(n), odd(n);
  for (uint64_t i = 0; i < n; ++i) {
    even[i] = s.stream[2 * i];
    odd[i] = s.stream[2 * i + 1];
  }
  const std::span<const int64_t> first(s.stream.data(), n);
  l->pairs = n;
  l->tests[0] = GTestIndependence(even, odd, vocab);
  l->tests[1] = GTestIndependence(first, s.later, vocab);
  l->tests[2] = GTestIndependence(first, s.next_row, vocab);
  l->tests[3] = GTestIndependence(first, s.next_seed, vocab);
  // An identical stream is no dependence to measure: DET-3's (row ids) or DET-2's (seeds).
  l->left_out = {};
  if (Repeats(s.stream, s.next_row))
    l->left_out[2] = "the same stream as row id r: DET-3's failure";
  if (Repeats(s.stream, s.next_seed)) l->left_out[3] = "the same stream as seed s: DET-2's failure";
  double best = 2;
  l->worst = 0;
  for (int k = 0; k < kIndependenceSubtests; ++k) {
    const auto at = static_cast<std::size_t>(k);
    if (l->left_out[at] != nullptr) continue;
    const double p = kIndependenceSubtests * l->tests[at].p_value;
    if (p < best) {
      best = p;
      l->worst = k;
    }
  }
  l->p_value = std::min(1.0, best);
  return std::nullopt;
}

std::optional<std::string> RunIndependenceLooks(const ItemRun& ctx, uint64_t seed,
                                                const std::vector<uint64_t>& looks,
                                                const std::vector<double>& levels,
                                                IndependenceRun* out) {
  Streams s;
  std::optional<std::string> error;
  const uint64_t last = looks.empty() ? 0 : looks.back();
  out->rejected = FirstRejectingLook(looks, levels, [&](uint64_t n) {
    if ((error = DrawStreams(ctx, seed, n, last, &s))) return -1.0;
    out->drawn = s.drawn();
    if ((error = EvaluateLook(s, n, last, ctx.row->vocab(), &out->last))) return -1.0;
    return out->last.p_value;
  });
  return error;
}

std::string DescribeTest(const IndependenceLook& l, int k) {
  const IndependenceResult& t = l.tests[static_cast<std::size_t>(k)];
  if (l.left_out[static_cast<std::size_t>(k)] != nullptr) {
    return fmt::format("{}: left out ({})", kPairNames[static_cast<std::size_t>(k)],
                       l.left_out[static_cast<std::size_t>(k)]);
  }
  return fmt::format("{}: G = {:.4g}, df {}, p = {:.3g}{}", kPairNames[static_cast<std::size_t>(k)],
                     t.statistic, t.df, t.p_value,
                     t.worst_first < 0
                         ? ""
                         : fmt::format(" (pair ({}, {}): {} drawn, {:.1f} expected)", t.worst_first,
                                       t.worst_second, t.worst_observed, t.worst_expected));
}

void FillIndependenceLook(const IndependenceLook& l, TestResult* out) {
  out->p_value = l.p_value;
  out->observed.clear();
  out->expected.clear();
  const IndependenceResult& t = l.tests[static_cast<std::size_t>(l.worst)];
  out->observed.push_back(t.worst_observed);
  out->expected.push_back(t.worst_expected);
  out->worst_error = t.worst_expected > 0 ? std::fabs(t.worst_observed / t.worst_expected - 1) : 0;
}

// Power at the last look: the TV between a pair's joint law and the product of its margins
// detected w.p. 0.9 by each sub-test at its share of the last look's level.
double StateIndependencePower(const ItemRun& ctx, const IndependenceLook& last, uint64_t n,
                              double level, TestResult* out) {
  double worst = 0;
  for (int k = 0; k < kIndependenceSubtests; ++k) {
    const double df = last.tests[static_cast<std::size_t>(k)].df;
    if (df >= 1) worst = std::max(worst, DetectableTv(df, level / kIndependenceSubtests, n));
  }
  out->power_tv = worst;
  std::string tests;
  for (int k = 0; k < kIndependenceSubtests; ++k) tests += (k ? "; " : "") + DescribeTest(last, k);
  out->note += fmt::format(
      "{} looks, last ({} pairs per sub-test): {}. Detects w.p. 0.9 a dependence of TV {:.3g} "
      "between a pair's joint law and the product of its margins",
      ctx.item.looks.size(), n, tests, worst);
  return worst;
}

}  // namespace

std::vector<TestResult> RunIndependence(const ItemRun& ctx) {
  TestResult r = ctx.base;
  // The identity classes of the coverage model (COV-1) this planned row covers.
  for (const std::string& tag : PropertyClassTags("INDEP-1")) r.coverage[tag] = 1;
  StatisticalTest<IndependenceLook> test;
  test.run = [&](uint64_t seed, const std::vector<uint64_t>& looks,
                 const std::vector<double>& levels, IndependenceRun* out) {
    return RunIndependenceLooks(ctx, seed, looks, levels, out);
  };
  test.fill = FillIndependenceLook;
  test.p_value = [](const IndependenceLook& l) { return l.p_value; };
  test.failure = [&](const IndependenceRun&, const IndependenceRun& second, const auto& why) {
    return fmt::format(
        "draws not independent ({} draws in all): re-run {}: {} (adjusted p = {:.3g} < {:.3g}; "
        "first run {}: p = {:.3g} < {:.3g})",
        why.all_draws, why.second_look, DescribeTest(second.last, second.last.worst), why.second_p,
        why.second_level, why.first_look, why.first_p, why.first_level);
  };
  test.power = [&](const IndependenceLook& last, uint64_t n, double level, TestResult* out) {
    return StateIndependencePower(ctx, last, n, level, out);
  };
  test.requirement = {"TV ", "TV ", RequiredTv(ctx.plan, ctx.item), ctx.plan.profile.required_tv};
  return RunStatisticalTest(ctx, std::move(r), test);
}

}  // namespace sampcert::properties

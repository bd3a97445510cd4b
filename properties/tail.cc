// TAIL-1 (SPEC.md sections 10 and 12): on the planned tail rows, the drawn count of each nested
// tail set (fixed from the reference before drawing) against its reference mass, one exact
// binomial per set at an equal share of the item's level (a set never drawn is the zero-count
// test, 2 (1 - m)^n). Power is stated as the relative change of each set's mass detected with
// probability 0.9; a set short of the profile's required change makes the item Inconclusive.
// Sequential looks and the re-run after a rejection follow the one rule of every test (STAT-4,
// sequential_rule.h).
#include "properties/tail.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "properties/distribution.h"
#include "properties/draw_planning.h"
#include "properties/families.h"
#include "properties/plan.h"
#include "properties/portable_random.h"
#include "properties/sequential_rule.h"
#include "properties/statistics/binomial.h"
#include "properties/statistics/tolerant_null.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

using results::Status;
using results::TestResult;

std::vector<std::pair<std::string, RowCase>> TailRows(DType dtype, uint32_t) {
  std::vector<std::pair<std::string, RowCase>> rows;
  {
    // One dominant token, ~5% spread over 50000 tiny ones: each tail logit is
    // log(0.05 / 50000 / 0.95).
    const float tail = static_cast<float>(PortableLog(0.05 / 50000.0 / 0.95));
    std::vector<float> x(50001, tail);
    x[0] = 0.0f;
    rows.emplace_back("dominant_tail_V50001", MakeRow(dtype, x, 1.0f, 112));
  }
  {
    // Tails at depth (the nested sets): one dominant token; 20,000 tokens at 1e-6 of it,
    // 60,000 at 8e-8 (below 1e-7 absolute, above 2^-24 of the maximum) and 100,000 at 1e-8
    // (below 2^-24 of the maximum, where an fp32 exponential race loses everything).
    std::vector<float> x(180001);
    x[0] = 0.0f;
    const float a = static_cast<float>(PortableLog(1e-6));
    const float b = static_cast<float>(PortableLog(8e-8));
    const float c = static_cast<float>(PortableLog(1e-8));
    for (std::size_t i = 1; i < x.size(); ++i) x[i] = i <= 20000 ? a : i <= 80000 ? b : c;
    rows.emplace_back("deep_tail_V180001", MakeRow(dtype, x, 1.0f, 113));
  }
  return rows;
}

std::string_view TailProperty(const RowCase&) { return "TAIL-1"; }

void PlanTail(const PlanContext& ctx, PlanItem* it) {
  const Profile& profile = ctx.profile;
  // Draws for the profile's relative tail change on every nested tail set at the last look's
  // level, at most 4x the profile's draws (one count per set: cheap per draw).
  it->required_draws = 4 * profile.max_draws;
  if (!ctx.ref) return;
  const std::vector<TailSet> sets = TailSets(*ctx.ref);
  it->subtests = std::max<int>(1, static_cast<int>(sets.size()));
  const double set_level = kLookShare[kLooks - 1] * it->level / it->subtests;
  // bf16 / fp16: each set's null is the interval of masses the class admits (TOL-6, TOL-7); a
  // point for fp32.
  const std::vector<double> tol =
      NullTolerance(ctx.ref->probs, ctx.ref->log_weights, ctx.info.policies.accuracy);
  const std::vector<std::pair<double, double>> intervals = TailIntervals(sets, tol);
  auto detects = [&](uint64_t n) {
    for (std::size_t s = 0; s < sets.size(); ++s) {
      if (!BinomialDetects(n, sets[s].mass, kSlack * profile.required_tail_change * sets[s].mass,
                           set_level, intervals[s])) {
        return false;
      }
    }
    return true;
  };
  it->required_draws = SmallestDraws(4096, 4 * profile.max_draws, detects);
  // Where the class's tolerance puts the profile's change out of reach at the most draws, the
  // item is held to (and states) what they reach under the class's null.
  if (!tol.empty() && !detects(it->required_draws)) {
    double worst = 0;
    for (std::size_t s = 0; s < sets.size(); ++s) {
      worst = std::max(worst, DetectableShiftBinomial(it->required_draws, sets[s].mass, set_level,
                                                      intervals[s].first, intervals[s].second) /
                                  sets[s].mass);
    }
    if (worst > profile.required_tail_change) it->required_tail_change = RoundUpTwoDigits(worst);
  }
}

std::vector<TailSet> TailSets(const ReferenceDistribution& ref) {
  long double top = 0;
  for (long double p : ref.probs) top = std::max(top, p);
  struct Bound {
    const char* label;
    long double below;
  };
  const Bound bounds[] = {
      {"p < 1e-4", 1e-4L}, {"p < 1e-7", 1e-7L}, {"p < 2^-24 of the maximum", top * 0x1p-24L}};
  std::vector<TailSet> sets;
  for (const Bound& b : bounds) {
    TailSet s;
    s.label = b.label;
    s.member.assign(ref.probs.size(), 0);
    long double mass = 0;
    for (std::size_t i = 0; i < ref.probs.size(); ++i) {
      if (ref.probs[i] > 0 && ref.probs[i] < b.below) {
        s.member[i] = 1;
        ++s.tokens;
        mass += ref.probs[i];
      }
    }
    s.mass = static_cast<double>(mass);
    if (s.tokens == 0 || (!sets.empty() && sets.back().tokens == s.tokens)) continue;
    sets.push_back(std::move(s));
  }
  return sets;
}

std::vector<std::pair<double, double>> TailIntervals(const std::vector<TailSet>& sets,
                                                     std::span<const double> token_error) {
  std::vector<std::pair<double, double>> out;
  double total = 0;
  for (double e : token_error) total += e;
  for (const TailSet& s : sets) {
    double e = 0;
    for (std::size_t i = 0; i < s.member.size() && i < token_error.size(); ++i) {
      if (s.member[i]) e += token_error[i];
    }
    out.push_back(AdmissibleMass(s.mass, e, total - e));
  }
  return out;
}

namespace {

struct TailLook {
  double p_value = 1;  // Bonferroni-adjusted over the sets
  std::size_t worst = 0;
  uint64_t n = 0;
  std::vector<uint64_t> counts;
};
using TailRun = SequentialRun<TailLook>;

// The tail sets of a row with the interval of masses each may have under the declared class.
struct TailNull {
  std::vector<TailSet> sets;
  std::vector<double> tol;  // NullTolerance; empty for fp32
  std::vector<std::pair<double, double>> intervals;
  double share() const { return static_cast<double>(sets.size()); }
};

std::string DescribeTailLook(const TailNull& null, const TailLook& l) {
  std::string d;
  for (std::size_t s = 0; s < null.sets.size(); ++s) {
    const TailSet& set = null.sets[s];
    d += fmt::format("{}{} ({} tokens, mass {:.3g}): drew {} of {}, expected {:.1f}", s ? "; " : "",
                     set.label, set.tokens, set.mass, l.counts[s], l.n,
                     set.mass * static_cast<double>(l.n));
    if (!null.tol.empty()) {
      d += fmt::format(" (the class admits a mass in [{:.3g}, {:.3g}])", null.intervals[s].first,
                       null.intervals[s].second);
    }
  }
  return d;
}

void FillTailLook(const TailNull& null, const TailLook& l, TestResult* out) {
  out->p_value = l.p_value;
  out->observed.clear();
  out->expected.clear();
  out->worst_error = 0;
  for (std::size_t s = 0; s < null.sets.size(); ++s) {
    out->observed.push_back(static_cast<double>(l.counts[s]));
    out->expected.push_back(null.sets[s].mass * static_cast<double>(l.n));
    out->worst_error = std::max(
        out->worst_error, std::fabs(static_cast<double>(l.counts[s]) / out->expected.back() - 1));
  }
}

// One run: the sequential looks on one stream of draws; each look counts its new draws into
// the tail sets and tests every set's count so far (one exact binomial each).
std::optional<std::string> RunTailLooks(const ItemRun& ctx, const TailNull& null, uint64_t seed,
                                        const std::vector<uint64_t>& looks,
                                        const std::vector<double>& levels, TailRun* out) {
  const RowCase& row = *ctx.row;
  const std::vector<TailSet>& sets = null.sets;
  std::vector<int64_t> tokens;
  std::optional<std::string> error;
  out->last.counts.assign(sets.size(), 0);
  out->rejected = FirstRejectingLook(looks, levels, [&](uint64_t n) {
    const std::size_t counted = tokens.size();
    if (auto err = DrawMore(ctx.sampler, row, seed, n, &tokens)) {
      error = "sampler error: " + err->message;
      return -1.0;
    }
    TailLook& l = out->last;
    for (std::size_t i = counted; i < tokens.size(); ++i) {
      const int64_t t = tokens[i];
      if (t < 0 || static_cast<std::size_t>(t) >= row.vocab()) {
        error = fmt::format("RANGE-1: drew token id {} outside [0, {})", t, row.vocab());
        return -1.0;
      }
      for (std::size_t s = 0; s < sets.size(); ++s) {
        l.counts[s] += sets[s].member[static_cast<std::size_t>(t)];
      }
    }
    l.n = tokens.size();
    out->drawn = l.n;
    l.p_value = 1;
    for (std::size_t s = 0; s < sets.size(); ++s) {
      const double p = std::min(
          1.0, null.share() * BinomialTwoSidedInterval(l.counts[s], l.n, null.intervals[s].first,
                                                       null.intervals[s].second));
      if (p < l.p_value) {
        l.p_value = p;
        l.worst = s;
      }
    }
    return l.p_value;
  });
  return error;
}

// Power at the last look: the relative change of each set's mass detected w.p. 0.9 at the
// set's share of the last look's level.
double StateTailPower(const ItemRun& ctx, const TailNull& null, const TailLook& last, uint64_t n,
                      double level, TestResult* out) {
  double worst_change = 0;
  std::string power;
  for (std::size_t s = 0; s < null.sets.size(); ++s) {
    const TailSet& set = null.sets[s];
    const double shift = DetectableShiftBinomial(n, set.mass, level / null.share(),
                                                 null.intervals[s].first, null.intervals[s].second);
    const double change = shift / set.mass;
    worst_change = std::max(worst_change, change);
    if (s == 0) out->power_tv = shift;
    power += fmt::format("{}{} {:.3g}", s ? ", " : "", set.label, change);
  }
  out->note += fmt::format(
      "{} looks, last ({} draws): {}. Detects w.p. 0.9 a relative change of each tail's mass: {}",
      ctx.item.looks.size(), n, DescribeTailLook(null, last), power);
  return worst_change;
}

}  // namespace

std::vector<TestResult> RunTail(const ItemRun& ctx) {
  const Policies& policies = ctx.sampler.info().policies;
  const Expected<ReferenceDistribution> ref = ComputeReference(ctx.row->view(), policies);
  TailNull null;
  null.sets = TailSets(*ref);
  TestResult r = ctx.base;
  r.cases = 1;
  if (null.sets.empty()) {
    r.status = Status::kInconclusive;
    r.note = "no tail set has mass under the declared policies";
    return {r};
  }
  // bf16 / fp16: each set's null is the interval of masses the class admits (TOL-6, TOL-7).
  null.tol = NullTolerance(ref->probs, ref->log_weights, policies.accuracy);
  null.intervals = TailIntervals(null.sets, null.tol);
  StatisticalTest<TailLook> test;
  test.run = [&](uint64_t seed, const std::vector<uint64_t>& looks,
                 const std::vector<double>& levels,
                 TailRun* out) { return RunTailLooks(ctx, null, seed, looks, levels, out); };
  test.fill = [&](const TailLook& l, TestResult* out) { FillTailLook(null, l, out); };
  test.p_value = [](const TailLook& l) { return l.p_value; };
  test.failure = [&](const TailRun&, const TailRun& second, const auto& why) {
    return fmt::format(
        "tail mass off ({} draws in all): re-run {}: {} (worst: {}, adjusted p = {:.3g} < {:.3g}; "
        "first run {}: p = {:.3g} < {:.3g})",
        why.all_draws, why.second_look, DescribeTailLook(null, second.last),
        null.sets[second.last.worst].label, why.second_p, why.second_level, why.first_look,
        why.first_p, why.first_level);
  };
  test.power = [&](const TailLook& last, uint64_t n, double level, TestResult* out) {
    return StateTailPower(ctx, null, last, n, level, out);
  };
  test.requirement = {"a relative change of ", "", RequiredTailChange(ctx.plan, ctx.item),
                      ctx.plan.profile.required_tail_change};
  return RunStatisticalTest(ctx, std::move(r), test);
}

}  // namespace sampcert::properties

// TAIL-1 (SPEC.md sections 10 and 12): on the planned tail rows, the drawn count of each nested
// tail set (fixed from the reference before drawing) against its reference mass, one exact
// binomial per set at an equal share of the item's level (a set never drawn is the zero-count
// test, 2 (1 - m)^n). Power is stated as the relative change of each set's mass detected with
// probability 0.9; a set short of the profile's required change makes the item Inconclusive.
// Sequential looks and the re-run after a rejection follow the one rule of every test (STAT-4).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "properties/portable_random.h"
#include "properties/statistical_item.h"
#include "properties/statistics.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

using results::Status;
using results::TestResult;

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

std::vector<TestResult> RunTail(adapters::Sampler& sampler, const std::string& sampler_arg,
                                const Plan& plan, const PlanItem& item, TestResult r,
                                const RowCase& row) {
  const Expected<ReferenceDistribution> ref = ComputeReference(row.view(), sampler.info().policies);
  const std::vector<TailSet> sets = TailSets(*ref);
  r.cases = 1;
  if (sets.empty()) {
    r.status = Status::kInconclusive;
    r.note = "no tail set has mass under the declared policies";
    return {r};
  }
  const double share = static_cast<double>(sets.size());
  // bf16 / fp16: each set's null is the interval of masses the class admits (TOL-6, TOL-7).
  const std::vector<double> tol =
      NullTolerance(ref->probs, ref->log_weights, sampler.info().policies.accuracy);
  const std::vector<std::pair<double, double>> intervals = TailIntervals(sets, tol);
  struct Look {
    double p_value = 1;  // Bonferroni-adjusted over the sets
    std::size_t worst = 0;
    uint64_t n = 0;
    std::vector<uint64_t> counts;
  };
  struct Run {
    int rejected = -1;  // the look that rejected, -1: none
    Look last;          // the last look evaluated
  };
  // One run: the sequential looks on one stream of draws; each look counts its new draws into
  // the tail sets and tests every set's count so far (one exact binomial each).
  auto run = [&](uint64_t seed, const std::vector<uint64_t>& looks,
                 const std::vector<double>& levels, Run* out) -> std::optional<std::string> {
    std::vector<int64_t> tokens;
    std::optional<std::string> error;
    out->last.counts.assign(sets.size(), 0);
    out->rejected = FirstRejectingLook(looks, levels, [&](uint64_t n) {
      const std::size_t counted = tokens.size();
      if (auto err = DrawMore(sampler, row, seed, n, &tokens)) {
        error = "sampler error: " + err->message;
        return -1.0;
      }
      Look& l = out->last;
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
      l.p_value = 1;
      for (std::size_t s = 0; s < sets.size(); ++s) {
        const double p =
            std::min(1.0, share * BinomialTwoSidedInterval(l.counts[s], l.n, intervals[s].first,
                                                           intervals[s].second));
        if (p < l.p_value) {
          l.p_value = p;
          l.worst = s;
        }
      }
      return l.p_value;
    });
    return error;
  };
  auto describe = [&](const Look& l) {
    std::string d;
    for (std::size_t s = 0; s < sets.size(); ++s) {
      d += fmt::format("{}{} ({} tokens, mass {:.3g}): drew {} of {}, expected {:.1f}",
                       s ? "; " : "", sets[s].label, sets[s].tokens, sets[s].mass, l.counts[s], l.n,
                       sets[s].mass * static_cast<double>(l.n));
      if (!tol.empty()) {
        d += fmt::format(" (the class admits a mass in [{:.3g}, {:.3g}])", intervals[s].first,
                         intervals[s].second);
      }
    }
    return d;
  };
  auto look_name = [](const std::vector<uint64_t>& looks, int k) {
    return fmt::format("look {} of {} ({} draws)", k + 1, looks.size(),
                       looks[static_cast<std::size_t>(k)]);
  };
  auto fill = [&](const Look& l) {
    r.p_value = l.p_value;
    r.observed.clear();
    r.expected.clear();
    r.worst_error = 0;
    for (std::size_t s = 0; s < sets.size(); ++s) {
      r.observed.push_back(static_cast<double>(l.counts[s]));
      r.expected.push_back(sets[s].mass * static_cast<double>(l.n));
      r.worst_error = std::max(r.worst_error,
                               std::fabs(static_cast<double>(l.counts[s]) / r.expected.back() - 1));
    }
  };
  Run first;
  if (auto err = run(item.seed, item.looks, item.look_levels, &first)) {
    FailItem(r, *err, row, sampler_arg, plan, item);
    return {r};
  }
  fill(first.last);
  r.draws = first.last.n;
  Run stated = first;
  uint64_t stated_n = item.draws;
  double stated_level = item.look_levels.back();
  if (first.rejected >= 0) {
    // A look rejected: the re-run rule of every test (SPEC STAT-4).
    Run second;
    if (auto err = run(Mix(item.seed, 1), item.rerun_looks, item.rerun_look_levels, &second)) {
      FailItem(r, *err, row, sampler_arg, plan, item);
      return {r};
    }
    r.draws = first.last.n + second.last.n;
    const std::size_t fk = static_cast<std::size_t>(first.rejected);
    if (second.rejected >= 0) {
      fill(second.last);
      const std::size_t sk = static_cast<std::size_t>(second.rejected);
      FailItem(r,
               fmt::format(
                   "tail mass off ({} draws in all): re-run {}: {} (worst: {}, adjusted p "
                   "= {:.3g} < {:.3g}; first run {}: p = {:.3g} < {:.3g})",
                   r.draws, look_name(item.rerun_looks, second.rejected), describe(second.last),
                   sets[second.last.worst].label, second.last.p_value, item.rerun_look_levels[sk],
                   look_name(item.looks, first.rejected), first.last.p_value, item.look_levels[fk]),
               row, sampler_arg, plan, item);
      return {r};
    }
    r.note = fmt::format(
        "first run {} gave p = {:.3g} below its level {:.3g}; the re-run ({} draws) passed every "
        "look (last p = {:.3g}). ",
        look_name(item.looks, first.rejected), first.last.p_value, item.look_levels[fk],
        second.last.n, second.last.p_value);
    stated = second;
    stated_n = item.rerun_draws;
    stated_level = item.rerun_look_levels.back();
  }
  // Power at the last look: the relative change of each set's mass detected w.p. 0.9 at the
  // set's share of the last look's level.
  double worst_change = 0;
  std::string power;
  for (std::size_t s = 0; s < sets.size(); ++s) {
    const double shift = DetectableShiftBinomial(stated_n, sets[s].mass, stated_level / share,
                                                 intervals[s].first, intervals[s].second);
    const double change = shift / sets[s].mass;
    worst_change = std::max(worst_change, change);
    if (s == 0) r.power_tv = shift;
    power += fmt::format("{}{} {:.3g}", s ? ", " : "", sets[s].label, change);
  }
  r.note += fmt::format(
      "{} looks, last ({} draws): {}. Detects w.p. 0.9 a relative change of each tail's mass: {}",
      item.looks.size(), stated_n, describe(stated.last), power);
  const double required = RequiredTailChange(plan, item);
  r.note += fmt::format("; powered for a relative change of {:.3g}", required);
  if (required != plan.profile.required_tail_change) {
    r.note += fmt::format(
        " (the {} class's requirement: the profile's {:.3g} is out of reach under its "
        "tolerance)",
        adapters::NameOrThrow(sampler.info().policies.accuracy), plan.profile.required_tail_change);
  }
  if (worst_change > required) {
    r.status = Status::kInconclusive;
    r.note += fmt::format(" (requires {:.3g}", required);
    if (item.draws < item.required_draws) {
      r.note += fmt::format(
          "; the draw budget capped this test at {} draws, its power needs {}: raise --max-draws "
          "or lower the declared draw cost to reach it",
          item.draws, item.required_draws);
    }
    r.note += ")";
  }
  return {r};
}

}  // namespace sampcert::properties

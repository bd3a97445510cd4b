// TAIL-1 (SPEC.md sections 10 and 12): on the planned tail rows, the drawn count of each nested
// tail set (fixed from the reference before drawing) against its reference mass, one exact
// binomial per set at an equal share of the item's level (a set never drawn is the zero-count
// test, 2 (1 - m)^n). Power is stated as the relative change of each set's mass detected with
// probability 0.9; a set short of the profile's required change makes the item Inconclusive. A
// suspicious first look is re-run from a fresh seed at the reserve's level, like DIST-1.
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
    std::vector<uint64_t> counts;
  };
  auto look = [&](uint64_t seed, uint64_t n, Look* out) -> std::optional<std::string> {
    auto tokens = Draw(sampler, row, seed, n);
    if (!tokens.ok()) return "sampler error: " + tokens.error().message;
    out->counts.assign(sets.size(), 0);
    for (int64_t t : *tokens) {
      if (t < 0 || static_cast<std::size_t>(t) >= row.vocab()) {
        return fmt::format("RANGE-1: drew token id {} outside [0, {})", t, row.vocab());
      }
      for (std::size_t s = 0; s < sets.size(); ++s) out->counts[s] += sets[s].member[t];
    }
    out->p_value = 1;
    for (std::size_t s = 0; s < sets.size(); ++s) {
      const double p =
          std::min(1.0, share * BinomialTwoSidedInterval(out->counts[s], n, intervals[s].first,
                                                         intervals[s].second));
      if (p < out->p_value) {
        out->p_value = p;
        out->worst = s;
      }
    }
    return std::nullopt;
  };
  auto describe = [&](const Look& l, uint64_t n) {
    std::string d;
    for (std::size_t s = 0; s < sets.size(); ++s) {
      d += fmt::format("{}{} ({} tokens, mass {:.3g}): drew {} of {}, expected {:.1f}",
                       s ? "; " : "", sets[s].label, sets[s].tokens, sets[s].mass, l.counts[s], n,
                       sets[s].mass * static_cast<double>(n));
      if (!tol.empty()) {
        d += fmt::format(" (the class admits a mass in [{:.3g}, {:.3g}])", intervals[s].first,
                         intervals[s].second);
      }
    }
    return d;
  };
  auto fill = [&](const Look& l, uint64_t n) {
    r.draws = n;
    r.p_value = l.p_value;
    r.observed.clear();
    r.expected.clear();
    r.worst_error = 0;
    for (std::size_t s = 0; s < sets.size(); ++s) {
      r.observed.push_back(static_cast<double>(l.counts[s]));
      r.expected.push_back(sets[s].mass * static_cast<double>(n));
      r.worst_error = std::max(r.worst_error,
                               std::fabs(static_cast<double>(l.counts[s]) / r.expected.back() - 1));
    }
  };
  Look first;
  if (auto err = look(item.seed, item.draws, &first)) {
    FailItem(r, *err, row, sampler_arg, plan, item);
    return {r};
  }
  fill(first, item.draws);
  if (first.p_value < item.level) {
    Look second;
    if (auto err = look(Mix(item.seed, 1), item.rerun_draws, &second)) {
      FailItem(r, *err, row, sampler_arg, plan, item);
      return {r};
    }
    if (second.p_value < item.rerun_level) {
      fill(second, item.rerun_draws);
      FailItem(r,
               fmt::format("tail mass off: {} (worst: {}, adjusted p = {:.3g} < {:.3g}; first "
                           "look p = {:.3g} < {:.3g})",
                           describe(second, item.rerun_draws), sets[second.worst].label,
                           second.p_value, item.rerun_level, first.p_value, item.level),
               row, sampler_arg, plan, item);
      return {r};
    }
    r.note = fmt::format(
        "first look p = {:.3g} below the level; the re-run ({} draws) gave p = {:.3g}. ",
        first.p_value, item.rerun_draws, second.p_value);
  }
  // Power: the relative change of each set's mass detected w.p. 0.9 at the set's level.
  double worst_change = 0;
  std::string power;
  for (std::size_t s = 0; s < sets.size(); ++s) {
    const double shift = DetectableShiftBinomial(item.draws, sets[s].mass, item.level / share,
                                                 intervals[s].first, intervals[s].second);
    const double change = shift / sets[s].mass;
    worst_change = std::max(worst_change, change);
    if (s == 0) r.power_tv = shift;
    power += fmt::format("{}{} {:.3g}", s ? ", " : "", sets[s].label, change);
  }
  r.note += fmt::format("{}. Detects w.p. 0.9 a relative change of each tail's mass: {}",
                        describe(first, item.draws), power);
  const double required = RequiredTailChange(plan, item);
  r.note += fmt::format("; powered for a relative change of {:.3g}", required);
  if (required != plan.profile.required_tail_change) {
    r.note += fmt::format(
        " (the {} class's requirement: the profile's {:.3g} is out of reach "
        "under its tolerance)",
        AccuracyName(sampler.info().policies.accuracy), plan.profile.required_tail_change);
  }
  if (worst_change > required) {
    r.status = Status::kInconclusive;
    r.note += fmt::format(" (requires {:.3g})", required);
  }
  return {r};
}

}  // namespace sampcert::properties

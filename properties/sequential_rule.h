// The one rule of every planned statistical test (SPEC STAT-4), written once for DIST-1/2,
// TAIL-1 and the precision probe: a first run of sequential looks on one stream of draws; a
// rejection is re-run from a fresh seed with 4x the draws at the reserve's level, and a failure
// needs both; the power is stated at the last look of the run that decided, and a test short of
// its requirement is Inconclusive, saying why (the draw budget, or the class's tolerance).
// A family supplies what differs: how one run draws and evaluates its looks, how a look fills
// the result, its failure message and its stated power.
#ifndef SAMPCERT_PROPERTIES_SEQUENTIAL_RULE_H_
#define SAMPCERT_PROPERTIES_SEQUENTIAL_RULE_H_

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "properties/families.h"
#include "properties/plan.h"
#include "properties/portable_random.h"
#include "results/test_result.h"
#include "sampcert/error.h"

namespace sampcert::properties {

// The sequential looks of one run of a test: look k tests the first looks[k] draws at
// levels[k]; evaluate(n) returns the adjusted p-value of the first n draws. The index of the
// first look that rejects, or -1 when none does (every look ran).
template <typename Evaluate>
int FirstRejectingLook(const std::vector<uint64_t>& looks, const std::vector<double>& levels,
                       Evaluate&& evaluate) {
  for (std::size_t k = 0; k < looks.size(); ++k) {
    if (evaluate(looks[k]) < levels[k]) return static_cast<int>(k);
  }
  return -1;
}

// "look 2 of 4 (1024 draws)".
std::string LookName(const std::vector<uint64_t>& looks, int k);

// One run of a test: the look that rejected (-1: none), the draws made and the last look
// evaluated.
template <typename Look>
struct SequentialRun {
  int rejected = -1;
  uint64_t drawn = 0;
  Look last;
};

// What the requirement is called in notes: "TV " (distribution) or "a relative change of "
// (tail) before the value, and the item's and the profile's values.
struct Requirement {
  const char* powered_for;      // "; powered for {}{:.3g}"
  const char* requires_prefix;  // " (requires {}{:.3g}"
  double item = 0;
  double profile = 0;
};

template <typename Look>
struct StatisticalTest {
  using Run = SequentialRun<Look>;
  // One run from `seed` over the looks; a message on an exact failure or a sampler error.
  std::function<std::optional<std::string>(uint64_t seed, const std::vector<uint64_t>& looks,
                                           const std::vector<double>& levels, Run* out)>
      run;
  // A look's statistics into the result (p-value, observed and expected counts, worst error).
  std::function<void(const Look&, results::TestResult*)> fill;
  std::function<double(const Look&)> p_value;
  // The failure message once the first run and its re-run both rejected.
  struct Rejections {
    uint64_t all_draws = 0;
    std::string first_look, second_look;  // LookName of the rejecting looks
    double first_p = 1, second_p = 1, first_level = 0, second_level = 0;
  };
  std::function<std::string(const Run& first, const Run& second, const Rejections& why)> failure;
  // Appends the stated power of the deciding run's last look (n draws, its level) to the note;
  // returns the smallest deviation it detects w.p. 0.9, compared with the requirement.
  std::function<double(const Look&, uint64_t n, double level, results::TestResult*)> power;
  Requirement requirement;
};

// Marks `r` failed with the message, the row as input and row file, and the item's
// reproduction command.
void FailItem(results::TestResult& r, std::string message, const ItemRun& run);

// The rule above; `r` is the family's result skeleton.
template <typename Look>
std::vector<results::TestResult> RunStatisticalTest(const ItemRun& ctx, results::TestResult r,
                                                    const StatisticalTest<Look>& test);

// The Inconclusive rule's note and status (shared by every drawn family).
void StateRequirement(const ItemRun& ctx, const Requirement& req, double achieved,
                      results::TestResult* r);

template <typename Look>
std::vector<results::TestResult> RunStatisticalTest(const ItemRun& ctx, results::TestResult r,
                                                    const StatisticalTest<Look>& test) {
  const PlanItem& item = ctx.item;
  r.cases = 1;
  SequentialRun<Look> first;
  if (auto err = test.run(item.seed, item.looks, item.look_levels, &first)) {
    FailItem(r, *err, ctx);
    return {r};
  }
  test.fill(first.last, &r);
  r.draws = first.drawn;
  // The run whose last look states the power: the first, or the re-run when the first stopped.
  SequentialRun<Look> stated = first;
  uint64_t stated_n = item.draws;
  double stated_level = item.look_levels.back();
  if (first.rejected >= 0) {
    SequentialRun<Look> second;
    if (auto err = test.run(Mix(item.seed, 1), item.rerun_looks, item.rerun_look_levels, &second)) {
      FailItem(r, *err, ctx);
      return {r};
    }
    r.draws = first.drawn + second.drawn;
    if (second.rejected >= 0) {
      test.fill(second.last, &r);
      const typename StatisticalTest<Look>::Rejections why{
          r.draws,
          LookName(item.looks, first.rejected),
          LookName(item.rerun_looks, second.rejected),
          test.p_value(first.last),
          test.p_value(second.last),
          item.look_levels[static_cast<std::size_t>(first.rejected)],
          item.rerun_look_levels[static_cast<std::size_t>(second.rejected)]};
      FailItem(r, test.failure(first, second, why), ctx);
      return {r};
    }
    const std::size_t fk = static_cast<std::size_t>(first.rejected);
    r.note = fmt::format(
        "first run {} gave p = {:.3g} below its level {:.3g}; the re-run ({} draws) passed every "
        "look (last p = {:.3g}). ",
        LookName(item.looks, first.rejected), test.p_value(first.last), item.look_levels[fk],
        second.drawn, test.p_value(second.last));
    stated = second;
    stated_n = item.rerun_draws;
    stated_level = item.rerun_look_levels.back();
  }
  const double achieved = test.power(stated.last, stated_n, stated_level, &r);
  StateRequirement(ctx, test.requirement, achieved, &r);
  return {r};
}

}  // namespace sampcert::properties

#endif  // SAMPCERT_PROPERTIES_SEQUENTIAL_RULE_H_

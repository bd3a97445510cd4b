#include "properties/sequential_rule.h"

#include "adapters/declarations.h"
#include "properties/reproduction.h"
#include "properties/statistics/tolerant_null.h"
#include "sampcert/reference_distribution.h"

namespace sampcert::properties {

std::string LookName(const std::vector<uint64_t>& looks, int k) {
  return fmt::format("look {} of {} ({} draws)", k + 1, looks.size(),
                     looks[static_cast<std::size_t>(k)]);
}

void FailItem(results::TestResult& r, std::string message, const ItemRun& run) {
  r.status = results::Status::kFail;
  RowCase named = *run.row;  // a planned row's file says which planned row it is
  if (named.family.empty()) named.family = run.item.name;
  // The row file carries the token history and the penalties (SPEC section 16): a penalty row
  // replays with `--row` as it failed.
  r.failure =
      results::Failure{std::move(message), Describe(*run.row),
                       Describe(*run.row), ReproductionCommand(run.sampler_arg, run.plan, run.item),
                       RowFileJson(named), ""};
}

void StateRequirement(const ItemRun& ctx, const Requirement& req, double achieved,
                      results::TestResult* r) {
  r->note += fmt::format("; powered for {}{:.3g}", req.powered_for, req.item);
  if (req.item != req.profile) {
    r->note += fmt::format(
        " (the {} class's requirement: the profile's {:.3g} is out of reach under its "
        "tolerance)",
        adapters::NameOrThrow(ctx.sampler.info().policies.accuracy), req.profile);
  }
  if (achieved > req.item) {
    r->status = results::Status::kInconclusive;
    r->note += fmt::format(" (requires {}{:.3g}", req.requires_prefix, req.item);
    if (ctx.item.draws < ctx.item.required_draws) {
      r->note += fmt::format(
          "; the draw budget capped this test at {} draws, its power needs {}: raise --max-draws, "
          "or --draw-time where the sampler declares a draw cost, to reach it",
          ctx.item.draws, ctx.item.required_draws);
    }
    r->note += ")";
  }
}

}  // namespace sampcert::properties

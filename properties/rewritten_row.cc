#include "properties/rewritten_row.h"

#include <fmt/format.h>

#include "adapters/declarations.h"
#include "properties/case_check.h"
#include "properties/plan.h"
#include "properties/probability_check.h"
#include "properties/sequential_rule.h"
#include "sampcert/logit_bias.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/row_validation.h"
#include "sampcert/sampler_abi.h"
#include "sampcert/tolerance.h"

namespace sampcert::properties {
namespace {

// The identity row's draws compared with the same row's without the request.
constexpr uint64_t kIdentityDraws = 1024;

}  // namespace

Error InvalidRequest(const RowCase& row) {
  const RowView v = row.view();
  if (Error e = ValidateRowParameters(v, Policies{}, 0); e.code != ErrorCode::kOk) return e;
  // INV-6 by the mask and the bans alone, whatever the logits and the NaN policy: a row whose
  // every token is masked or banned (the packed family's empty row, PMASK-2).
  const std::vector<uint8_t> bans = BannedTokens(v);
  for (std::size_t i = 0; i < v.vocab; ++i) {
    if (Allowed(v, bans, i)) return Error{};
  }
  return ValidateRow(v, Policies{}, 0);
}

std::vector<results::TestResult> RunRewrittenRow(const ItemRun& ctx, const Rewrite& rewrite) {
  const RowCase& row = *ctx.row;
  const adapters::SamplerInfo& info = ctx.sampler.info();
  if (const Error invalid = InvalidRequest(row); invalid.code != ErrorCode::kOk) {
    results::TestResult r = ctx.base;
    r.cases = 1;
    const Outcome o = CheckInvalid(ctx.sampler, row, ctx.item.seed, invalid);
    if (!o.ok) {
      FailItem(r, "an invalid request: " + o.message, ctx);
      return {r};
    }
    r.status = results::Status::kPass;
    r.note = fmt::format("The invalid request was refused with {}, as SPEC section 5 asks ({}).",
                         ErrorCodeName(invalid.code), invalid.message);
    return {r};
  }
  const Expected<ReferenceDistribution> ref = ComputeReference(row.view(), info.policies);
  results::TestResult r = ctx.base;
  std::string note;
  if (info.Has(SAMPCERT_CAP_PROBABILITIES)) {
    auto p = ctx.sampler.Probabilities(OneRow(row));
    if (!p.ok()) {
      FailItem(r,
               fmt::format("probabilities of a row with {}: {}", rewrite.what, p.error().message),
               ctx);
      return {r};
    }
    const ProbabilityCheck c = CheckProbabilities(*ref, *p, AccuracyFor(info.policies.accuracy));
    if (!c.ok) {
      FailItem(r,
               fmt::format("{} on the row's {}: {} ({})", c.property, rewrite.what, c.failure,
                           rewrite.reference),
               ctx);
      return {r};
    }
    note = fmt::format(
        "Probabilities for the {} within the {} class (worst {:.3g} of the allowed error, token "
        "{}). ",
        rewrite.what, adapters::NameOrThrow(info.policies.accuracy), c.worst_ratio, c.worst_token);
    if (rewrite.bare) {
      auto plain = ctx.sampler.Probabilities(OneRow(*rewrite.bare));
      if (!plain.ok() || *plain != *p) {
        FailItem(r,
                 plain.ok()
                     ? fmt::format("{}: {}, yet the probabilities differ from those of the same "
                                   "row without it (bit for bit)",
                                   rewrite.identity_clause, rewrite.identity_what)
                     : fmt::format("probabilities of the row without its {}: {}", rewrite.what,
                                   plain.error().message),
                 ctx);
        return {r};
      }
    }
  }
  // Draws repeat under one seed only for a sampler that declares determinism (POL-6).
  if (rewrite.bare && info.policies.determinism != Determinism::kNone) {
    auto with = ctx.sampler.Sample(OneRow(row), ctx.item.seed, 0, kIdentityDraws);
    auto without = ctx.sampler.Sample(OneRow(*rewrite.bare), ctx.item.seed, 0, kIdentityDraws);
    if (!with.ok() || !without.ok()) {
      FailItem(r, "draws: " + (with.ok() ? without : with).error().message, ctx);
      return {r};
    }
    if (*with != *without) {
      std::size_t j = 0;
      while ((*with)[j] == (*without)[j]) ++j;
      FailItem(r,
               fmt::format("{}: {}, yet draw {} under seed {} is token {} with it and {} without",
                           rewrite.identity_clause, rewrite.identity_what, j, ctx.item.seed,
                           (*with)[j], (*without)[j]),
               ctx);
      return {r};
    }
    note += fmt::format("The first {} draws equal those without it. ", kIdentityDraws);
  }
  std::vector<results::TestResult> out = RunDistribution(ctx);
  for (results::TestResult& t : out) t.note = note + t.note;
  return out;
}

}  // namespace sampcert::properties

// FIN-1, NORM-1, PROB-1 (with SUPP-1/SUPP-2 of the reported mass), SHIFT-1 and PERM-1 (SPEC.md
// section 10): a sampler's reported probabilities against the reference and the tolerance table,
// and their invariance under an exact shift and a permutation of the tokens.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "properties/case_check.h"
#include "properties/probability_check.h"
#include "sampcert/sampler_abi.h"
#include "sampcert/tolerance.h"

namespace sampcert::properties {
namespace {

bool IndexPolicies(const Policies& pol) {
  return pol.tie_rule == TieRule::kExactLowestIndex ||
         pol.greedy_tie_break == GreedyTieBreak::kLowestIndex;
}

void Record(const ProbabilityCheck& c, const std::string& as_property, CaseContext& ctx) {
  if (as_property != "PROB-1") {
    ctx.Set(as_property, c.ok, c.ok ? "" : c.property + ": " + c.failure, c.worst_ratio);
    return;
  }
  for (const char* id : {"FIN-1", "NORM-1", "PROB-1"}) {
    const bool failed = !c.ok && c.property == id;
    ctx.Set(id, !failed, failed ? c.failure : "", id == std::string("PROB-1") ? c.worst_ratio : 0);
  }
  if (!c.ok && (c.property == "SUPP-1" || c.property == "SUPP-2")) {
    ctx.Fail(c.property, "probabilities: " + c.failure);
  }
}

}  // namespace

RowCase Reversed(const RowCase& row) {
  RowCase r = row;
  std::reverse(r.bits32.begin(), r.bits32.end());
  std::reverse(r.bits16.begin(), r.bits16.end());
  std::reverse(r.mask.begin(), r.mask.end());
  return r;
}

// The row with 1 added to every finite logit, if that is exact for every one of them. The
// check runs in long double, which is sound for |x| in {0} U [2^-20, 2^20]: x + 1 then needs at
// most 41 bits; rows with other values are not shifted.
std::optional<RowCase> Shifted(const RowCase& row) {
  RowCase r = row;
  for (std::size_t i = 0; i < row.vocab(); ++i) {
    const float x = row.Logit(i);
    if (!std::isfinite(x)) continue;
    const float ax = std::fabs(x);
    if (x != 0.0f && (ax < 0x1p-20f || ax > 0x1p20f)) return std::nullopt;
    r.SetLogit(i, x + 1.0f);
    if (static_cast<long double>(r.Logit(i)) != static_cast<long double>(x) + 1.0L) {
      return std::nullopt;
    }
  }
  return r;
}

std::vector<std::string> ProbabilityKeys(const RowCase& row, const adapters::SamplerInfo& info) {
  if (!info.Has(SAMPCERT_CAP_PROBABILITIES)) return {};
  std::vector<std::string> keys = {"FIN-1", "NORM-1", "PROB-1"};
  if (Shifted(row)) keys.emplace_back("SHIFT-1");
  if (!IndexPolicies(info.policies)) keys.emplace_back("PERM-1");
  return keys;
}

bool CheckProbabilityFamily(CaseContext& ctx) {
  const adapters::SamplerInfo& info = ctx.sampler.info();
  if (!info.Has(SAMPCERT_CAP_PROBABILITIES)) return true;
  const AccuracyParams& acc = AccuracyFor(info.policies.accuracy);
  auto p = ctx.sampler.Probabilities(OneRow(ctx.row));
  if (!p.ok()) {
    ctx.Fail("VALID-1", fmt::format("probabilities: error on valid input: {}: {}",
                                    ErrorCodeName(p.error().code), p.error().message));
    return false;
  }
  ctx.probs = std::move(p.value());
  Record(CheckProbabilities(ctx.ref, *ctx.probs, acc), "PROB-1", ctx);
  if (std::optional<RowCase> shifted = Shifted(ctx.row)) {
    auto ps = ctx.sampler.Probabilities(OneRow(*shifted));
    if (ps.ok()) {
      Record(CheckProbabilities(ctx.ref, *ps, acc), "SHIFT-1", ctx);
    } else {
      ctx.Set("SHIFT-1", false, "shifted row: " + ps.error().message);
    }
  }
  if (!IndexPolicies(info.policies)) {
    const RowCase rev = Reversed(ctx.row);
    auto pr = ctx.sampler.Probabilities(OneRow(rev));
    if (pr.ok()) {
      std::vector<double> back = std::move(pr.value());
      std::reverse(back.begin(), back.end());
      Record(CheckProbabilities(ctx.ref, back, acc), "PERM-1", ctx);
    } else {
      ctx.Set("PERM-1", false, "reversed row: " + pr.error().message);
    }
  }
  return true;
}

}  // namespace sampcert::properties

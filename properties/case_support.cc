// RANGE-1, SUPP-1, SUPP-2, LIM-1 and LIM-2 (SPEC.md section 10): exact checks on every draw.
#include <fmt/format.h>

#include "properties/case_check.h"

namespace sampcert::properties {

std::vector<std::string> SupportKeys(const ReferenceDistribution& ref) {
  std::vector<std::string> keys = {"RANGE-1", "SUPP-1", "SUPP-2"};
  if (ref.regime == Regime::kGreedy) keys.emplace_back("LIM-1");
  if (ref.regime == Regime::kPositiveInf) keys.emplace_back("LIM-2");
  return keys;
}

void CheckSupportAndLimits(CaseContext& ctx) {
  const std::size_t v = ctx.row.vocab();
  std::string range, supp1, supp2;
  for (int64_t t : ctx.tokens) {
    if (t < 0 || static_cast<std::size_t>(t) >= v) {
      if (range.empty()) range = fmt::format("token id {} outside [0, {})", t, v);
      continue;
    }
    const KeepClass k = ctx.ref.keep[static_cast<std::size_t>(t)];
    if (k == KeepClass::kOutsideSupport && supp1.empty()) {
      supp1 = fmt::format("drew token {}, outside the support", t);
    }
    if (k == KeepClass::kMustDrop && supp2.empty()) {
      supp2 = fmt::format("drew token {}, which must be dropped (reference probability {:.3g})", t,
                          static_cast<double>(ctx.ref.probs[static_cast<std::size_t>(t)]));
    }
  }
  ctx.Set("RANGE-1", range.empty(), range);
  ctx.Set("SUPP-1", supp1.empty(), supp1);
  ctx.Set("SUPP-2", supp2.empty(), supp2);
  const bool ok = supp1.empty() && supp2.empty();
  const std::string why = !supp1.empty() ? supp1 : supp2;
  if (ctx.ref.regime == Regime::kGreedy) ctx.Set("LIM-1", ok, why);
  if (ctx.ref.regime == Regime::kPositiveInf) ctx.Set("LIM-2", ok, why);
}

}  // namespace sampcert::properties

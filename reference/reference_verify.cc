#include "sampcert/reference_verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace sampcert {

namespace {

Error BadDraft(const char* what, const std::string& why) {
  return Error{ErrorCode::kInvalidDraft, fmt::format("{}: {}", what, why)};
}

}  // namespace

Error ValidateDraftRow(std::span<const double> q, const char* what) {
  const auto bad = [&](const std::string& why) { return BadDraft(what, why); };
  double sum = 0;
  for (std::size_t x = 0; x < q.size(); ++x) {
    if (!std::isfinite(q[x]) || q[x] < 0) {
      return bad(
          fmt::format("draft probability of token {} is {} (not a finite value >= 0)", x, q[x]));
    }
    sum += q[x];
  }
  if (!(std::fabs(sum - 1) <= kDraftSumTolerance)) {
    return bad(fmt::format("draft probabilities sum to {:.17g}, not to 1 within {:.0e}", sum,
                           kDraftSumTolerance));
  }
  return Error{};
}

Error ValidateDrafted(std::span<const double> q, int64_t drafted, const char* what) {
  const auto bad = [&](const std::string& why) { return BadDraft(what, why); };
  if (drafted < 0 || static_cast<std::size_t>(drafted) >= q.size()) {
    return bad(fmt::format("drafted token {} is not in [0, {})", drafted, q.size()));
  }
  if (q[static_cast<std::size_t>(drafted)] == 0) {
    return bad(fmt::format("drafted token {} has draft probability 0 (it cannot have been drawn)",
                           drafted));
  }
  return Error{};
}

Error ValidateDraft(std::span<const double> q, int64_t drafted, const char* what) {
  if (Error e = ValidateDraftRow(q, what); e.code != ErrorCode::kOk) return e;
  return ValidateDrafted(q, drafted, what);
}

long double AcceptanceProbability(std::span<const long double> p, std::span<const double> q,
                                  int64_t drafted) {
  const auto d = static_cast<std::size_t>(drafted);
  const long double qd = q[d];
  return p[d] >= qd ? 1.0L : p[d] / qd;
}

Expected<ChainLaw> ComputeChainLaw(std::span<const RowView> targets, std::span<const double> drafts,
                                   const Policies& policies) {
  if (targets.size() < 2) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("a chain needs k >= 1 drafted tokens and k + 1 target rows, got {} "
                             "target rows",
                             targets.size())};
  }
  ChainLaw law;
  law.k = targets.size() - 1;
  const std::size_t v = targets[0].vocab;
  if (drafts.size() != law.k * v) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{} draft probabilities for k = {} rows of {} tokens", drafts.size(),
                             law.k, v)};
  }
  for (std::size_t j = 0; j < targets.size(); ++j) {
    auto ref = ComputeReference(targets[j], policies, j);
    if (!ref.ok()) return ref.error();
    law.targets.push_back(std::move(*ref));
  }
  long double reach = 1;  // P(position j reached)
  for (std::size_t j = 0; j < law.k; ++j) {
    const std::span<const double> q = drafts.subspan(j * v, v);
    const std::vector<long double>& p = law.targets[j].probs;
    // The overlap and the positive part, summed separately: p - q is exact enough in long
    // double (q is a double, p carries 64 bits), and the residual's mass sum (p - q)+ equals
    // 1 - beta up to rounding, computed directly so that it does not cancel when beta is near 1.
    long double overlap = 0, positive = 0;
    std::vector<long double> r(v, 0.0L);
    for (std::size_t x = 0; x < v; ++x) {
      const long double qx = q[x];
      overlap += std::min(p[x], qx);
      // A difference within a double's rounding of p (q given in double from p itself, as in
      // p = q) is no residual: beyond 2^-50 of p, it is.
      if (p[x] - qx > 0x1p-50L * p[x]) {
        r[x] = p[x] - qx;
        positive += r[x];
      }
    }
    if (positive > 0) {
      for (long double& e : r) e /= positive;
    }
    law.acceptance.push_back(std::min(overlap, 1.0L));
    law.residual.push_back(std::move(r));
    law.accepted_count.push_back(reach * (1 - law.acceptance.back()));
    reach *= law.acceptance.back();
  }
  law.accepted_count.push_back(reach);
  return law;
}

}  // namespace sampcert

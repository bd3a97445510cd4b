// DET-1, DET-2 and BATCH-1 (SPEC.md section 10): same seed same tokens, another seed another
// stream, and a row's results independent of the rest of its batch.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "properties/case_check.h"
#include "sampcert/row_validation.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

// DET-2 applies where two independent 64-token streams of the reference collide with chance
// below 1e-12.
bool StreamsDistinguishable(const ReferenceDistribution& ref) {
  long double collide = 0;
  for (long double p : ref.probs) collide += p * p;
  // collide^64 by six exact-operation squarings (libm's pow may differ between machines, and
  // this decides which keys a case has).
  double c = static_cast<double>(collide);
  static_assert(kDrawsPerCase == 64);
  for (int i = 0; i < 6; ++i) c *= c;
  return c < 1e-12;
}

// The batch companions of a row: one plain, one reversed, with the next row ids.
std::pair<RowCase, RowCase> Companions(const RowCase& row) {
  RowCase a = row;
  a.temperature = 1.0f;
  a.top_k = 0;
  a.top_p = 1.0f;
  a.min_p = 0.0f;
  a.row_id = row.row_id + 1;
  RowCase c = Reversed(row);
  c.row_id = row.row_id + 2;
  return {a, c};
}

bool CompanionsValid(const RowCase& row, const Policies& pol) {
  // Validity is all that is needed here: ValidateRow, not a whole reference distribution.
  const auto [a, c] = Companions(row);
  return ValidateRow(a.view(), pol, 0).code == ErrorCode::kOk &&
         ValidateRow(c.view(), pol, 2).code == ErrorCode::kOk;
}

}  // namespace

std::vector<std::string> InvarianceKeys(const RowCase& row, const ReferenceDistribution& ref,
                                        const adapters::SamplerInfo& info) {
  std::vector<std::string> keys;
  if (info.policies.determinism != Determinism::kNone) keys.emplace_back("DET-1");
  if (StreamsDistinguishable(ref)) keys.emplace_back("DET-2");
  if (info.Has(SAMPCERT_CAP_BATCH) && CompanionsValid(row, info.policies)) {
    keys.emplace_back("BATCH-1");
  }
  return keys;
}

void CheckDeterminism(CaseContext& ctx) {
  const adapters::Batch batch = OneRow(ctx.row);
  if (ctx.sampler.info().policies.determinism != Determinism::kNone) {
    auto again = ctx.sampler.Sample(batch, ctx.seed, 0, kDrawsPerCase);
    ctx.Set("DET-1", again.ok() && *again == ctx.tokens,
            again.ok() ? "same seed and row id gave different tokens" : again.error().message);
  }
  if (!StreamsDistinguishable(ctx.ref)) return;
  // A sampler whose own stream does not vary draws from a degenerate distribution: that is
  // DIST-1's failure, and DET-2 cannot tell streams apart on it.
  const bool varies = std::any_of(ctx.tokens.begin(), ctx.tokens.end(),
                                  [&](int64_t t) { return t != ctx.tokens.front(); });
  if (!varies) {
    ctx.Set("DET-2", true);
    return;
  }
  auto other = ctx.sampler.Sample(batch, ctx.seed ^ 0x5bd1e995u, 0, kDrawsPerCase);
  ctx.Set("DET-2", other.ok() && *other != ctx.tokens,
          "a different seed gave the same 64 tokens (chance below 1e-12)");
}

void CheckBatch(CaseContext& ctx) {
  const adapters::SamplerInfo& info = ctx.sampler.info();
  if (!info.Has(SAMPCERT_CAP_BATCH) || !CompanionsValid(ctx.row, info.policies)) return;
  const auto [a, c] = Companions(ctx.row);
  const std::size_t v = ctx.row.vocab();
  const adapters::Batch three{ctx.row.dtype, v, {a.view(), ctx.row.view(), c.view()}};
  auto tb = ctx.sampler.Sample(three, ctx.seed, 0, kDrawsPerCase);
  bool same = tb.ok() && tb->size() == 3 * kDrawsPerCase &&
              std::equal(ctx.tokens.begin(), ctx.tokens.end(),
                         tb->begin() + static_cast<std::ptrdiff_t>(kDrawsPerCase));
  std::string why = tb.ok() ? "tokens differ inside a batch" : tb.error().message;
  if (same && ctx.probs) {
    auto pb = ctx.sampler.Probabilities(three);
    same = pb.ok() && pb->size() == 3 * v &&
           std::equal(ctx.probs->begin(), ctx.probs->end(),
                      pb->begin() + static_cast<std::ptrdiff_t>(v));
    if (!same) why = pb.ok() ? "probabilities differ inside a batch" : pb.error().message;
  }
  ctx.Set("BATCH-1", same, why);
}

}  // namespace sampcert::properties

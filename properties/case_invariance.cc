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

// RANGE-1 on draws beyond the case's own (a second seed, a batch's rows, its rows alone):
// every token of every call is checked.
void CheckRange(CaseContext& ctx, const std::vector<int64_t>& tokens, const std::string& where) {
  const std::size_t v = ctx.row.vocab();
  for (int64_t t : tokens) {
    if (t < 0 || static_cast<std::size_t>(t) >= v) {
      ctx.Fail("RANGE-1", fmt::format("token id {} outside [0, {}) ({})", t, v, where));
      return;
    }
  }
}

// BATCH-1's probabilities: every row of the batch against the same row alone; "" if equal.
std::string BatchProbabilitiesDiffer(CaseContext& ctx, const adapters::Batch& three,
                                     const RowCase* const (&rows)[3]) {
  const std::size_t v = ctx.row.vocab();
  auto pb = ctx.sampler.Probabilities(three);
  if (!pb.ok()) return pb.error().message;
  if (pb->size() != 3 * v) return "probabilities differ inside a batch (wrong count)";
  for (std::size_t r = 0; r < 3; ++r) {
    std::vector<double> alone = *ctx.probs;
    if (r != 1) {
      auto p = ctx.sampler.Probabilities(OneRow(*rows[r]));
      if (!p.ok()) return p.error().message;
      alone = std::move(*p);
    }
    if (alone.size() != v ||
        !std::equal(alone.begin(), alone.end(), pb->begin() + static_cast<std::ptrdiff_t>(r * v))) {
      return fmt::format(
          "probabilities differ inside a batch (row {} of 3 against the same row alone)", r);
    }
  }
  return {};
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
    if (again.ok()) CheckRange(ctx, *again, "drawn again with the same seed (DET-1)");
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
  if (other.ok()) CheckRange(ctx, *other, "drawn with another seed (DET-2)");
  ctx.Set("DET-2", other.ok() && *other != ctx.tokens,
          "a different seed gave the same 64 tokens (chance below 1e-12)");
}

void CheckBatch(CaseContext& ctx) {
  const adapters::SamplerInfo& info = ctx.sampler.info();
  if (!info.Has(SAMPCERT_CAP_BATCH) || !CompanionsValid(ctx.row, info.policies)) return;
  const auto [a, c] = Companions(ctx.row);
  const std::size_t v = ctx.row.vocab();
  const RowCase* rows[3] = {&a, &ctx.row, &c};
  const adapters::Batch three{ctx.row.dtype, v, {a.view(), ctx.row.view(), c.view()}};
  auto tb = ctx.sampler.Sample(three, ctx.seed, 0, kDrawsPerCase);
  if (!tb.ok() || tb->size() != 3 * kDrawsPerCase) {
    ctx.Set("BATCH-1", false,
            tb.ok() ? "a 3-row batch returned the wrong number of tokens" : tb.error().message);
    return;
  }
  CheckRange(ctx, *tb, "drawn in a 3-row batch (BATCH-1)");
  // Every row of the batch against the same row alone: the case's own draws for the middle
  // row, one single-row call for each companion (a batch can reorder rows; one row cannot).
  std::string why;
  for (std::size_t r = 0; r < 3 && why.empty(); ++r) {
    std::vector<int64_t> alone = ctx.tokens;
    if (r != 1) {
      auto s = ctx.sampler.Sample(OneRow(*rows[r]), ctx.seed, 0, kDrawsPerCase);
      if (!s.ok()) {
        why = s.error().message;
        break;
      }
      CheckRange(ctx, *s, fmt::format("row {} of the batch drawn alone (BATCH-1)", r));
      alone = std::move(*s);
    }
    if (!std::equal(alone.begin(), alone.end(),
                    tb->begin() + static_cast<std::ptrdiff_t>(r * kDrawsPerCase))) {
      why = fmt::format("tokens differ inside a batch (row {} of 3 against the same row alone)", r);
    }
  }
  if (why.empty() && ctx.probs) why = BatchProbabilitiesDiffer(ctx, three, rows);
  ctx.Set("BATCH-1", why.empty(), why);
}

}  // namespace sampcert::properties

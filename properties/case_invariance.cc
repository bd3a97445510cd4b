// DET-1, DET-2, DET-3, BATCH-1 and BATCH-2 (SPEC.md section 10): same seed same tokens, another
// seed or row id another stream, and a row's results independent of the rest of its batch: of
// two plain companions (BATCH-1), and of batchmates with other parameters, of its duplicates, of
// the order of the batch and of its size across kernels' dispatch thresholds (BATCH-2).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "properties/case_check.h"
#include "properties/coverage.h"
#include "sampcert/row_validation.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {

bool SameProbabilities(std::span<const double> a, std::span<const double> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); });
}

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
  static_cast<RowParams&>(a) = RowParams{};  // every parameter at its default (off)
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
        !SameProbabilities(alone, std::span<const double>(*pb).subspan(r * v, v))) {
      return fmt::format(
          "probabilities differ inside a batch (row {} of 3 against the same row alone)", r);
    }
  }
  return {};
}

// BATCH-2 runs on rows of at most this many tokens: its largest batch has 257 rows.
constexpr std::size_t kBatch2MaxVocab = 1024;
// The batch sizes of BATCH-2, each one past a size where kernels switch paths (8, 32, 128, 256).
// A case runs one of them, by its row id (a quarter of the rows each): all four on every row
// made BATCH-2 the largest cost of a deterministic item (444 rows a case, 129 now), which an
// interpreted sampler pays row by row.
constexpr std::array<std::size_t, 4> kBatch2Sizes = {9, 33, 129, 257};

// A batchmate of BATCH-2: the case's row under other parameters, with its own row id.
struct Batchmate {
  RowCase row;
  std::string label;
};

// BATCH-2's batchmates: the row's logits at T = 0, at top_k = 1, under a one-token mask, reversed
// at T = 1, at top_p = 0.5 and at min_p = 0.5, each where the declaration has the capability
// and the mate is valid; row ids follow the row's.
std::vector<Batchmate> Batchmates(const RowCase& row, const adapters::SamplerInfo& info) {
  std::vector<Batchmate> mates;
  auto add = [&](uint32_t cap, const char* label, auto&& change) {
    if (cap != 0 && !info.Has(cap)) return;
    RowCase m = row;
    change(m);
    m.row_id = row.row_id + 1 + mates.size();
    if (ValidateRow(m.view(), info.policies, 0).code == ErrorCode::kOk) {
      mates.push_back({std::move(m), label});
    }
  };
  add(SAMPCERT_CAP_TEMPERATURE_ZERO, "T = 0", [](RowCase& m) { m.temperature = 0.0f; });
  add(SAMPCERT_CAP_TOP_K, "top_k = 1", [](RowCase& m) { m.top_k = 1; });
  add(SAMPCERT_CAP_MASK, "a one-token mask", [](RowCase& m) {
    // The largest logit that is not NaN (the last token if none is: then the mate is invalid).
    std::size_t at = m.vocab() - 1;
    for (std::size_t i = 0; i < m.vocab(); ++i) {
      if (!std::isnan(m.Logit(i)) && (std::isnan(m.Logit(at)) || m.Logit(i) > m.Logit(at))) at = i;
    }
    m.mask.assign(m.vocab(), 0);
    m.mask[at] = 1;
  });
  add(0, "reversed at T = 1", [](RowCase& m) {
    m = Reversed(m);
    static_cast<RowParams&>(m) = RowParams{};  // every parameter at its default (off)
  });
  add(SAMPCERT_CAP_TOP_P, "top_p = 0.5", [](RowCase& m) { m.top_p = 0.5f; });
  add(SAMPCERT_CAP_MIN_P, "min_p = 0.5", [](RowCase& m) { m.min_p = 0.5f; });
  return mates;
}

// One batch of BATCH-2: its slots, each the case's row (nullptr) or a batchmate, and its name.
struct MixedBatch {
  std::string name;
  std::vector<const Batchmate*> slots;
};

// The batches: the row between every batchmate and its own duplicate, the same rows in
// another order, and (`sized`) the row's size of kBatch2Sizes with the row at its first, middle
// and last slot and the batchmates round-robin between.
std::vector<MixedBatch> MixedBatches(const std::vector<Batchmate>& mates, uint64_t row_id,
                                     bool sized) {
  std::vector<MixedBatch> batches;
  MixedBatch mixed{
      fmt::format("{} rows: the row, every batchmate, the row again", mates.size() + 2), {nullptr}};
  for (const Batchmate& m : mates) mixed.slots.push_back(&m);
  mixed.slots.push_back(nullptr);
  MixedBatch permuted{
      fmt::format("{} rows: the batchmates in reverse, the row twice", mates.size() + 2), {}};
  for (auto it = mates.rbegin(); it != mates.rend(); ++it) permuted.slots.push_back(&*it);
  permuted.slots.insert(permuted.slots.end(), {nullptr, nullptr});
  batches.push_back(std::move(mixed));
  batches.push_back(std::move(permuted));
  if (!sized) return batches;
  const std::size_t size = kBatch2Sizes[row_id % kBatch2Sizes.size()];
  MixedBatch b{fmt::format("{} rows", size), std::vector<const Batchmate*>(size, nullptr)};
  for (std::size_t i = 1; i + 1 < size && !mates.empty(); ++i) {
    if (i != size / 2) b.slots[i] = &mates[i % mates.size()];
  }
  batches.push_back(std::move(b));
  return batches;
}

std::string SlotName(const MixedBatch& b, std::size_t slot) {
  return fmt::format(
      "slot {} ({}) of a batch of {}", slot,
      b.slots[slot] == nullptr ? "the row" : "batchmate with " + b.slots[slot]->label, b.name);
}

// BATCH-2 on one batch: its tokens and probabilities slot by slot against each row alone; ""
// if equal.
std::string MixedBatchDiffers(CaseContext& ctx, const MixedBatch& b,
                              const std::vector<Batchmate>& mates,
                              const std::vector<std::vector<int64_t>>& alone_tokens,
                              const std::vector<std::vector<double>>& alone_probs) {
  const std::size_t v = ctx.row.vocab();
  adapters::Batch batch{ctx.row.dtype, v, {}};
  for (const Batchmate* m : b.slots)
    batch.rows.push_back(m == nullptr ? ctx.row.view() : m->row.view());
  auto index = [&](const Batchmate* m) {
    return m == nullptr ? std::size_t{0} : static_cast<std::size_t>(m - mates.data()) + 1;
  };
  auto tokens = ctx.sampler.Sample(batch, ctx.seed, 0, kDrawsPerCase);
  if (!tokens.ok()) return fmt::format("a batch of {}: {}", b.name, tokens.error().message);
  if (tokens->size() != b.slots.size() * kDrawsPerCase) {
    return fmt::format("a batch of {} returned the wrong number of tokens", b.name);
  }
  CheckRange(ctx, *tokens, fmt::format("drawn in a batch of {} (BATCH-2)", b.name));
  for (std::size_t s = 0; s < b.slots.size(); ++s) {
    if (!std::equal(alone_tokens[index(b.slots[s])].begin(), alone_tokens[index(b.slots[s])].end(),
                    tokens->begin() + static_cast<std::ptrdiff_t>(s * kDrawsPerCase))) {
      return fmt::format("tokens differ in {} from the same row alone", SlotName(b, s));
    }
  }
  if (alone_probs.empty()) return {};
  auto probs = ctx.sampler.Probabilities(batch);
  if (!probs.ok()) return fmt::format("a batch of {}: {}", b.name, probs.error().message);
  if (probs->size() != b.slots.size() * v) {
    return fmt::format("a batch of {} returned the wrong number of probabilities", b.name);
  }
  for (std::size_t s = 0; s < b.slots.size(); ++s) {
    const std::vector<double>& alone = alone_probs[index(b.slots[s])];
    if (alone.size() != v ||
        !SameProbabilities(alone, std::span<const double>(*probs).subspan(s * v, v))) {
      return fmt::format("probabilities differ in {} from the same row alone", SlotName(b, s));
    }
  }
  return {};
}

bool Batch2Applies(const RowCase& row, const adapters::SamplerInfo& info) {
  return info.Has(SAMPCERT_CAP_BATCH) && row.vocab() <= kBatch2MaxVocab;
}

}  // namespace

std::vector<std::string> InvarianceKeys(const RowCase& row, const ReferenceDistribution& ref,
                                        const adapters::SamplerInfo& info) {
  std::vector<std::string> keys;
  if (info.policies.determinism != Determinism::kNone) keys.emplace_back("DET-1");
  if (StreamsDistinguishable(ref)) {
    keys.emplace_back("DET-2");
    keys.emplace_back("DET-3");
  }
  if (info.Has(SAMPCERT_CAP_BATCH) && CompanionsValid(row, info.policies)) {
    keys.emplace_back("BATCH-1");
  }
  if (Batch2Applies(row, info)) keys.emplace_back("BATCH-2");
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
    ctx.Set("DET-3", true);
    return;
  }
  auto other = ctx.sampler.Sample(batch, ctx.seed ^ 0x5bd1e995u, 0, kDrawsPerCase);
  if (other.ok()) CheckRange(ctx, *other, "drawn with another seed (DET-2)");
  ctx.Set("DET-2", other.ok() && *other != ctx.tokens,
          other.ok() ? "a different seed gave the same 64 tokens (chance below 1e-12)"
                     : other.error().message);
  // DET-3: the next row id, same seed (a stream keyed by the seed alone, or by the batch slot,
  // repeats).
  RowCase next = ctx.row;
  next.row_id += 1;
  auto next_row = ctx.sampler.Sample(OneRow(next), ctx.seed, 0, kDrawsPerCase);
  if (next_row.ok()) CheckRange(ctx, *next_row, "drawn with the next row id (DET-3)");
  ctx.Set("DET-3", next_row.ok() && *next_row != ctx.tokens,
          next_row.ok() ? fmt::format("row ids {} and {} gave the same 64 tokens under one seed "
                                      "(chance below 1e-12)",
                                      ctx.row.row_id, next.row_id)
                        : next_row.error().message);
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

void CheckMixedBatches(CaseContext& ctx) {
  const adapters::SamplerInfo& info = ctx.sampler.info();
  if (!Batch2Applies(ctx.row, info)) return;
  // Each row alone: index 0 the case's row (its own draws and probabilities), i the mate i - 1.
  // A batchmate the sampler fails alone is left out: that is its own row's failure (VALID-1,
  // LIM-1), not the batch's.
  std::vector<Batchmate> mates;
  std::vector<std::vector<int64_t>> alone_tokens = {ctx.tokens};
  std::vector<std::vector<double>> alone_probs;
  if (ctx.probs) alone_probs.push_back(*ctx.probs);
  for (Batchmate& m : Batchmates(ctx.row, info)) {
    auto t = ctx.sampler.Sample(OneRow(m.row), ctx.seed, 0, kDrawsPerCase);
    if (!t.ok()) continue;
    CheckRange(ctx, *t, fmt::format("batchmate with {} drawn alone (BATCH-2)", m.label));
    std::optional<std::vector<double>> p;
    if (ctx.probs) {
      auto got = ctx.sampler.Probabilities(OneRow(m.row));
      if (!got.ok()) continue;
      p = std::move(*got);
    }
    alone_tokens.push_back(std::move(*t));
    if (p) alone_probs.push_back(std::move(*p));
    mates.push_back(std::move(m));
  }
  // A design row runs the mixed, duplicated and permuted batches only: the sized batches (up to
  // 257 rows) meet the generated rows, a quarter of them each, and on the design's rows they
  // cost an interpreted sampler most of its run (the batch axis is covered, not designed: COV-1).
  const bool sized = ctx.row.family != kDesignFamily;
  std::string why;
  for (const MixedBatch& b : MixedBatches(mates, ctx.row.row_id, sized)) {
    if (!(why = MixedBatchDiffers(ctx, b, mates, alone_tokens, alone_probs)).empty()) break;
  }
  ctx.Set("BATCH-2", why.empty(), why);
}

}  // namespace sampcert::properties

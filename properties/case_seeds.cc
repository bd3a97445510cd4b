// SEED-1, SEED-2 and SEED-3 (SPEC.md section 17): per-request seeds. A row with its own seed
// draws the same 64 tokens alone under two call seeds and in every mixed batch (beside unseeded
// rows, rows seeded otherwise and rows of the call's seed, at several slots and batch sizes);
// two rows of one seed and one row id in a batch draw the same tokens; an unseeded row draws
// inside its support. Exact: no statistics.
#include <fmt/format.h>

#include <array>

#include "properties/case_check.h"
#include "sampcert/sampler_abi.h"

namespace sampcert::properties {
namespace {

// The batches' rows are the case's row under other seeds: at most this many tokens (as BATCH-2).
constexpr std::size_t kSeedMaxVocab = 1024;

bool SeedsApply(const RowCase& row, const adapters::SamplerInfo& info) {
  return info.Has(SAMPCERT_CAP_SEEDS) && info.Has(SAMPCERT_CAP_BATCH) &&
         info.policies.determinism != Determinism::kNone && row.vocab() <= kSeedMaxVocab;
}

// The slots of a seeded batch: the seeded row ('R'), an unseeded copy ('U'), a copy seeded
// otherwise: another seed, same row id ('O'), the same seed, another row id ('I'), or a copy of
// the call's seed ('C').
struct SeedBatch {
  std::string_view slots;
  uint64_t call_seed_xor;  // the call's seed is the case's xor this
};
constexpr std::array<SeedBatch, 4> kSeedBatches = {{
    {"UR", 0},
    {"ORUR", 0},  // SEED-2: R twice
    {"CIUOR", 0},
    {"UOCURIURC", 0x2545f4914f6cdd1dULL},  // SEED-2: R twice; another call seed
}};

}  // namespace

std::vector<std::string> SeedKeys(const RowCase& row, const adapters::SamplerInfo& info) {
  if (!SeedsApply(row, info)) return {};
  return {"SEED-1", "SEED-2", "SEED-3"};
}

void CheckSeeds(CaseContext& ctx) {
  if (!SeedsApply(ctx.row, ctx.sampler.info())) return;
  const std::size_t v = ctx.row.vocab();
  const uint64_t own = ctx.seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
  RowCase seeded = ctx.row;
  seeded.seed_mode = kSeedOwn;
  seeded.seed = own;
  auto copy = [&](int64_t mode, uint64_t seed, uint64_t row_id) {
    RowCase m = ctx.row;
    m.seed_mode = mode;
    m.seed = seed;
    m.row_id = row_id;
    return m;
  };
  // Unseeded copies get row ids of their own (1000 + their slot); the others are fixed.
  const RowCase other_seed = copy(kSeedOwn, own + 1, ctx.row.row_id);
  const RowCase other_id = copy(kSeedOwn, own, ctx.row.row_id + 1);
  const RowCase call = copy(kSeedCall, 0, ctx.row.row_id + 2);

  // SEED-1, first: alone under the case's seed and another.
  auto alone = ctx.sampler.Sample(OneRow(seeded), ctx.seed, 0, kDrawsPerCase);
  if (!alone.ok() || alone->size() != kDrawsPerCase) {
    ctx.Set("SEED-1", false,
            alone.ok() ? "a seeded row alone returned the wrong number of tokens"
                       : "a seeded row alone: " + alone.error().message);
    return;
  }
  auto again = ctx.sampler.Sample(OneRow(seeded), ctx.seed ^ 0x5bd1e995u, 0, kDrawsPerCase);
  if (!again.ok() || *again != *alone) {
    ctx.Set("SEED-1", false,
            again.ok() ? fmt::format("a row with its own seed {} drew other tokens alone under "
                                     "call seeds {} and {}",
                                     own, ctx.seed, ctx.seed ^ 0x5bd1e995u)
                       : "a seeded row alone: " + again.error().message);
    return;
  }
  std::string seed1, seed2, seed3;
  for (const SeedBatch& b : kSeedBatches) {
    std::vector<RowCase> rows;
    for (std::size_t s = 0; s < b.slots.size(); ++s) {
      switch (b.slots[s]) {
        case 'R': rows.push_back(seeded); break;
        case 'U': rows.push_back(copy(kSeedUnseeded, 0, 1000 + s)); break;
        case 'O': rows.push_back(other_seed); break;
        case 'I': rows.push_back(other_id); break;
        default: rows.push_back(call); break;
      }
    }
    adapters::Batch batch{ctx.row.dtype, v, {}};
    for (const RowCase& r : rows) batch.rows.push_back(r.view());
    const uint64_t call_seed = ctx.seed ^ b.call_seed_xor;
    const std::string name = fmt::format(
        "a batch of {} ({}; R the seeded row, U unseeded, O "
        "another seed, I another row id, C the call's seed)",
        b.slots.size(), b.slots);
    auto tokens = ctx.sampler.Sample(batch, call_seed, 0, kDrawsPerCase);
    if (!tokens.ok() || tokens->size() != b.slots.size() * kDrawsPerCase) {
      seed1 = tokens.ok() ? name + " returned the wrong number of tokens"
                          : name + ": " + tokens.error().message;
      break;
    }
    auto slot = [&](std::size_t s) {
      return std::vector<int64_t>(
          tokens->begin() + static_cast<std::ptrdiff_t>(s * kDrawsPerCase),
          tokens->begin() + static_cast<std::ptrdiff_t>((s + 1) * kDrawsPerCase));
    };
    std::ptrdiff_t first_r = -1;
    for (std::size_t s = 0; s < b.slots.size(); ++s) {
      const std::vector<int64_t> got = slot(s);
      if (b.slots[s] == 'R') {
        if (first_r >= 0 && seed2.empty() && got != slot(static_cast<std::size_t>(first_r))) {
          seed2 = fmt::format(
              "slots {} and {} of {}, one seed and one row id, drew different "
              "tokens",
              first_r, s, name);
        }
        if (first_r < 0) first_r = static_cast<std::ptrdiff_t>(s);
        if (seed1.empty() && got != *alone) {
          seed1 = fmt::format(
              "the row with its own seed {} drew other tokens at slot {} of {} "
              "(call seed {}) than alone",
              own, s, name, call_seed);
        }
      } else if (b.slots[s] == 'U' && seed3.empty()) {
        for (int64_t t : got) {
          if (t < 0 || static_cast<std::size_t>(t) >= v ||
              ctx.ref.keep[static_cast<std::size_t>(t)] == KeepClass::kOutsideSupport ||
              ctx.ref.keep[static_cast<std::size_t>(t)] == KeepClass::kMustDrop) {
            seed3 = fmt::format(
                "the unseeded row at slot {} of {} drew token {}, outside the "
                "row's support",
                s, name, t);
            break;
          }
        }
      }
    }
    if (!seed1.empty()) break;
  }
  ctx.Set("SEED-1", seed1.empty(), seed1);
  if (seed1.empty() || !seed2.empty()) ctx.Set("SEED-2", seed2.empty(), seed2);
  if (seed1.empty() || !seed3.empty()) ctx.Set("SEED-3", seed3.empty(), seed3);
}

}  // namespace sampcert::properties

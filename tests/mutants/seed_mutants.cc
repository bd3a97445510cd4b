#include "tests/mutants/seed_mutants.h"

#include <vector>

#include "adapters/abi_conversions.h"
#include "adapters/builtin_adapter.h"
#include "sampcert/canonical_draw.h"
#include "sampcert/reference_distribution.h"
#include "tests/mutants/exact_mutant.h"

namespace sampcert::mutants {
namespace {

using M = SeedMutant;

constexpr SeedMutantInfo kCatalogue[] = {
    {M::kNone, "none", "the correct control"},
    {M::kBatchGenerator, "batch_generator",
     "a seeded row reads a batchmate's generator: when any request of the batch is unseeded, "
     "every row draws from the engine's global generator (the call's seed here); a seeded "
     "request is reproducible only in batches of seeded requests"},
    {M::kFirstSeedShared, "first_seed_shared",
     "one generator per batch, seeded from the first seeded request: a seeded request's tokens "
     "change when another seeded request joins ahead of it"},
    {M::kSeedIgnored, "seed_ignored",
     "the per-request seed is accepted and ignored: every row draws by the call's seed"},
    {M::kSlotKeyed, "slot_keyed",
     "a seeded row's stream keyed by its slot in the batch instead of its row id (per-request "
     "generators indexed by output slot)"},
};

template <SeedMutant kMutant>
class SeedMutantSampler : public ExactMutant<SeedMutantSampler<kMutant>> {
 public:
  static constexpr uint32_t kCapabilities =
      SAMPCERT_CAP_F32 | SAMPCERT_CAP_F16 | SAMPCERT_CAP_BF16 | SAMPCERT_CAP_MASK |
      SAMPCERT_CAP_TEMPERATURE_ZERO | SAMPCERT_CAP_PROBABILITIES | SAMPCERT_CAP_BATCH |
      SAMPCERT_CAP_SEEDS;
  static Policies DeclaredPolicies() { return Policies{}; }
  static void Describe(sampcert_sampler_info* info) {
    info->name = "seed_mutant";
    info->version = "1";
    adapters::PoliciesToInfo(DeclaredPolicies(), info);
    info->thread_safe = 1;
  }
  Error Sample(const sampcert_batch& batch, uint64_t seed, uint64_t first_draw,
               uint64_t draws_per_row, int64_t* out) {
    bool any_unseeded = false;
    const sampcert_row* first_seeded = nullptr;
    for (std::size_t r = 0; r < batch.num_rows; ++r) {
      any_unseeded |= batch.rows[r].seed_mode == kSeedUnseeded;
      if (first_seeded == nullptr && batch.rows[r].seed_mode == kSeedOwn) {
        first_seeded = &batch.rows[r];
      }
    }
    ++calls_;  // the engine's own generator for unseeded rows advances per call
    for (std::size_t r = 0; r < batch.num_rows; ++r) {
      if (Error e = Prepare(batch, r); e.code != ErrorCode::kOk) return e;
      const sampcert_row& row = batch.rows[r];
      uint64_t key = seed, id = row.row_id;
      if (row.seed_mode == kSeedUnseeded) key = seed ^ (calls_ * 0x9e3779b97f4a7c15ULL);
      if (row.seed_mode == kSeedOwn) {
        key = row.seed;
        if (Is(M::kBatchGenerator) && any_unseeded) key = seed;  // DEFECT
        if (Is(M::kFirstSeedShared)) key = first_seeded->seed;   // DEFECT
        if (Is(M::kSeedIgnored)) key = seed;                     // DEFECT
        if (Is(M::kSlotKeyed)) id = r;                           // DEFECT
      }
      for (uint64_t j = 0; j < draws_per_row; ++j) {
        out[r * draws_per_row + j] = this->Token(CanonicalUniform(key, id, first_draw + j));
      }
    }
    return Error{};
  }

 private:
  static constexpr bool Is(SeedMutant m) { return kMutant == m; }

  friend class ExactMutant<SeedMutantSampler<kMutant>>;
  Error Prepare(const sampcert_batch& batch, std::size_t r) {
    const RowView row = adapters::ToRowView(batch, r);
    Expected<ReferenceDistribution> ref = ComputeReference(row, DeclaredPolicies(), r);
    if (!ref.ok()) return ref.error();
    this->p_.assign(ref->probs.size(), 0.0);
    for (std::size_t i = 0; i < this->p_.size(); ++i) {
      this->p_[i] = static_cast<double>(ref->probs[i]);
    }
    return Error{};
  }

  uint64_t calls_ = 0;
};

template <SeedMutant kMutant>
const sampcert_sampler_api* Api() {
  return adapters::BuiltinApi<SeedMutantSampler<kMutant>>::Table();
}

}  // namespace

std::span<const SeedMutantInfo> SeedMutantCatalogue() { return kCatalogue; }

const sampcert_sampler_api* SeedMutantApi(SeedMutant mutant) {
  switch (mutant) {
    case M::kNone: return Api<M::kNone>();
    case M::kBatchGenerator: return Api<M::kBatchGenerator>();
    case M::kFirstSeedShared: return Api<M::kFirstSeedShared>();
    case M::kSeedIgnored: return Api<M::kSeedIgnored>();
    case M::kSlotKeyed: return Api<M::kSlotKeyed>();
  }
  return nullptr;
}

}  // namespace sampcert::mutants

#include "tests/mutants/packed_mask_mutants.h"

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "adapters/abi_conversions.h"
#include "adapters/builtin_adapter.h"
#include "sampcert/packed_mask.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/row_validation.h"
#include "tests/mutants/exact_mutant.h"

namespace sampcert::mutants {
namespace {

using M = PackedMaskMutant;
constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr PackedMaskMutantInfo kCatalogue[] = {
    {M::kNone, "none", "the correct control"},
    {M::kBitOrderReversed, "bit_order_reversed",
     "token 32 j + i read from bit 31 - i of word j: the bitmask read most significant bit "
     "first, as a bit-string or a big-endian bitset would"},
    {M::kTailWordSkipped, "tail_word_skipped",
     "the mask applied by floor(V / 32) whole words (a kernel launched over V / 32 word blocks): "
     "the last V mod 32 tokens are never masked"},
    {M::kPaddingCounted, "padding_counted",
     "the allowed tokens counted by a popcount over whole words, so that the padding bits of the "
     "last word count: a row whose every token is masked looks non-empty and is sampled"},
};

template <PackedMaskMutant kMutant>
class PackedMaskMutantSampler : public ExactMutant<PackedMaskMutantSampler<kMutant>> {
 public:
  static constexpr uint32_t kCapabilities =
      SAMPCERT_CAP_F32 | SAMPCERT_CAP_F16 | SAMPCERT_CAP_BF16 | SAMPCERT_CAP_MASK |
      SAMPCERT_CAP_TEMPERATURE_ZERO | SAMPCERT_CAP_PROBABILITIES | SAMPCERT_CAP_BATCH |
      SAMPCERT_CAP_PACKED_MASK;
  static Policies DeclaredPolicies() { return Policies{}; }
  static void Describe(sampcert_sampler_info* info) {
    info->name = "packed_mask_mutant";
    info->version = "1";
    adapters::PoliciesToInfo(DeclaredPolicies(), info);
    info->thread_safe = 1;
  }

 private:
  static constexpr bool Is(PackedMaskMutant m) { return kMutant == m; }

  // Whether the row allows token i, as this sampler reads the words.
  static bool Allowed(const RowView& row, std::size_t i) {
    if (row.packed_mask == nullptr) return row.Allowed(i);  // bytes, or no mask
    const std::size_t word = i / 32, bit = i % 32;
    if (Is(M::kTailWordSkipped) && word >= row.vocab / 32) return true;  // DEFECT
    if (Is(M::kBitOrderReversed)) return ((row.packed_mask[word] >> (31 - bit)) & 1u) != 0;
    return PackedAllowed(row.packed_mask, i);
  }

  // Whether the support may be empty: every token masked. DEFECT (kPaddingCounted): a popcount
  // over the whole words, padding bits included.
  static bool AllMasked(const RowView& row) {
    if (Is(M::kPaddingCounted) && row.packed_mask != nullptr) {
      int set = 0;
      for (std::size_t w = 0; w < PackedMaskWords(row.vocab); ++w) {
        set += std::popcount(row.packed_mask[w]);
      }
      return set == 0;
    }
    for (std::size_t i = 0; i < row.vocab; ++i) {
      if (Allowed(row, i)) return false;
    }
    return true;
  }

  friend class ExactMutant<PackedMaskMutantSampler<kMutant>>;
  Error Prepare(const sampcert_batch& batch, std::size_t r) {
    const RowView row = adapters::ToRowView(batch, r);
    if (Error e = ValidateRowParameters(row, DeclaredPolicies(), r); e.code != ErrorCode::kOk) {
      return e;
    }
    if (AllMasked(row)) return ValidateRow(row, DeclaredPolicies(), r);  // EmptySupport
    const std::size_t v = row.vocab;
    std::vector<double> x(v);
    for (std::size_t i = 0; i < v; ++i) {
      x[i] = Allowed(row, i) ? static_cast<double>(DecodeLogit(row.dtype, row.logits, i)) : -kInf;
    }
    this->FromLogits(x, row.temperature, row.temperature);
    return Error{};
  }
};

template <PackedMaskMutant kMutant>
const sampcert_sampler_api* Api() {
  return adapters::BuiltinApi<PackedMaskMutantSampler<kMutant>>::Table();
}

}  // namespace

std::span<const PackedMaskMutantInfo> PackedMaskMutantCatalogue() { return kCatalogue; }

const sampcert_sampler_api* PackedMaskMutantApi(PackedMaskMutant mutant) {
  switch (mutant) {
    case M::kNone: return Api<M::kNone>();
    case M::kBitOrderReversed: return Api<M::kBitOrderReversed>();
    case M::kTailWordSkipped: return Api<M::kTailWordSkipped>();
    case M::kPaddingCounted: return Api<M::kPaddingCounted>();
  }
  return nullptr;
}

}  // namespace sampcert::mutants

#include "tests/mutants/bias_mutants.h"

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <vector>

#include "adapters/abi_conversions.h"
#include "adapters/builtin_adapter.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/row_validation.h"
#include "tests/mutants/exact_mutant.h"

namespace sampcert::mutants {
namespace {

using M = BiasMutant;
constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr BiasMutantInfo kCatalogue[] = {
    {M::kNone, "none", "the correct control"},
    {M::kAfterTemperature, "after_temperature",
     "the bias added to the temperature-scaled logits (a logits processor run after the "
     "temperature warper), so its effect grows as T falls"},
    {M::kNaiveInfinities, "naive_infinities",
     "the bias added as IEEE arithmetic adds it, bans included: a -inf bias on a +inf logit and "
     "a +inf bias on a -inf logit are NaN, which the softmax spreads"},
    {M::kSumInDtype, "sum_in_dtype",
     "the biased logits stored in the logits' own dtype (a bias tensor added in place in f16 or "
     "bf16, or in float for f32), so a large bias overflows to +inf"},
    {M::kMinTokensOffByOne, "min_tokens_off_by_one",
     "the end-of-sequence id banned while the output length is <= min_tokens instead of <, one "
     "step too long"},
};

template <BiasMutant kMutant>
class BiasMutantSampler : public ExactMutant<BiasMutantSampler<kMutant>> {
 public:
  static constexpr uint32_t kCapabilities =
      SAMPCERT_CAP_F32 | SAMPCERT_CAP_F16 | SAMPCERT_CAP_BF16 | SAMPCERT_CAP_MASK |
      SAMPCERT_CAP_TEMPERATURE_ZERO | SAMPCERT_CAP_PROBABILITIES | SAMPCERT_CAP_BATCH |
      SAMPCERT_CAP_LOGIT_BIAS | SAMPCERT_CAP_MIN_TOKENS;
  static Policies DeclaredPolicies() { return Policies{}; }
  static void Describe(sampcert_sampler_info* info) {
    info->name = "bias_mutant";
    info->version = "1";
    adapters::PoliciesToInfo(DeclaredPolicies(), info);
    info->thread_safe = 1;
  }

 private:
  static constexpr bool Is(BiasMutant m) { return kMutant == m; }

  // x + b as the row's dtype holds it (kSumInDtype's defect).
  static double InDtype(DType dtype, double v) {
    switch (dtype) {
      case DType::kF32: return static_cast<float>(v);
      case DType::kF16: return static_cast<double>(Eigen::half(static_cast<float>(v)));
      case DType::kBF16: return static_cast<double>(Eigen::bfloat16(static_cast<float>(v)));
    }
    return v;
  }

  // BIAS-1, BIAS-2 on x (masked tokens are -inf already).
  static void Bias(const RowView& row, std::vector<double>& x) {
    for (std::size_t j = 0; j < row.num_bias; ++j) {
      const std::size_t t = static_cast<std::size_t>(row.bias_tokens[j]);
      const double b = row.bias_values[j];
      if (Is(M::kNaiveInfinities)) {  // DEFECT: no special case for the infinities
        x[t] += b;
        continue;
      }
      if (b == -kInf) {
        x[t] = -kInf;  // a ban: outside the support, whatever the logit
      } else if (std::isfinite(x[t])) {
        x[t] += b;
        if (Is(M::kSumInDtype)) x[t] = InDtype(row.dtype, x[t]);  // DEFECT: rounded to the dtype
      }
    }
  }

  friend class ExactMutant<BiasMutantSampler<kMutant>>;
  Error Prepare(const sampcert_batch& batch, std::size_t r) {
    const RowView row = adapters::ToRowView(batch, r);
    if (Error e = ValidateRow(row, DeclaredPolicies(), r); e.code != ErrorCode::kOk) return e;
    const std::size_t v = row.vocab;
    std::vector<double> x(v);
    for (std::size_t i = 0; i < v; ++i) {
      const bool allowed = row.mask == nullptr || row.mask[i] != 0;
      x[i] = allowed ? static_cast<double>(DecodeLogit(row.dtype, row.logits, i)) : -kInf;
    }
    const double t = row.temperature;
    // DEFECT (kAfterTemperature): the logits scaled before the bias, and not after.
    if (Is(M::kAfterTemperature) && t > 0) {
      for (double& e : x) e /= t;
    }
    Bias(row, x);
    // MINLEN-1. DEFECT (kMinTokensOffByOne): <= instead of <.
    const std::size_t outputs = row.num_output_tokens;
    const bool eos_banned =
        row.min_tokens > 0 &&
        (Is(M::kMinTokensOffByOne) ? outputs <= static_cast<std::size_t>(row.min_tokens)
                                   : outputs < static_cast<std::size_t>(row.min_tokens));
    if (eos_banned) x[static_cast<std::size_t>(row.eos_token_id)] = -kInf;
    this->FromLogits(x, t, Is(M::kAfterTemperature) ? 1.0 : t);
    return Error{};
  }
};

template <BiasMutant kMutant>
const sampcert_sampler_api* Api() {
  return adapters::BuiltinApi<BiasMutantSampler<kMutant>>::Table();
}

}  // namespace

std::span<const BiasMutantInfo> BiasMutantCatalogue() { return kCatalogue; }

const sampcert_sampler_api* BiasMutantApi(BiasMutant mutant) {
  switch (mutant) {
    case M::kNone: return Api<M::kNone>();
    case M::kAfterTemperature: return Api<M::kAfterTemperature>();
    case M::kNaiveInfinities: return Api<M::kNaiveInfinities>();
    case M::kSumInDtype: return Api<M::kSumInDtype>();
    case M::kMinTokensOffByOne: return Api<M::kMinTokensOffByOne>();
  }
  return nullptr;
}

}  // namespace sampcert::mutants

#include "tests/mutants/penalty_mutants.h"

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

using M = PenaltyMutant;

constexpr PenaltyMutantInfo kCatalogue[] = {
    {M::kNone, "none", "the correct control"},
    {M::kStaleHistory, "stale_history",
     "the token drawn by the previous step is not yet in the history the penalties read "
     "(asynchronous scheduling: output ids appended after the next step's penalties)"},
    {M::kPromptInOutputOnly, "prompt_in_output_only",
     "presence and frequency count the prompt's tokens although the sampler declares "
     "output-only (OpenAI / vLLM semantics)"},
    {M::kSignInverted, "sign_inverted",
     "the repetition penalty divides every seen logit, so a negative logit becomes more likely "
     "(the sign rule of CTRL inverted)"},
    {M::kPenaltyInF16, "penalty_in_f16",
     "the penalized logits are computed in the model's half precision (f16)"},
    {M::kRepetitionPerOccurrence, "repetition_per_occurrence",
     "the repetition penalty applied once per occurrence (x / r^count) instead of once per "
     "token"},
};

template <PenaltyMutant kMutant>
class PenaltyMutantSampler : public ExactMutant<PenaltyMutantSampler<kMutant>> {
 public:
  static constexpr uint32_t kCapabilities =
      SAMPCERT_CAP_F32 | SAMPCERT_CAP_F16 | SAMPCERT_CAP_BF16 | SAMPCERT_CAP_MASK |
      SAMPCERT_CAP_TEMPERATURE_ZERO | SAMPCERT_CAP_PROBABILITIES | SAMPCERT_CAP_BATCH |
      SAMPCERT_CAP_PENALTIES;
  static Policies DeclaredPolicies() {
    Policies p;
    p.repetition_history = PenaltyHistory::kPromptAndOutput;
    p.additive_history = PenaltyHistory::kOutputOnly;
    return p;
  }
  static void Describe(sampcert_sampler_info* info) {
    info->name = "penalty_mutant";
    info->version = "1";
    adapters::PoliciesToInfo(DeclaredPolicies(), info);
    info->thread_safe = 1;
  }

 private:
  static constexpr bool Is(PenaltyMutant m) { return kMutant == m; }

  static std::vector<uint32_t> Counts(const RowView& row, PenaltyHistory scope) {
    std::vector<uint32_t> count(row.vocab, 0);
    std::size_t outputs = row.num_output_tokens;
    if (Is(M::kStaleHistory) && outputs > 0) --outputs;  // DEFECT: the last token not appended
    if (scope == PenaltyHistory::kPromptAndOutput) {
      for (std::size_t j = 0; j < row.num_prompt_tokens; ++j) {
        ++count[static_cast<std::size_t>(row.prompt_tokens[j])];
      }
    }
    for (std::size_t j = 0; j < outputs; ++j) {
      ++count[static_cast<std::size_t>(row.output_tokens[j])];
    }
    return count;
  }

  static void Penalize(const RowView& row, std::vector<double>& x) {
    const Policies pol = DeclaredPolicies();
    const double r = row.repetition_penalty;
    const std::vector<uint32_t> rep = Counts(row, pol.repetition_history);
    // DEFECT (kPromptInOutputOnly): the additive rule counts the prompt too.
    const std::vector<uint32_t> add = Counts(
        row, Is(M::kPromptInOutputOnly) ? PenaltyHistory::kPromptAndOutput : pol.additive_history);
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!std::isfinite(x[i])) continue;
      if (rep[i] > 0 && r != 1.0 && r != 0.0) {
        // DEFECT (kRepetitionPerOccurrence): r^count instead of r.
        const double f = Is(M::kRepetitionPerOccurrence) ? std::pow(r, rep[i]) : r;
        // DEFECT (kSignInverted): divide whatever the sign.
        x[i] = (x[i] > 0 || Is(M::kSignInverted)) ? x[i] / f : x[i] * f;
      }
      if (add[i] > 0) {
        x[i] = x[i] - static_cast<double>(row.frequency_penalty) * static_cast<double>(add[i]) -
               static_cast<double>(row.presence_penalty);
      }
      // DEFECT (kPenaltyInF16): the penalized logit stored in half precision.
      if (Is(M::kPenaltyInF16)) x[i] = static_cast<double>(Eigen::half(static_cast<float>(x[i])));
    }
  }

  friend class ExactMutant<PenaltyMutantSampler<kMutant>>;
  Error Prepare(const sampcert_batch& batch, std::size_t r) {
    const RowView row = adapters::ToRowView(batch, r);
    if (Error e = ValidateRow(row, DeclaredPolicies(), r); e.code != ErrorCode::kOk) return e;
    const std::size_t v = row.vocab;
    std::vector<double> x(v);
    for (std::size_t i = 0; i < v; ++i) {
      const bool allowed = row.mask == nullptr || row.mask[i] != 0;
      x[i] = allowed ? static_cast<double>(DecodeLogit(row.dtype, row.logits, i))
                     : -std::numeric_limits<double>::infinity();
    }
    if (row.HasPenalties()) Penalize(row, x);
    const double t = row.temperature;
    this->FromLogits(x, t, t);
    return Error{};
  }
};

template <PenaltyMutant kMutant>
const sampcert_sampler_api* Api() {
  return adapters::BuiltinApi<PenaltyMutantSampler<kMutant>>::Table();
}

}  // namespace

std::span<const PenaltyMutantInfo> PenaltyMutantCatalogue() { return kCatalogue; }

const sampcert_sampler_api* PenaltyMutantApi(PenaltyMutant mutant) {
  switch (mutant) {
    case M::kNone: return Api<M::kNone>();
    case M::kStaleHistory: return Api<M::kStaleHistory>();
    case M::kPromptInOutputOnly: return Api<M::kPromptInOutputOnly>();
    case M::kSignInverted: return Api<M::kSignInverted>();
    case M::kPenaltyInF16: return Api<M::kPenaltyInF16>();
    case M::kRepetitionPerOccurrence: return Api<M::kRepetitionPerOccurrence>();
  }
  return nullptr;
}

}  // namespace sampcert::mutants

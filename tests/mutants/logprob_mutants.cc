#include "tests/mutants/logprob_mutants.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "adapters/abi_conversions.h"
#include "adapters/builtin_adapter.h"
#include "sampcert/canonical_draw.h"
#include "sampcert/reference_distribution.h"
#include "sampcert/row_validation.h"
#include "tests/mutants/exact_mutant.h"

namespace sampcert::mutants {
namespace {

using M = LogprobMutant;
constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr LogprobMutantInfo kCatalogue[] = {
    {M::kNone, "none", "the correct control"},
    {M::kPreTemperature, "pre_temperature",
     "log-probabilities computed from the logits before the temperature while the tokens are "
     "drawn after it (an engine returning pre-temperature logprobs: an RL trainer's importance "
     "ratio off by 2.0 at T = 0.6)"},
    {M::kScaledAsProcessed, "scaled_as_processed",
     "the processed mode's values taken before top-k: not the distribution the token was drawn "
     "from, and finite on truncated tokens"},
    {M::kArgmaxLogprob, "argmax_logprob",
     "each draw returned with the log-probability of the row's most probable token (an index "
     "mix-up between the sampled ids and the gathered logprobs)"},
    {M::kTopUnmasked, "top_unmasked",
     "the top-n list ranked and valued on the raw logits, so masked tokens are listed with finite "
     "log-probabilities in the scaled and processed modes"},
};

// log-softmax of x over its finite entries (-inf elsewhere).
std::vector<double> LogSoftmax(const std::vector<double>& x) {
  double m = -kInf;
  for (double e : x) m = std::max(m, e);
  double z = 0;
  for (double e : x) z += std::isfinite(e) ? std::exp(e - m) : 0.0;
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    out[i] = std::isfinite(x[i]) ? x[i] - m - std::log(z) : -kInf;
  return out;
}

template <LogprobMutant kMutant>
class LogprobMutantSampler : public ExactMutant<LogprobMutantSampler<kMutant>> {
 public:
  static constexpr uint32_t kCapabilities =
      SAMPCERT_CAP_F32 | SAMPCERT_CAP_F16 | SAMPCERT_CAP_BF16 | SAMPCERT_CAP_MASK |
      SAMPCERT_CAP_TOP_K | SAMPCERT_CAP_PROBABILITIES | SAMPCERT_CAP_BATCH |
      SAMPCERT_CAP_LOGPROBS_RAW | SAMPCERT_CAP_LOGPROBS_SCALED | SAMPCERT_CAP_LOGPROBS_PROCESSED;
  static Policies DeclaredPolicies() { return Policies{}; }
  static void Describe(sampcert_sampler_info* info) {
    info->name = "logprob_mutant";
    info->version = "1";
    adapters::PoliciesToInfo(DeclaredPolicies(), info);
    info->thread_safe = 1;
  }

  Error Sample(const sampcert_batch& batch, uint64_t seed, uint64_t first_draw,
               uint64_t draws_per_row, int64_t* out) {
    const int32_t mode = adapters::BatchLogprobMode(batch);
    for (std::size_t r = 0; r < batch.num_rows; ++r) {
      if (Error e = Prepare(batch, r); e.code != ErrorCode::kOk) return e;
      for (uint64_t j = 0; j < draws_per_row; ++j) {
        const double u = CanonicalUniform(seed, batch.rows[r].row_id, first_draw + j);
        out[r * draws_per_row + j] = this->Token(u);
      }
      if (mode == SAMPCERT_LOGPROBS_NONE) continue;
      const std::vector<double>& lp = Logprobs(mode);
      const std::size_t top = static_cast<std::size_t>(
          std::max_element(this->p_.begin(), this->p_.end()) - this->p_.begin());
      for (uint64_t j = 0; j < draws_per_row; ++j) {
        const auto t = static_cast<std::size_t>(out[r * draws_per_row + j]);
        batch.out_logprobs[r * draws_per_row + j] =
            Is(M::kArgmaxLogprob) ? lp[top] : lp[t];  // DEFECT
      }
      const std::size_t n = static_cast<std::size_t>(batch.top_logprobs);
      // DEFECT (kTopUnmasked): ranked and valued on the raw logits.
      const std::vector<double>& rank = Is(M::kTopUnmasked) ? raw_ : lp;
      std::vector<std::size_t> order(rank.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return rank[a] > rank[b]; });
      for (std::size_t i = 0; i < n; ++i) {
        batch.out_top_tokens[r * n + i] = static_cast<int64_t>(order[i]);
        batch.out_top_logprobs[r * n + i] = rank[order[i]];
      }
    }
    return Error{};
  }

 private:
  static constexpr bool Is(LogprobMutant m) { return kMutant == m; }

  const std::vector<double>& Logprobs(int32_t mode) const {
    if (mode == SAMPCERT_LOGPROBS_RAW) return raw_;
    if (mode == SAMPCERT_LOGPROBS_SCALED) return scaled_;
    return Is(M::kScaledAsProcessed) ? scaled_ : processed_;  // DEFECT
  }

  friend class ExactMutant<LogprobMutantSampler<kMutant>>;
  Error Prepare(const sampcert_batch& batch, std::size_t r) {
    const RowView row = adapters::ToRowView(batch, r);
    if (Error e = ValidateRow(row, DeclaredPolicies(), r); e.code != ErrorCode::kOk) return e;
    const std::size_t v = row.vocab;
    std::vector<double> given(v), x(v);
    for (std::size_t i = 0; i < v; ++i) {
      given[i] = static_cast<double>(DecodeLogit(row.dtype, row.logits, i));
      x[i] = row.Allowed(i) ? given[i] : -kInf;
    }
    const double t = row.temperature;
    raw_ = LogSoftmax(given);
    // The scaled log-probabilities: x / T over the support. DEFECT (kPreTemperature): x alone.
    std::vector<double> scaled_x = x;
    if (!Is(M::kPreTemperature) && t > 0) {
      for (double& e : scaled_x) e /= t;
    }
    scaled_ = LogSoftmax(scaled_x);
    // Top-k, keep-all ties, on x (the order is the same after the temperature).
    if (row.top_k > 0 && static_cast<std::size_t>(row.top_k) < v) {
      std::vector<double> sorted = x;
      std::nth_element(sorted.begin(), sorted.begin() + (row.top_k - 1), sorted.end(),
                       std::greater<double>());
      const double kth = sorted[static_cast<std::size_t>(row.top_k - 1)];
      for (double& e : x) e = e < kth ? -kInf : e;
      for (std::size_t i = 0; i < v; ++i) scaled_x[i] = x[i] == -kInf ? -kInf : scaled_x[i];
    }
    processed_ = LogSoftmax(scaled_x);
    this->FromLogits(x, t, t);
    return Error{};
  }

  std::vector<double> raw_, scaled_, processed_;
};

template <LogprobMutant kMutant>
const sampcert_sampler_api* Api() {
  return adapters::BuiltinApi<LogprobMutantSampler<kMutant>>::Table();
}

}  // namespace

std::span<const LogprobMutantInfo> LogprobMutantCatalogue() { return kCatalogue; }

const sampcert_sampler_api* LogprobMutantApi(LogprobMutant mutant) {
  switch (mutant) {
    case M::kNone: return Api<M::kNone>();
    case M::kPreTemperature: return Api<M::kPreTemperature>();
    case M::kScaledAsProcessed: return Api<M::kScaledAsProcessed>();
    case M::kArgmaxLogprob: return Api<M::kArgmaxLogprob>();
    case M::kTopUnmasked: return Api<M::kTopUnmasked>();
  }
  return nullptr;
}

}  // namespace sampcert::mutants

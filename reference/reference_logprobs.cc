#include "sampcert/reference_logprobs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sampcert/reference_distribution.h"
#include "sampcert/sampler_abi.h"

namespace sampcert {

Expected<std::vector<long double>> ReferenceLogprobs(const RowView& row, const Policies& policies,
                                                     int32_t mode) {
  RowView r = row;
  switch (mode) {
    case SAMPCERT_LOGPROBS_RAW:
      // The logits as given: nothing of the request applies (and the row's history and bias
      // lists stay valid, though unread).
      r.mask = nullptr;
      r.packed_mask = nullptr;
      r.num_bias = 0;
      r.min_tokens = 0;
      r.repetition_penalty = 1.0f;
      r.presence_penalty = 0.0f;
      r.frequency_penalty = 0.0f;
      r.temperature = 1.0f;
      [[fallthrough]];
    case SAMPCERT_LOGPROBS_SCALED:
      r.top_k = 0;
      r.top_p = 1.0f;
      r.min_p = 0.0f;
      break;
    case SAMPCERT_LOGPROBS_PROCESSED: break;
    default:
      return Error{
          ErrorCode::kInvalidArgument,
          fmt::format("logprob mode {} is not 1 (raw), 2 (scaled) or 3 (processed)", mode)};
  }
  Expected<ReferenceDistribution> ref = ComputeReference(r, policies);
  if (!ref.ok()) return ref.error();
  if (mode == SAMPCERT_LOGPROBS_PROCESSED &&
      std::ranges::find(ref->keep, KeepClass::kMayKeep) != ref->keep.end()) {
    return Error{ErrorCode::kInvalidArgument,
                 "the row has a rounding band: a token the declaration may keep or drop has no "
                 "one processed log-probability"};
  }
  std::vector<long double> out(ref->probs.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] =
        ref->probs[i] > 0 ? std::log(ref->probs[i]) : -std::numeric_limits<long double>::infinity();
  }
  return out;
}

}  // namespace sampcert
